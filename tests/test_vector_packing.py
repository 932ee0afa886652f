"""netarena_gym.vector.packing: ``add_infos`` stacks as Gymnasium's ``_add_info`` called env
by env; column packs of several workers merge into what one pack of all their envs is."""
import gymnasium as gym
import numpy as np

import netarena_gym  # noqa: F401
from netarena_gym.vector.packing import (add_infos, column_infos, columns, merge_columns,
                                         pack_info, stack_columns, stack_packed)
from tests.test_vector import assert_same


def gymnasiums(entries, n):
    """What ``VectorEnv._add_info`` makes of ``entries`` (index, info), one call each."""
    vec = gym.vector.VectorEnv()
    vec.num_envs = n
    infos = {}
    for i, info in entries:
        infos = vec._add_info(infos, info, i)
    return infos


def test_add_infos_equals_add_info_env_by_env():
    """Keys some envs lack (masks False, zeros or None there), the first value's type as
    dtype (a later float cast into an int array), arrays, strings, nested dicts on several
    levels, ``final_obs`` as objects even when a dict, numpy scalars."""
    entries = [
        (0, {"a": 1, "s": "x", "nest": {"f": 0.5, "deep": {"k": True}}, "arr": np.arange(3)}),
        (2, {"a": 2.7, "final_obs": {"o": np.ones(2)}, "nest": {"g": np.float32(2)}}),
        (3, {"b": None, "arr": np.arange(3) * 2, "nest": {"f": 1.5, "deep": {"k": False}},
             "final_obs": np.zeros(2), "u": np.int16(4)}),
    ]
    assert_same(add_infos({}, entries, 5), gymnasiums(entries, 5))
    # into a vector info that already has keys (the lean columns): disjoint keys added
    first, rest = entries[:1], entries[1:]
    assert_same(add_infos(add_infos({}, first, 5), rest, 5), gymnasiums(entries, 5))


def test_columns_of_workers_merge_into_the_columns_of_all_envs():
    env = gym.make("NetArena-K8sPolicy-v0", interface="discrete", info="lean")
    infos = [env.reset(seed=s)[1] for s in range(5)]
    packs = [pack_info(i)[0] for i in infos]
    whole = columns(packs)
    assert merge_columns([columns(packs[:2]), columns(packs[2:])]) == whole
    assert_same(stack_columns(whole), stack_packed(packs))
    lean = [{k: v for k, v in i.items() if k in stack_columns(whole)} for i in infos]
    for got, want in zip(column_infos(whole), lean):
        assert_same(got, want)
    other = pack_info(dict(infos[0], reward_components={"x": 0.0}))[0]
    assert columns([packs[0], other]) is None and columns([packs[0], None]) is None
    assert merge_columns([whole, columns([other])]) is None
    env.close()
