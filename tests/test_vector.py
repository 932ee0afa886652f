"""netarena_gym.vector.async_env (and packing): the packed worker protocol returns exactly
what Gymnasium's own ``AsyncVectorEnv`` returns (observations, rewards, terminations, truncations and the stacked
``info`` with its ``_key`` masks and dtypes), for every env and interface, lean and full
``info``, across autoresets; text observations are the envs' real ones."""
import inspect

import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.core.info import LEAN_KEYS
from netarena_gym.errors import ResetNeeded
from netarena_gym.vector import (NetArenaAsyncVectorEnv, make_vec, pack_info, shares_memory,
                                 stack_packed, unpack_info)

CASES = [("NetArena-Routing-v0", "discrete"), ("NetArena-K8sPolicy-v0", "discrete"),
         ("NetArena-CapacityPlanning-v0", "discrete"), ("NetArena-Routing-v0", "text"),
         ("NetArena-K8sPolicy-v0", "text"), ("NetArena-CapacityPlanning-v0", "text")]


def assert_same(a, b, where="info"):
    """``a`` and ``b`` equal with the same structure, keys, array dtypes and shapes."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (where, set(a) ^ set(b))
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and a.shape == b.shape, (where, a.dtype, b.dtype)
        if a.dtype == object:  # e.g. ``final_obs``: each element compared as a value
            for i, (x, y) in enumerate(zip(a.ravel(), b.ravel())):
                assert_same(x, y, f"{where}[{i}]")
        else:
            assert all(x == y for x, y in zip(a.ravel().tolist(), b.ravel().tolist())), where
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    else:
        assert type(a) is type(b) and a == b, where


TEXT_ACTIONS = ('{"command": "bogus"}', "not json", "")


def actions(interface, masks, rng):
    """Random valid indices for the discrete interface; for text, random picks of malformed
    and unknown commands (the catalogue's text differs per env and episode)."""
    if interface == "discrete":
        return (rng.random(masks.shape) * masks).argmax(axis=1)
    return [TEXT_ACTIONS[int(i)] for i in rng.integers(len(TEXT_ACTIONS), size=len(masks))]


@pytest.mark.parametrize("info_mode", ["lean", "full"])
@pytest.mark.parametrize("env_id,interface", CASES)
def test_packed_vector_env_equals_gymnasiums(env_id, interface, info_mode):
    """Side by side with ``gymnasium.vector.AsyncVectorEnv`` (its own worker; shared memory
    for array observations, the pipe for text, whose shared memory Gymnasium does not
    read back), same seeds and actions, ``max_steps=3`` so several autoresets happen."""
    def make():
        return gym.make(env_id, interface=interface, info=info_mode, max_steps=3)
    ref = gym.vector.AsyncVectorEnv([make, make], shared_memory=interface == "discrete")
    ours = NetArenaAsyncVectorEnv([make, make])
    rng = np.random.default_rng(0)
    try:
        assert ours.shared_memory is (interface == "discrete")
        o1, i1 = ref.reset(seed=[7, 8])
        o2, i2 = ours.reset(seed=[7, 8])
        assert_same(o1, o2, "obs")
        assert_same(i1, i2)
        ends = 0
        for _ in range(14):
            acts = actions(interface, i1["action_mask"], rng)
            r1, r2 = ref.step(acts), ours.step(acts)
            for name, a, b in zip(("obs", "reward", "terminated", "truncated", "info"), r1, r2):
                assert_same(a, b, name)
            if interface == "text":
                assert len(r2[0][0]) > 0 and not set(r2[0][0]) <= {"0"}
            ends += int(np.sum(r1[2] | r1[3]))
            o1, i1 = r1[0], r1[4]
        assert ends >= 4
    finally:
        ref.close()
        ours.close()


def async_env(env_id, n=2, **kwargs):
    """A :class:`NetArenaAsyncVectorEnv` of ``n`` lean envs; ``vector`` kwargs go to it."""
    vector = kwargs.pop("vector", {})
    return NetArenaAsyncVectorEnv([lambda: gym.make(env_id, info="lean", **kwargs)] * n,
                                  **vector)


@pytest.mark.parametrize("build", ["async", "make_vec"])
def test_text_observations_are_the_single_envs(build):
    """Text observations with ``shared_memory=True`` are what two single envs give (they go
    through the pipe: Gymnasium's ``Text`` shared memory is decoded once, when built)."""
    make = async_env if build == "async" else make_vec
    envs = make("NetArena-Routing-v0", 2, interface="text", max_steps=3)
    singles = [gym.make("NetArena-Routing-v0", interface="text", info="lean", max_steps=3)
               for _ in range(2)]
    try:
        assert envs.shared_memory is False
        obs, _ = envs.reset(seed=[1, 2])
        assert list(obs) == [s.reset(seed=k)[0] for s, k in zip(singles, (1, 2))]
        act = '{"command": "bogus"}'
        obs, *_ = envs.step([act, act])
        assert list(obs) == [s.step(act)[0] for s in singles]
    finally:
        envs.close()
        for s in singles:
            s.close()


def test_make_vec_is_batched_with_lean_info_and_shared_memory():
    envs = make_vec("NetArena-K8sPolicy-v0", 4, workers=2, interface="discrete", max_steps=50)
    try:
        assert isinstance(envs, gym.vector.VectorEnv) and envs.num_envs == 4
        assert envs.shared_memory and len(envs.processes) == 2
        _, info = envs.reset(seed=0)
        _, _, term, trunc, info = envs.step(info["action_mask"].argmax(axis=1))
        assert not (term | trunc).any()
        assert {k for k in info if not k.startswith("_")} == set(LEAN_KEYS)
        assert info["action_mask"].shape == (4, envs.single_action_space.n)
    finally:
        envs.close()


def test_pack_unpack_round_trip_and_fallbacks():
    env = gym.make("NetArena-CapacityPlanning-v0", interface="discrete")
    _, info = env.reset(seed=0)
    packed, rest = pack_info(info)
    assert set(rest) == set(info) - set(LEAN_KEYS)
    back = unpack_info(packed, rest)
    assert_same(info, back)
    assert back["action_mask"].flags.writeable
    assert pack_info({"other": 1}) == (None, {"other": 1})
    other = dict(info, reward_components={"x": 0.0})
    assert stack_packed([packed, pack_info(other)[0]]) is None  # names differ
    env.close()


def test_mixed_infos_fall_back_to_gymnasiums_stacking():
    """An env whose info lacks the lean keys beside one that has them: stacked key by key
    as Gymnasium does (``_key`` masks False where an env lacks a key)."""
    envs = NetArenaAsyncVectorEnv([lambda: gym.make("NetArena-K8sPolicy-v0", interface="discrete"),
                                   lambda: _Plain(gym.make("NetArena-K8sPolicy-v0",
                                                           interface="discrete"))])
    try:
        envs.reset(seed=0)
        _, _, _, _, info = envs.step(np.array([0, 0]))
        assert list(info["_correct"]) == [True, False] and list(info["_only"]) == [False, True]
    finally:
        envs.close()


class _Plain(gym.Wrapper):
    def step(self, action):
        obs, r, term, trunc, _ = self.env.step(action)
        return obs, r, term, trunc, {"only": 1}


def test_worker_errors_reach_the_main_process():
    envs = async_env("NetArena-Routing-v0", interface="discrete", max_steps=2,
                     vector={"autoreset_mode": "Disabled"})
    try:
        envs.reset(seed=0)
        for _ in range(2):
            envs.step(np.array([0, 0]))
        with pytest.raises(ResetNeeded):
            envs.step(np.array([0, 0]))
    finally:
        envs.close()


def test_same_step_autoreset_uses_gymnasiums_worker():
    envs = async_env("NetArena-Routing-v0", interface="discrete", max_steps=1,
                     vector={"autoreset_mode": "SameStep"})
    try:
        envs.reset(seed=0)
        _, _, _, trunc, info = envs.step(np.array([0, 0]))
        assert trunc.all() and "final_info" in info
    finally:
        envs.close()


def test_shares_memory():
    assert shares_memory(gym.make("NetArena-Routing-v0", interface="discrete").observation_space)
    assert not shares_memory(gym.make("NetArena-Routing-v0", interface="text").observation_space)


@pytest.mark.skipif("max_concurrency" not in
                    inspect.signature(gym.vector.AsyncVectorEnv.__init__).parameters,
                    reason="this Gymnasium's AsyncVectorEnv has no max_concurrency")
def test_max_concurrency_one_steps_the_same():
    """``max_concurrency=1`` (Gymnasium's semaphore, one env stepping at a time) changes
    when the workers run, not what they return."""
    runs = []
    for limit in (None, 1):
        envs = async_env("NetArena-CapacityPlanning-v0", interface="discrete", max_steps=3,
                         vector={"max_concurrency": limit})
        try:
            out = [envs.reset(seed=[3, 4])]
            for _ in range(5):
                out.append(envs.step(out[-1][-1]["action_mask"].argmax(axis=1)))
            runs.append(out)
        finally:
            envs.close()
    for a, b in zip(*runs):
        for x, y in zip(a, b):
            assert_same(x, y)


@pytest.mark.parametrize("interface,shared", [("text", True), ("discrete", False),
                                              ("discrete", True)])
def test_a_partial_reset_returns_the_others_last_observation_as_gymnasiums(interface, shared):
    """``reset(options={"reset_mask": ...})``: the envs not reset keep their last
    observation (a ``reset-noop`` worker sends it back when observations use the pipe, as
    Gymnasium's worker does; it sent None: NoneType text observations, and a TypeError for
    a discrete Dict without shared memory)."""
    def make():
        return gym.make("NetArena-Routing-v0", interface=interface, info="lean", max_steps=4)
    ref = gym.vector.AsyncVectorEnv([make] * 3, shared_memory=shared and interface != "text")
    ours = NetArenaAsyncVectorEnv([make] * 3, shared_memory=shared)
    rng = np.random.default_rng(1)
    try:
        r1, r2 = ref.reset(seed=0), ours.reset(seed=0)
        for t in range(3):
            acts = actions(interface, r1[-1]["action_mask"], rng)
            r1, r2 = ref.step(acts), ours.step(acts)
            mask = np.array([t == 0, t == 1, True])
            r1 = ref.reset(seed=5 + t, options={"reset_mask": mask})
            r2 = ours.reset(seed=5 + t, options={"reset_mask": mask})
            assert_same(r1[0], r2[0], f"obs after partial reset {t}")
            assert_same(r1[1], r2[1], f"info after partial reset {t}")
        if interface == "text":
            assert all(isinstance(o, str) and o for o in r2[0])
    finally:
        ref.close()
        ours.close(terminate=True)  # a failed reset_wait leaves it waiting: do not hang
