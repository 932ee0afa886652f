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
