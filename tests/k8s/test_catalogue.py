"""The discrete action catalogue of the Kubernetes task."""
import gymnasium as gym

import netarena_gym  # noqa: F401
from netarena_gym.core.actions import Catalogue
from netarena_gym.k8s.catalogue import CatalogueBuilder, changed_names
from tests.k8s.edits import random_edits


def test_changed_names():
    a, b = {"x": 1}, {"y": 2}
    seen = {"p": a, "q": b}
    assert changed_names(seen, {"p": a, "q": b}) == []
    assert changed_names(seen, {"p": {"x": 1}, "q": b}) == ["p"]
    assert changed_names(seen, {"p": a}) is None
    assert changed_names(seen, {"p": a, "r": b}) is None


def test_incremental_fill_equals_a_fresh_fill():
    """The env's catalogue (only changed policies' blocks looked at) has the entries and
    mask a new builder fills from scratch, over random edits, extra policies and resets."""
    env = gym.make("NetArena-K8sPolicy-v0", level=2, interface="discrete").unwrapped
    steps = 0
    for _ in random_edits(env, 12, 25, seed=3):
        fresh = Catalogue(env.catalogue.size)
        CatalogueBuilder(env.wl).fill(fresh, env._policies())
        assert env.catalogue.entries == fresh.entries
        assert (env.catalogue.mask == fresh.mask).all()
        steps += 1
    assert steps > 100
