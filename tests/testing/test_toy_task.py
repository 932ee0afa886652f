"""The toy task, built from the core protocols alone, passes the kit, and its expert works
through the one episode loop (so the kit's checks are not vacuous on it)."""
import gymnasium as gym
import pytest

from netarena_gym.agents.episode import play_episode
from netarena_gym.agents.experts import make_expert
from netarena_gym.core.protocols import Backend
from netarena_gym.testing import KitFailure, check_after_end, check_determinism, check_netarena_env
from tests.testing.toy_task import ENV_ID, LightsBackend, ToyLightsEnv, register_toy

register_toy()


def test_toy_backend_satisfies_the_backend_protocol():
    assert isinstance(LightsBackend(), Backend)


@pytest.mark.parametrize("interface", ["text", "discrete"])
@pytest.mark.parametrize("level", [1, 3])
def test_toy_task_passes_the_kit(level, interface):
    check_netarena_env(ENV_ID, level=level, interface=interface, steps=300, vector_steps=300)


def test_toy_expert_solves_every_episode():
    env = gym.make(ENV_ID, level=3)
    results = [play_episode(env, make_expert(env), seed=s) for s in range(20)]
    assert all(r.correct and r.safe for r in results)


class LeakyLightsEnv(ToyLightsEnv):
    """A broken variant: its scenario ignores the env's seeded generator."""
    counter = 0

    def _generate(self, rng, options):
        LeakyLightsEnv.counter += 1
        import numpy as np
        return super()._generate(np.random.default_rng(LeakyLightsEnv.counter), options)


def test_the_kit_catches_an_env_that_ignores_its_seed():
    with pytest.raises(KitFailure, match="determinism"):
        check_determinism(lambda: LeakyLightsEnv(level=2))


class KeepsSteppingAfterClose(ToyLightsEnv):
    def close(self):  # releases nothing and leaves the episode open
        pass


class RendersBeforeReset(ToyLightsEnv):
    def render(self):
        return "" if self.metrics is None else super().render()


@pytest.mark.parametrize("cls, match", [(KeepsSteppingAfterClose, "step after close"),
                                        (RendersBeforeReset, "render before reset")])
def test_the_kit_catches_steps_and_renders_outside_an_episode(cls, match):
    with pytest.raises(KitFailure, match=match):
        check_after_end(lambda **o: cls(level=2, **o))
    check_after_end(lambda **o: ToyLightsEnv(level=2, **o))
