"""The kit's cost check: ``info["cost"]`` is held to Safety-Gymnasium's meaning on every
registered env and interface, and an env that reports it wrongly fails the kit."""
from __future__ import annotations

import gymnasium as gym
import pytest

from netarena_gym.testing import KitFailure, check_cost, check_info_schema
from tests.testing.test_registered_envs import CONFIGS
from tests.testing.toy_task import ToyLightsEnv


@pytest.mark.parametrize("env_id,kwargs", CONFIGS,
                         ids=[f"{e.split('-')[1]}-{k['level']}-{k['interface']}" for e, k in CONFIGS])
def test_cost_at_every_step_of_every_env(env_id, kwargs):
    check_info_schema(lambda **o: gym.make(env_id, **{**kwargs, **o}), steps=120)


def test_routing_steps_do_cost_something():
    """Not vacuous: random catalogue steps on routing break pairs, and cost counts them."""
    env = gym.make("NetArena-Routing-v0", level=1, interface="discrete")
    _, info = env.reset(seed=4)
    costs = []
    import numpy as np
    rng = np.random.default_rng(0)
    for _ in range(60):
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        check_cost(info, "step")
        costs.append(info["cost"])
        if term or trunc:
            _, info = env.reset()
    assert max(costs) > 0


class NegativeCost(ToyLightsEnv):
    def _info(self, result, comps, newly):
        info = super()._info(result, comps, newly)
        info["cost"] = -1.0
        return info


class CostWithoutNewlyBroken(ToyLightsEnv):
    def _info(self, result, comps, newly):
        info = super()._info(result, comps, newly)
        info["cost"] = float(newly) + 1.0
        return info


@pytest.mark.parametrize("cls,match", [(NegativeCost, "finite count >= 0"),
                                       (CostWithoutNewlyBroken, "newly_broken")])
def test_the_kit_catches_a_wrong_cost(cls, match):
    with pytest.raises(KitFailure, match=match):
        check_info_schema(lambda **o: cls(level=2, **o), steps=20)
