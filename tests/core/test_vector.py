"""Sync and async vector envs with next-step autoreset, over several episodes, for every
env id and interface: the ``info`` schema must keep its keys and types across resets."""
import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401  (registers the ids)
from netarena_gym.core.info import INFO_KEYS

CASES = [("NetArena-Routing-v0", "text"), ("NetArena-Routing-v0", "discrete"),
         ("NetArena-K8sPolicy-v0", "text"), ("NetArena-K8sPolicy-v0", "discrete"),
         ("NetArena-CapacityPlanning-v0", "text"), ("NetArena-CapacityPlanning-v0", "discrete"),
         ("NetArena-CapacityPlanning-v0", "code")]


def random_actions(envs, interface, rng, n):
    if interface == "discrete":
        return rng.integers(0, envs.single_action_space.n, size=n)
    if interface == "code":
        return ["def process_graph(graph):\n    return {'type': 'text', 'data': 'x'}"] * n
    return ['{"command": "bogus"}'] * n


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("env_id,interface", CASES)
def test_vector_env_runs_300_steps_with_autoreset(env_id, interface, mode):
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, interface=interface,
                        max_steps=3)
    rng = np.random.default_rng(0)
    try:
        _, info = envs.reset(seed=1)
        assert set(INFO_KEYS) <= set(info)
        episodes = 0
        steps = 300 if interface != "code" else 40
        for _ in range(steps):
            _, _, term, trunc, info = envs.step(random_actions(envs, interface, rng, 2))
            episodes += int(np.sum(term | trunc))
            assert set(INFO_KEYS) <= set(info)
        assert episodes >= 2
    finally:
        envs.close()


@pytest.mark.parametrize("env_id", ["NetArena-Routing-v0", "NetArena-K8sPolicy-v0",
                                    "NetArena-CapacityPlanning-v0"])
def test_async_shared_memory_matches_single_envs(env_id):
    """``AsyncVectorEnv`` with 2 workers and ``shared_memory=True`` over the discrete
    interface: the arrays that come through shared memory equal those of two single envs
    seeded alike and given the same actions (until one of them ends its episode)."""
    make = lambda: gym.make(env_id, interface="discrete")  # noqa: E731
    envs = gym.vector.AsyncVectorEnv([make, make], shared_memory=True)
    singles = [make(), make()]
    try:
        obs, info = envs.reset(seed=[5, 6])
        ref = [e.reset(seed=s) for e, s in zip(singles, (5, 6))]
        rng = np.random.default_rng(0)
        for _ in range(4):
            for i, (o, _) in enumerate(ref):
                for k, v in o.items():
                    assert np.array_equal(obs[k][i], v), (k, i)
            acts = [int(rng.choice(np.flatnonzero(ref[i][1]["action_mask"]))) for i in range(2)]
            obs, rew, term, trunc, info = envs.step(np.array(acts))
            ref = []
            for i, e in enumerate(singles):
                o, r, t, tr, inf = e.step(acts[i])
                assert rew[i] == r and term[i] == t and trunc[i] == tr
                ref.append((o, inf))
            if (term | trunc).any():
                break
    finally:
        envs.close()
        for e in singles:
            e.close()


TASKS = {"NetArena-Routing-v0": "routing", "NetArena-K8sPolicy-v0": "k8s",
         "NetArena-CapacityPlanning-v0": "capacity_planning"}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("env_id", list(TASKS))
def test_lean_info_stacks_in_vector_envs(env_id, mode):
    """``info="lean"`` in a vector env with next-step autoreset: the lean keys come from
    every env at every step, stacked with their types; the episode keys (scenario, extra,
    counters) exactly from the envs that ended their episode on this step or were reset
    on it."""
    from netarena_gym.core.info import EPISODE_KEYS, LEAN_KEYS
    envs = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, interface="discrete",
                        max_steps=4, info="lean", vector_kwargs={"shared_memory": True}
                        if mode == "async" else None)
    rng = np.random.default_rng(0)
    try:
        _, info = envs.reset(seed=[3, 4])
        assert set(INFO_KEYS) <= set(info) and info["_scenario"].all()
        assert info["action_mask"].dtype == np.int8 and info["cost"].dtype == float
        ended = np.zeros(2, dtype=bool)
        seen = 0
        for _ in range(40):
            masks = info["action_mask"]
            acts = (rng.random(masks.shape) * masks).argmax(axis=1)
            _, _, term, trunc, info = envs.step(acts)
            for k in LEAN_KEYS:
                assert info[f"_{k}"].all(), k
            assert set(info["reward_components"]) >= {"success", "safety", "step"}
            assert info["reward_components"]["step"].dtype == float
            assert info["command_kind"].dtype == object
            boundary = (term | trunc) | ended  # ended now, or reset now (next-step autoreset)
            has = info.get("_scenario", np.zeros(2, dtype=bool))
            assert np.array_equal(has, boundary)
            for k in EPISODE_KEYS:
                assert np.array_equal(info.get(f"_{k}", np.zeros(2, dtype=bool)), boundary), k
            for i in np.flatnonzero(boundary):
                assert info["scenario"]["task"][i] == TASKS[env_id]
                assert info["scenario"]["faults"][i] and isinstance(info["extra"], dict)
            seen += int(boundary.sum())
            ended = term | trunc
        assert seen >= 4
    finally:
        envs.close()
