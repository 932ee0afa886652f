"""The discrete view: the mask and the arrays kept up to date step by step equal the ones
computed from scratch, over random masked action sequences."""
import gymnasium as gym
import numpy as np
import pytest

from netarena_gym.capacity_planning.catalogue import NODE_TOOLS, answer_order, repr_head
from netarena_gym.capacity_planning.features import FOCUS, FOCUS_FEATURES, arrays, log_scale
from netarena_gym.capacity_planning.kinds import KIND_INDEX, KINDS
from netarena_gym.core.seeding import rng_from_seed

ENV_ID = "NetArena-CapacityPlanning-v0"  # registered in conftest.py


def full_mask(env) -> np.ndarray:
    has = env.graph.has
    out = np.zeros(len(env.catalogue.entries), np.int8)
    for i, e in enumerate(env.catalogue.entries):
        if e is None:
            continue
        a = e.action
        if a["tool"] in NODE_TOOLS or a["tool"] == "set_attr":
            out[i] = has((a["kind"], a["node"]))
        elif a["tool"] == "add_node":
            out[i] = not has((a["kind"], a["name"])) and has((a["parent_kind"], a["parent"]))
        else:
            out[i] = 1
    return out


def reference_focus(env) -> np.ndarray:
    """The focus array by its definition, node by node (no cache, no template rows)."""
    g, v = env.graph, env.view
    f = np.zeros((FOCUS, FOCUS_FEATURES), np.float32)
    for i, k in enumerate(v.focus):
        f[i, KIND_INDEX[k[0]]] = 1
        if g.has(k):
            f[i, len(KINDS)] = 1
            if k in v.observed:
                f[i, len(KINDS) + 1:] = (1, log_scale(g.capacity(k)),
                                         min(1.0, len(g.children(k)) / 64),
                                         min(1.0, g.degree(k) / 64))
    return f


def assert_matches_full(env, obs) -> None:
    v = env.view
    full = arrays(env.graph, v.focus, v.observed, v.candidates, v._query_vec)
    for key in ("query", "focus", "candidates"):
        np.testing.assert_array_equal(obs[key], full[key], err_msg=key)
    np.testing.assert_array_equal(obs["focus"], reference_focus(env))
    np.testing.assert_array_equal(obs["action_mask"], full_mask(env))
    np.testing.assert_array_equal(env.catalogue.mask, full_mask(env))


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_incremental_arrays_and_mask_equal_full_recomputation(level):
    env = gym.make(ENV_ID, level=level, interface="discrete")
    base = env.unwrapped
    rng = np.random.default_rng(level)
    steps = 0
    for ep in range(25):
        obs, info = env.reset(seed=ep)
        assert_matches_full(base, obs)
        done = False
        while not done:
            valid = np.flatnonzero(info["action_mask"])
            # mostly node tools and writes, so that episodes run long and change the graph
            tools = [base.catalogue.entries[i].action["tool"] for i in valid]
            pool = [i for i, t in zip(valid, tools) if t != "answer"] or list(valid)
            a = int(rng.choice(pool if rng.random() < 0.9 else valid))
            obs, r, term, trunc, info = env.step(a)
            assert_matches_full(base, obs)
            done = term or trunc
            steps += 1
    assert steps > 200


def test_observation_arrays_are_fresh_copies():
    env = gym.make(ENV_ID, level=2, interface="discrete")
    obs, info = env.reset(seed=3)
    before = {k: v.copy() for k, v in obs.items()}
    for v in obs.values():
        v[...] = 0
    obs2, _ = env.reset(seed=3)
    for k in before:
        np.testing.assert_array_equal(obs2[k], before[k])


def test_a_graph_reset_mid_episode_recomputes_everything():
    env = gym.make(ENV_ID, level=1, interface="discrete")
    base = env.unwrapped
    obs, info = env.reset(seed=5)
    view = base.view
    for i, e in enumerate(base.catalogue.entries):
        if e and e.action["tool"] == "list_children" and info["action_mask"][i]:
            obs, *_, info = env.step(i)
            break
    removes = [i for i, e in enumerate(base.catalogue.entries)
               if e and e.action["tool"] == "remove_node" and info["action_mask"][i]]
    obs, *_, info = env.step(removes[0])
    assert base.graph.changed and not info["action_mask"][removes[0]]
    base.backend.reset_to_baseline()  # forgets the change and the graph's watcher
    assert not base.graph.changed
    obs = base._observation()
    assert obs["action_mask"][removes[0]]
    full = arrays(base.graph, view.focus, view.observed, view.candidates, view._query_vec)
    np.testing.assert_array_equal(obs["focus"], full["focus"])


@pytest.mark.parametrize("value", [
    [], [1], "it's \"quoted\"", 16_000_000_000, 2.5, None, True, {"a": [1, 2]},
    [["ju1.a1.m1.s2c1", 16_000_000_000]] * 40, [["x" * 30, 1], ["y" * 60, 2]],
    ["a'b", 'c"d', "e\\f"] * 20, [[[1, [2, [3]]]] * 10],
])
def test_repr_head_is_the_head_of_the_repr(value):
    for n in (0, 1, 2, 7, 73, 80, 500):
        assert repr_head(value, n) == repr(value)[:n]


def test_answer_order_is_the_seeded_permutation():
    for seed in (0, 1, 2**31 - 1, 123456789):
        for n in range(1, 9):
            assert answer_order(seed, n) == tuple(int(i) for i in rng_from_seed(seed).permutation(n))


def test_a_catalogue_rebuilt_from_kept_parts_equals_a_fresh_one():
    """An env that played other episodes (its per-base caches filled) builds the same
    catalogue, mask and arrays for a seed as a new env does."""
    seeds = (4, 11, 4, 29, 11)
    warm = gym.make(ENV_ID, level=3, interface="discrete")
    for s in range(40):
        warm.reset(seed=s)
    for s in seeds:
        obs, info = warm.reset(seed=s)
        fresh = gym.make(ENV_ID, level=3, interface="discrete")
        obs2, info2 = fresh.reset(seed=s)
        assert warm.unwrapped.catalogue.labels() == fresh.unwrapped.catalogue.labels()
        assert ([e and e.action for e in warm.unwrapped.catalogue.entries]
                == [e and e.action for e in fresh.unwrapped.catalogue.entries])
        np.testing.assert_array_equal(info["action_mask"], info2["action_mask"])
        for k in obs:
            np.testing.assert_array_equal(obs[k], obs2[k])
