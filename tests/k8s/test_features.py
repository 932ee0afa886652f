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
