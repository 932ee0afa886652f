import json

import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.core.info import INFO_KEYS, LEAN_KEYS, check_info
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


# ----------------------------------------------------------------- info="lean"
LEAN_CASES = [("NetArena-Routing-v0", "routing", "discrete"),
              ("NetArena-Routing-v0", "routing", "text"),
              ("NetArena-K8sPolicy-v0", "k8s", "discrete"),
              ("NetArena-K8sPolicy-v0", "k8s", "text"),
              ("NetArena-CapacityPlanning-v0", "capacity_planning", "discrete"),
              ("NetArena-CapacityPlanning-v0", "capacity_planning", "text")]


def same_value(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


def random_action(env, info, rng):
    """A random valid catalogue entry (as the text action on text interfaces), or now and
    then an invalid one."""
    valid = np.flatnonzero(info["action_mask"])
    if rng.random() < 0.1 or not len(valid):
        return 10**6 if env.interface == "discrete" else '{"command": "bogus"}'
    idx = int(valid[rng.integers(len(valid))])
    return idx if env.interface == "discrete" else env.catalogue.entries[idx].action


@pytest.mark.parametrize("env_id,task,interface", LEAN_CASES)
def test_lean_and_full_info_agree_on_every_shared_key(env_id, task, interface):
    """Random episodes played alike in both modes: the same observations and rewards; at
    reset and on the step that ends an episode the same full info; on the other steps
    lean info is exactly LEAN_KEYS, each equal (value and type) to the full info's."""
    full = gym.make(env_id, interface=interface, max_steps=6).unwrapped
    lean = gym.make(env_id, interface=interface, max_steps=6, info="lean").unwrapped
    assert (full.info_mode, lean.info_mode) == ("full", "lean")
    rng = np.random.default_rng(0)
    kinds, ends, mid = set(), 0, 0
    for episode in range(6):
        (_, fi), (_, li) = full.reset(seed=episode), lean.reset(seed=episode)
        check_info(li, task, "lean")
        assert list(li) == list(fi) == list(INFO_KEYS)
        assert all(same_value(fi[k], li[k]) for k in INFO_KEYS)
        done = False
        while not done:
            a = random_action(full, fi, rng)
            fo, fr, ft, ftr, fi = full.step(a)
            lo, lr, lt, ltr, li = lean.step(a)
            assert (fr, ft, ftr) == (lr, lt, ltr)
            assert (fo == lo if isinstance(fo, str)
                    else all(np.array_equal(fo[k], lo[k]) for k in fo) and fo.keys() == lo.keys())
            check_info(fi, task)
            check_info(li, task, "lean")
            done = ft or ftr
            kinds.add(fi["command_kind"])
            if done:
                ends += 1
                assert list(li) == list(INFO_KEYS)
            else:
                mid += 1
                assert list(li) == list(LEAN_KEYS)
            assert all(same_value(fi[k], li[k]) for k in li), [k for k in li
                                                               if not same_value(fi[k], li[k])]
    assert ends == 6 and mid > 0 and len(kinds) >= 2


def test_check_info_lean_mode():
    env = gym.make("NetArena-K8sPolicy-v0", interface="discrete", info="lean").unwrapped
    _, info = env.reset(seed=0)
    check_info(info, "k8s", "lean")  # a full info is a valid lean info
    lean = {k: info[k] for k in LEAN_KEYS}
    check_info(lean, "k8s", "lean")
    with pytest.raises(NetArenaError, match="missing"):
        check_info(lean, "k8s")  # ... but not a valid full one
    with pytest.raises(NetArenaError, match="missing"):
        check_info(dict(lean, scenario=info["scenario"]), "k8s", "lean")  # all or none
    with pytest.raises(NetArenaError, match="LEAN_KEYS: missing \\['cost'\\]"):
        check_info({k: v for k, v in lean.items() if k != "cost"}, "k8s", "lean")
    with pytest.raises(NetArenaError, match="info mode"):
        check_info(info, "k8s", "short")


def test_info_option_is_checked_and_in_every_config():
    from netarena_gym.capacity_planning.env import CapacityPlanningEnv
    from netarena_gym.errors import InvalidConfig
    from netarena_gym.k8s.env import K8sPolicyEnv
    from netarena_gym.routing.env import RoutingEnv
    for cls in (RoutingEnv, K8sPolicyEnv, CapacityPlanningEnv):
        assert "info" in cls.config_class.field_names()
        env = cls.from_config({"info": "lean", "interface": "discrete"})
        assert env.info_mode == "lean" and env.config.info == "lean"
        assert cls.from_config({"interface": "discrete"}).info_mode == "full"
        with pytest.raises(InvalidConfig, match="info must be one of"):
            cls(info="short")


@pytest.mark.parametrize("env_id", ["NetArena-Routing-v0", "NetArena-K8sPolicy-v0",
                                    "NetArena-CapacityPlanning-v0"])
def test_full_info_scenario_is_a_fresh_plain_record_every_step(env_id):
    """Callers may mutate ``info["scenario"]``: the next step's record is unchanged, and
    it is the JSON form of the scenario (lists, not tuples) that replays the episode."""
    env = gym.make(env_id, interface="discrete").unwrapped
    _, info = env.reset(seed=4)
    want = json.loads(json.dumps(env._scenario_record(env.scenario)))
    assert info["scenario"] == want and isinstance(info["scenario"]["faults"], list)
    info["scenario"]["faults"].append({"mutated": True})
    info["scenario"]["params"]["x"] = 1
    _, _, _, _, info2 = env.step(0)
    assert info2["scenario"] == want and info2["scenario"] is not info["scenario"]
    assert info2["scenario"]["params"] is not info["scenario"]["params"]
    _, again = env.reset(options={"scenario": info2["scenario"]})
    assert again["scenario"] == want


@pytest.mark.parametrize("env_id", ["NetArena-Routing-v0", "NetArena-K8sPolicy-v0",
                                    "NetArena-CapacityPlanning-v0"])
def test_lean_envs_pass_the_env_kit(env_id):
    """The shipped kit (Gymnasium's checker, determinism, replay from the reset's
    scenario record, the info schema in lean mode, hostile steps, vector envs)."""
    from netarena_gym.testing import check_netarena_env
    check_netarena_env(env_id, interface="discrete", info="lean", steps=200, vector_steps=200)
