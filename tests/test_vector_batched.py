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


def test_step_infos_are_the_unstacked_sync_infos():
    """``step_infos`` gives each env's own ``info`` dict (lean keys rebuilt from the column
    pack plus the rest) and, under ``SameStep``, the final observation and info of each
    env whose episode ended: what SyncVectorEnv's envs returned, env by env."""
    def make():
        return gym.make("NetArena-Routing-v0", interface="discrete", info="lean", max_steps=2)
    n = 3
    refs = [make() for _ in range(n)]
    ours = NetArenaBatchedVectorEnv([make] * n, workers=2, autoreset_mode="SameStep")
    try:
        ours.reset(seed=4)
        last = [env.reset(seed=4 + i) for i, env in enumerate(refs)]
        ended = 0
        for t in range(5):
            acts = np.array([int(np.flatnonzero(info["action_mask"])[t % 2]) for _, info in last])
            obs, rewards, terms, truncs, infos, finals = ours.step_infos(acts)
            expect_finals = []
            for i, env in enumerate(refs):
                o, r, term, trunc, info = env.step(acts[i])
                assert (rewards[i], terms[i], truncs[i]) == (r, term, trunc)
                if term or trunc:
                    expect_finals.append((i, o, info))
                    o, info = env.reset()
                assert_same({k: v[i] for k, v in obs.items()}, o, f"obs {i} at {t}")
                assert_same(infos[i], info, f"info {i} at {t}")
                last[i] = (o, info)
            assert [f[0] for f in finals] == [f[0] for f in expect_finals]
            for (_, o1, i1), (_, o2, i2) in zip(finals, expect_finals):
                assert_same(o1, o2, "final obs")
                assert_same(i1, i2, "final info")
            ended += len(finals)
        assert ended >= 6
    finally:
        ours.close()


def _tag(env, factor):
    """A picklable callable for ``apply``: the env's max_steps times ``factor``."""
    return env.unwrapped.max_steps * factor


def test_apply_runs_in_the_workers_of_the_envs_asked_for():
    """``apply(fn, indices)`` runs ``fn`` on those envs only, in their order, across
    workers; an error ``fn`` raises reaches the caller and leaves the env open;
    out-of-range indices raise ``IndexError`` before anything is sent."""
    import functools
    from netarena_gym.vector.batched_worker import call_attr, get_attr, set_attr
    envs = make_vec("NetArena-Routing-v0", 5, workers=2, interface="discrete")
    try:
        envs.apply(functools.partial(set_attr, name="probe_value", value=7), [4, 0])
        assert envs.apply(functools.partial(get_attr, name="probe_value"), [0, 4]) == (7, 7)
        with pytest.raises(AttributeError, match="probe_value"):  # the caller's error:
            envs.apply(functools.partial(get_attr, name="probe_value"), [1])
        assert not envs.closed  # the workers serve on
        assert envs.apply(functools.partial(_tag, factor=2), [3, 1]) == (2 * 15, 2 * 15)
        envs.reset(seed=0)
        masks = envs.apply(functools.partial(call_attr, name="action_masks"), [2])
        assert masks[0].dtype == np.bool_ and masks[0].any()
        with pytest.raises(IndexError):
            envs.apply(functools.partial(_tag, factor=1), [5])
        assert not envs.closed
    finally:
        envs.close()


def test_an_object_array_of_actions_steps_as_in_sync():
    """Its bytes (pointers) were sent to the worker: ValueError, and the vector env closed."""
    v = make_vec("NetArena-K8sPolicy-v0", num_envs=2, workers=1, interface="discrete")
    s = gym.make_vec("NetArena-K8sPolicy-v0", num_envs=2, vectorization_mode="sync",
                     interface="discrete")
    try:
        v.reset(seed=0)
        s.reset(seed=0)
        got = v.step(np.array([0, 5], dtype=object))
        want = s.step(np.array([0, 5], dtype=object))
        assert not v.closed and list(got[4]["command_kind"]) == list(want[4]["command_kind"])
        assert np.array_equal(got[1], want[1])
    finally:
        v.close()
        s.close()
