import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.core.info import INFO_KEYS, check_info
from netarena_gym.errors import NetArenaError

CASES = [("NetArena-Routing-v0", "routing", "text"), ("NetArena-K8sPolicy-v0", "k8s", "discrete"),
         ("NetArena-CapacityPlanning-v0", "capacity_planning", "text")]


@pytest.mark.parametrize("env_id,task,interface", CASES)
def test_same_keys_and_types_at_reset_and_step(env_id, task, interface):
    env = gym.make(env_id, interface=interface).unwrapped
    _, info0 = env.reset(seed=0)
    check_info(info0, task)
    assert info0["command_kind"] == "none" and info0["command_status"] == -1
    assert all(v == 0.0 and str(v) == "0.0" for v in info0["reward_components"].values())
    _, _, _, _, info1 = env.step(0 if interface == "discrete" else "{}")
    check_info(info1, task)
    assert list(info0) == list(INFO_KEYS) == list(info1)
    assert info0["reward_components"].keys() == info1["reward_components"].keys()
    assert info1["scenario"] == info0["scenario"]


def test_malt_info_has_no_answer_before_the_end():
    env = gym.make("NetArena-CapacityPlanning-v0", interface="text").unwrapped
    _, info = env.reset(seed=0)
    from netarena_gym.capacity_planning.grader import UNGRADED
    assert info["extra"]["verdict"] == UNGRADED and not info["extra"]["verdict"]["graded"]
    assert "answer" not in info["scenario"]["faults"][0]


def test_check_info_names_the_bad_key():
    env = gym.make("NetArena-Routing-v0").unwrapped
    _, info = env.reset(seed=0)
    bad = dict(info, command_status=None)
    with pytest.raises(NetArenaError, match="command_status"):
        check_info(bad)
    with pytest.raises(NetArenaError, match="missing \\['cost'\\]"):
        check_info({k: v for k, v in info.items() if k != "cost"})
