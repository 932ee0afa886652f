"""The discrete interface's arrays of the Kubernetes task."""
import gymnasium as gym

import netarena_gym  # noqa: F401
from netarena_gym.testing.checks import rollout, same


def test_features_do_not_leak_from_the_previous_episode():
    # resourceVersions restart with each episode: a row cached by (name, resourceVersion)
    # from episode A must not be served in episode B
    warm = gym.make("NetArena-K8sPolicy-v0", interface="discrete")
    fresh = gym.make("NetArena-K8sPolicy-v0", interface="discrete")
    rollout(warm, 0, 30)
    assert same(rollout(warm, 1, 30), rollout(fresh, 1, 30))


def test_incremental_arrays_equal_a_fresh_builder():
    """The env's builder (only the changed policies' slots looked at) gives the arrays a
    new builder computes from scratch, over random edits, extra policies and resets."""
    import numpy as np
    from netarena_gym.k8s.features import FeatureBuilder
    from tests.k8s.edits import random_edits
    env = gym.make("NetArena-K8sPolicy-v0", level=2, interface="discrete").unwrapped
    n = 0
    for _ in random_edits(env, 10, 20, seed=3):
        pols = env._policies()
        got = env._features()
        want = FeatureBuilder(env.wl, env.probe_set).arrays(env._actual, pols)
        assert set(got) == set(want)
        for k in want:
            assert np.array_equal(got[k], want[k]), k
        n += len([p for p in pols if p not in env.wl.apps])
    assert n > 20  # extra policies were seen
