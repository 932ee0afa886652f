"""Hostile actions: each returns an observation inside the space with a clear
``netarena: invalid action`` message and the invalid penalty, never an exception."""
import json

import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.core.info import check_info
from netarena_gym.errors import ResetNeeded

DEEP = "[" * 1000 + "]" * 1000
DEEP_OBJ = '{"a": ' * 1000 + "1" + "}" * 1000
HOSTILE_TEXT = [DEEP, DEEP_OBJ, {"command": "x" * 10**6}, {"machine": "r0" * 10**6, "command": "ls"},
                b"\xff\xfe", None, 3.5, "x" * 10**6, {"command": "ip addr", "machine": "r0", "z": 1}]
HOSTILE_DISCRETE = [float("inf"), float("nan"), -1, 10**30, np.int64(10**18), "3", None,
                    b"1", [1, 2], 2.5]
TASKS = {"NetArena-Routing-v0": "routing", "NetArena-K8sPolicy-v0": "k8s",
         "NetArena-CapacityPlanning-v0": "capacity_planning"}


def run_one(env_id, interface, action):
    env = gym.make(env_id, interface=interface, max_steps=50).unwrapped
    try:
        env.reset(seed=0)
        obs, reward, term, trunc, info = env.step(action)
        assert env.observation_space.contains(obs)
        check_info(info, TASKS[env_id])
        return obs, info
    finally:
        env.close()


@pytest.mark.parametrize("env_id", TASKS)
@pytest.mark.parametrize("action", HOSTILE_DISCRETE, ids=repr)
def test_discrete_hostile(env_id, action):
    obs, info = run_one(env_id, "discrete", action)
    if not isinstance(action, np.int64) or action >= 10**6:
        assert info["command_kind"] == "invalid" and info["reward_components"]["invalid"] < 0


@pytest.mark.parametrize("env_id", TASKS)
@pytest.mark.parametrize("i", range(len(HOSTILE_TEXT)))
def test_text_hostile(env_id, i):
    action = HOSTILE_TEXT[i]
    obs, info = run_one(env_id, "text", action)
    ignored_key = i == 3 and env_id != "NetArena-Routing-v0"  # "machine" is routing's field
    if not (isinstance(action, dict) and "z" in action) and not ignored_key:
        assert "netarena: invalid action:" in obs and info["command_kind"] == "invalid"


def test_k8s_deep_merge_patch():
    deep = '{"a": ' * 1000 + "1" + "}" * 1000
    obs, info = run_one("NetArena-K8sPolicy-v0", "text",
                        {"command": f"kubectl patch networkpolicy x --type merge -p '{deep}'"})
    assert info["command_kind"] in ("invalid", "error")


def test_malt_deep_answer_in_text_mode():
    deep = {"tool": "answer", "answer": json.loads("[" * 500 + "]" * 500)}
    run_one("NetArena-CapacityPlanning-v0", "text", json.dumps(deep))
    run_one("NetArena-CapacityPlanning-v0", "text", '{"tool": "answer", "answer": ' + DEEP + "}")


@pytest.mark.parametrize("env_id", TASKS)
def test_step_before_reset_and_after_end_raise(env_id):
    env = gym.make(env_id, interface="discrete", max_steps=1).unwrapped
    with pytest.raises(ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    _, _, term, trunc, _ = env.step(-1)
    assert term or trunc
    with pytest.raises(ResetNeeded):
        env.step(-1)


@pytest.mark.parametrize("recursion_limit", [None, 50_000])
def test_deep_action_values_are_invalid_under_any_recursion_limit(recursion_limit):
    """Under a raised recursion limit a 1,900-deep value parsed and reached the graph; the
    depth bound makes the outcome the same in every process."""
    import sys

    before = sys.getrecursionlimit()
    if recursion_limit:
        sys.setrecursionlimit(recursion_limit)
    try:
        env = gym.make("NetArena-CapacityPlanning-v0", interface="text")
        env.reset(seed=0)
        for depth in (40, 1900):
            deep = "[" * depth + "]" * depth
            obs, reward, *_ = env.step('{"tool": "set_attr", "node": "ju1.a1.m1.s2c1.p1", '
                                       f'"kind": "EK_PORT", "key": "x", "value": {deep}}}')
            assert "nested too deeply" in obs and reward < 0
        obs, *_ = env.step('{"tool": "set_attr", "node": "ju1.a1.m1.s2c1.p1", "kind": '
                           '"EK_PORT", "key": "x", "value": [[[1]]]}')
        assert "set x of EK_PORT" in obs
    finally:
        sys.setrecursionlimit(before)
