"""netarena_gym.vector.batched: several envs per worker return exactly what
``gymnasium.vector.SyncVectorEnv`` returns over the same env fns and seeds (observations,
rewards, flags, the stacked ``info`` with ``_key`` masks and dtypes) on every task and
interface, lean and full ``info``, through autoresets of every mode and partial resets;
worker errors reach the main process; ``close()`` ends the workers."""
import multiprocessing

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ClosedEnvironmentError

import netarena_gym  # noqa: F401
from netarena_gym.errors import InvalidConfig, NetArenaError, ResetNeeded
from netarena_gym.vector import NetArenaBatchedVectorEnv, make_vec
from netarena_gym.vector.batched import default_workers, slices
from tests.test_vector import CASES, actions, assert_same


def run_side_by_side(make, n=3, workers=2, steps=10, seed=7, mode="NextStep", reset_mask=None):
    """Step a SyncVectorEnv and a batched env of ``n`` envs over ``workers`` side by side
    with the same seeds and actions; returns how many episodes ended."""
    ref = gym.vector.SyncVectorEnv([make] * n, autoreset_mode=mode)
    ours = NetArenaBatchedVectorEnv([make] * n, workers=workers, autoreset_mode=mode)
    rng = np.random.default_rng(0)
    interface = ref.envs[0].unwrapped.interface
    ends = 0
    try:
        assert len(ours.processes) == workers
        r1, r2 = ref.reset(seed=seed), ours.reset(seed=seed)
        for t in range(steps):
            for name, a, b in zip(("obs", "reward", "terminated", "truncated", "info"), r1, r2):
                assert_same(a, b, f"{name} at {t}")
            info = r1[-1]
            if reset_mask is not None and t == steps // 2:
                opts = {"reset_mask": reset_mask}
                r1 = ref.reset(seed=seed + 100, options=dict(opts))
                r2 = ours.reset(seed=seed + 100, options=dict(opts))
                continue
            acts = actions(interface, info["action_mask"], rng)
            r1, r2 = ref.step(acts), ours.step(acts)
            ends += int(np.sum(r1[2] | r1[3]))
        if interface == "text":
            assert len(r2[0][0]) > 0
    finally:
        ref.close()
        ours.close()
    return ends


@pytest.mark.parametrize("info_mode", ["lean", "full"])
@pytest.mark.parametrize("env_id,interface", CASES)
def test_batched_equals_sync_vector_env(env_id, interface, info_mode):
    """3 envs over 2 workers (slices of 2 and 1), ``max_steps=3`` so every env autoresets
    several times within the 10 steps."""
    def make():
        return gym.make(env_id, interface=interface, info=info_mode, max_steps=3)
    assert run_side_by_side(make) >= 6


@pytest.mark.parametrize("mode", ["SameStep", "Disabled"])
def test_other_autoreset_modes_equal_sync(mode):
    """``SameStep`` (``final_obs`` / ``final_info`` stacked) and ``Disabled`` (the caller
    resets, here every env after its one-step episode, with ``reset_mask``) as
    SyncVectorEnv gives them."""
    limit = 2 if mode == "SameStep" else 1

    def make():
        return gym.make("NetArena-Routing-v0", interface="discrete", info="lean",
                        max_steps=limit)
    if mode == "SameStep":
        assert run_side_by_side(make, n=4, steps=5, mode=mode) >= 8
    else:
        assert run_side_by_side(make, n=4, steps=3, mode=mode,
                                reset_mask=np.ones(4, dtype=np.bool_)) == 8


def test_partial_reset_mask_equals_sync():
    """``options["reset_mask"]`` resets only the marked envs (text: the pipe keeps the
    others' last observations), then stepping goes on as in SyncVectorEnv."""
    def make():
        return gym.make("NetArena-K8sPolicy-v0", interface="text", info="lean", max_steps=4)
    run_side_by_side(make, n=3, steps=6, reset_mask=np.array([False, True, False]))


def test_gym_make_vec_defaults_to_the_batched_env_with_full_info():
    """Registered as the ``vector_entry_point``: ``gym.make_vec``'s default mode gives the
    batched env, returning what ``vectorization_mode="sync"`` returns (``info="full"``)."""
    envs = gym.make_vec("NetArena-CapacityPlanning-v0", num_envs=3, interface="discrete",
                        max_steps=2, workers=2)
    ref = gym.make_vec("NetArena-CapacityPlanning-v0", num_envs=3, vectorization_mode="sync",
                       interface="discrete", max_steps=2)
    try:
        assert isinstance(envs, NetArenaBatchedVectorEnv) and envs.workers == 2
        assert envs.spec.kwargs["vectorization_mode"] == "vector_entry_point"
        assert envs.metadata["autoreset_mode"] == ref.metadata["autoreset_mode"]
        r1, r2 = ref.reset(seed=3), envs.reset(seed=3)
        for _ in range(3):
            assert_same(r1, r2)
            acts = r1[-1]["action_mask"].argmax(axis=1)
            r1, r2 = ref.step(acts), envs.step(acts)
        assert "scenario" in r2[-1] and r2[-1]["_scenario"].all()  # full info at every step
    finally:
        envs.close()
        ref.close()


def test_call_get_attr_set_attr_and_spaces():
    envs = make_vec("NetArena-Routing-v0", 3, workers=2, interface="discrete")
    try:
        assert envs.single_action_space == gym.make("NetArena-Routing-v0",
                                                    interface="discrete").action_space
        assert envs.action_space.shape == (3,)
        envs.set_attr("probe_value", [1, 2, 3])
        assert envs.get_attr("probe_value") == (1, 2, 3)
        envs.set_attr("probe_value", 9)
        assert envs.call("probe_value") == (9, 9, 9)
        with pytest.raises(ValueError):
            envs.set_attr("probe_value", [1, 2])
        envs.reset(seed=0)
        envs.step((0, 1, 2))  # a sequence as well as an array
        with pytest.raises(ValueError, match="2 actions for 3 envs"):
            envs.step(np.zeros(2, dtype=np.int64))
    finally:
        envs.close()
    with pytest.raises(ClosedEnvironmentError):
        envs.step(np.zeros(3, dtype=np.int64))


class _Broken(gym.Wrapper):
    """Raises on the step after ``after`` steps."""

    def __init__(self, env, after=1):
        super().__init__(env)
        self.after = after

    def step(self, action):
        self.after -= 1
        if self.after < 0:
            raise KeyError("broken on purpose")
        return self.env.step(action)


def test_worker_errors_reach_the_main_process_and_close_the_workers():
    good = lambda: gym.make("NetArena-Routing-v0", interface="discrete")  # noqa: E731
    envs = NetArenaBatchedVectorEnv([good, good, lambda: _Broken(good())], workers=2)
    envs.reset(seed=0)
    envs.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(KeyError, match="broken on purpose"):
        envs.step(np.zeros(3, dtype=np.int64))
    assert envs.closed and not any(p.is_alive() for p in envs.processes)
    with pytest.raises(ClosedEnvironmentError):
        envs.reset()


def test_env_errors_keep_their_type():
    """``Disabled`` autoreset: stepping past the episode's end raises the env's own
    ``ResetNeeded`` in the main process."""
    envs = make_vec("NetArena-Routing-v0", 4, workers=2, interface="discrete", max_steps=1,
                    vector_kwargs={"autoreset_mode": "Disabled"})
    envs.reset(seed=0)
    envs.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(ResetNeeded):
        envs.step(np.zeros(4, dtype=np.int64))
    assert not any(p.is_alive() for p in envs.processes)


def test_constructor_errors_and_a_dead_worker_raise_instead_of_hanging():
    def bad():
        return gym.make("NetArena-Routing-v0", level=99)
    before = set(multiprocessing.active_children())
    with pytest.raises(InvalidConfig, match="level must be one of"):  # raised in worker 1
        NetArenaBatchedVectorEnv([lambda: gym.make("NetArena-Routing-v0"), bad], workers=2)
    assert set(multiprocessing.active_children()) == before
    envs = make_vec("NetArena-K8sPolicy-v0", 2, workers=2, interface="discrete")
    envs.reset(seed=0)
    envs.processes[1].kill()
    envs.processes[1].join()
    with pytest.raises(NetArenaError, match="exited"):
        envs.step(np.zeros(2, dtype=np.int64))
    assert not any(p.is_alive() for p in envs.processes)


def test_close_ends_every_worker():
    before = set(multiprocessing.active_children())
    envs = make_vec("NetArena-CapacityPlanning-v0", 5, workers=2, interface="discrete")
    started = set(envs.processes)
    assert started <= set(multiprocessing.active_children())
    envs.reset(seed=0)
    envs.close()
    assert all(p.exitcode == 0 for p in started)
    assert set(multiprocessing.active_children()) == before
    envs.close()  # a second close does nothing


def test_workers_option():
    assert slices(5, 2) == [(0, 2), (2, 5)] and slices(4, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert default_workers(1) == 1 and 1 <= default_workers(64) <= 64
    with pytest.raises(InvalidConfig):
        make_vec("NetArena-Routing-v0", 2, workers=3)
