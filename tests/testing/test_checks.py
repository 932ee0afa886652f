"""The kit's checks (``netarena_gym/testing/checks.py``): ``info["cost"]`` is held to
Safety-Gymnasium's meaning on every registered env and interface, and each broken toy env of
``tests/testing/broken_envs.py`` (a reward that is not its components, global random state,
unseeded resets that repeat an episode, a scenario record that misses state, hostile actions
run as harmless ones or unpenalised, a default vector env that is not sync's twin) fails the
check that holds that rule, with a message that says what is wrong."""
from __future__ import annotations

import gymnasium as gym
import pytest

from netarena_gym.testing import (KitFailure, check_after_end, check_cost, check_determinism,
                                  check_gymnasium, check_info_schema, check_replay,
                                  check_robust_steps, check_vector)
from netarena_gym.testing.checks import make_vector
from tests.testing import broken_envs as broken
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


# ------------------------------------------------ broken envs the stricter checks catch

INTERFACES = ("text", "discrete")


def ID(value):
    return getattr(value, "__name__", "message")


def maker(cls, interface):
    return lambda **o: cls(level=2, interface=interface, **o)


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("cls,match", ids=ID, argvalues=[
    (broken.RewardNotSum, r"\[reward\] step 1: reward 4\.99 != sum of "
                          r"info\['reward_components'\] -0\.01"),
    (broken.RewardOutOfRange, r"\[reward\] step 1: reward 4\.99 outside reward_range "
                              r"\(-1\.21, 0\.99\)"),
])
def test_info_schema_catches_a_reward_that_is_not_its_components(cls, match, interface):
    with pytest.raises(KitFailure, match=match):
        check_info_schema(maker(cls, interface), steps=20)
    with pytest.raises(KitFailure, match=r"\[reward\] step 0 with action"):
        check_robust_steps(maker(cls, interface), steps=20)


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("cls,match", ids=ID, argvalues=[
    (broken.GlobalRandom, r"\[determinism\] reset and step changed numpy's global RNG"),
    (broken.PyGlobalRandom, r"\[determinism\] reset and step changed the random module's"),
])
def test_determinism_catches_global_random_state(cls, match, interface):
    with pytest.raises(KitFailure, match=match):
        check_determinism(maker(cls, interface))
    with pytest.raises(KitFailure, match=r"\[robust\] random and hostile steps changed"):
        check_robust_steps(maker(cls, interface), steps=20)


@pytest.mark.parametrize("interface", INTERFACES)
def test_determinism_catches_unseeded_resets_that_repeat_the_seeded_episode(interface):
    with pytest.raises(KitFailure, match=r"\[determinism\] seed 0: 3 resets without a seed "
                                         r"after reset\(seed=0\) all gave the same episode "
                                         r"\(the seeded one\).*autoreset would repeat"):
        check_determinism(maker(broken.UnseededResetRepeats, interface))


@pytest.mark.parametrize("interface", INTERFACES)
def test_determinism_catches_unseeded_resets_that_differ_across_instances(interface):
    with pytest.raises(KitFailure, match=r"\[determinism\] seed 0: unseeded reset 1 after "
                                         r"reset\(seed=0\) differs across two instances"):
        check_determinism(maker(broken.UnseededResetFromEntropy, interface))


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("cls,match", ids=ID, argvalues=[
    (broken.ReplayLosesHiddenState, r"\[replay\] seed 0: step \d+ of the replay differs after "
                                    r"the same actions \(observation.*misses state"),
    (broken.ReplayedInfoDiffers, r"\[replay\] seed 0: the replayed reset differs "
                                 r"\(info keys \['backend', 'scenario'\]\)|"
                                 r"\[replay\] seed 0: the replayed reset differs "
                                 r"\(info keys \['backend'\]\)"),
])
def test_replay_catches_an_episode_the_record_does_not_rebuild(cls, match, interface):
    with pytest.raises(KitFailure, match=match):
        check_replay(maker(cls, interface))


@pytest.mark.parametrize("interface", INTERFACES)
@pytest.mark.parametrize("cls,match", ids=ID, argvalues=[
    (broken.SilentlyIgnoresBadActions, r"\[robust\] step 1 with hostile action None: "
                                       r"command_kind 'ok'; a hostile action must come back "
                                       r"as one of \('invalid', 'refused'\)"),
    (broken.UnpenalisedInvalid, r"\[robust\] step 1 with hostile action None: not penalised: "
                                r"reward -0\.01, reward_components\['invalid'\] 0\.0"),
])
def test_robust_steps_catch_hostile_actions_without_an_error_and_a_penalty(cls, match,
                                                                           interface):
    with pytest.raises(KitFailure, match=match):
        check_robust_steps(maker(cls, interface), steps=20)


@pytest.mark.parametrize("interface", INTERFACES)
def test_vector_runs_the_default_mode_and_compares_it_with_sync(interface):
    broken.register_broken_vec()
    with pytest.raises(KitFailure, match=r"\[vector\] default \(SyncVectorEnv\): reset\(seed=11\) "
                                         r"observation differs from sync's"):
        check_vector(broken.BROKEN_VEC_ID, dict(level=2, interface=interface), steps=50,
                     modes=("sync", "default"))


@pytest.mark.parametrize("env_id", sorted(set(e for e, _ in CONFIGS)) + [broken.ENV_ID])
def test_the_default_vector_mode_is_the_packages_batched_env(env_id):
    """Even where a conftest registered the id before ``import netarena_gym`` (without the
    vector entry point: ``tests/k8s`` and ``tests/capacity_planning`` do), the kit's
    default mode is the package's batched env, with a warning."""
    from netarena_gym.vector import NetArenaBatchedVectorEnv
    broken.register_broken_vec()
    vec = make_vector(env_id, dict(level=1), "default")
    try:
        assert isinstance(vec, NetArenaBatchedVectorEnv)
    finally:
        vec.close()


@pytest.mark.parametrize("cls", [broken.RewardNotSum, broken.GlobalRandom,
                                 broken.UnseededResetRepeats, broken.ReplayLosesHiddenState,
                                 broken.SilentlyIgnoresBadActions])
@pytest.mark.parametrize("interface", INTERFACES)
def test_the_reviews_broken_envs_pass_gymnasiums_checker_but_not_the_kit(cls, interface):
    """Not vacuous: Gymnasium's own checker and the kit's after-end check pass them, so
    only the stricter checks above tell them from the toy."""
    check_gymnasium(maker(cls, interface))
    check_after_end(maker(cls, interface))
