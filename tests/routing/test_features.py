"""The discrete observation's per-episode maps are memoised per layout: a new episode on
the same topology starts from the same arrays, whatever the last episode changed."""
import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.routing import features
from netarena_gym.routing.features import FeatureBuilder
from netarena_gym.routing.views import INSPECT, parse_inspection

TREE = {"shape": "tree", "routers": 8, "subnets": 2, "hosts": 2}


def test_an_episode_starts_from_the_layouts_arrays_not_the_last_episodes():
    env = gym.make("NetArena-Routing-v0", level=3, interface="discrete", topology=TREE)
    obs, _ = env.reset(seed=0)
    u = env.unwrapped
    lay, names = u.backend.layout, u.backend.names
    features._episode_maps.cache_clear()
    first = FeatureBuilder(lay, u.dims, names)
    out = u.backend.run({"machine": "r1", "command": "ip link set r1-eth1 down; " + INSPECT})
    first.update_router("r1", parse_inspection(out.output))
    assert first.iface[1].any() and (first.router[1] != 0).any()
    again = FeatureBuilder(lay, u.dims, names)
    assert features._episode_maps.cache_info().hits == 1
    m = u.backend.observe()
    for key, value in again.arrays(m).items():
        assert np.array_equal(value, obs[key] if key != "reachability" else again.reachability(m))
    assert not np.array_equal(first.iface, again.iface)
    with pytest.raises(ValueError):
        again.slots[0] = 0  # the memo's arrays are read-only


def test_every_routed_prefix_has_its_own_route_slot_past_subnet_255():
    """64 routers of 8 subnets: subnets 256-512 are 100.64.x.0/24, whose third octet is
    not their index; each prefix still gets the slot the catalogue gives its route."""
    from netarena_gym.routing.catalogue import Dims, subnet_slot
    from netarena_gym.routing.features import _layout_intent
    from netarena_gym.routing.shapes import shape_spec
    from netarena_gym.routing.topology import layout_of
    lay = layout_of(shape_spec("tree", [(1,) * 8] * 64))
    dims = Dims(64, 8, 1)
    _, routes = _layout_intent(lay, dims)
    slots = [slot for slot, _, _ in routes["r0"].values()]
    assert len(slots) == len(set(slots)) == len(lay.subnets) + len(lay.links)
    assert sorted(slots[:len(lay.subnets)]) == sorted(subnet_slot(lay, dims, s.index)
                                                      for s in lay.subnets)


TREE64 = {"shape": "tree", "routers": 64, "subnets": 2, "hosts": 2}


@pytest.mark.parametrize("level,shape,seeds", [(1, None, range(12)), (3, None, range(8)),
                                               (3, TREE64, range(2))], ids=["L1", "L3", "tree64"])
def test_memoised_episodes_equal_episodes_derived_afresh(level, shape, seeds):
    """The same observations, rewards and infos with the memos (features' maps, the
    pingall rows) as with both cleared before every reset and step."""
    from netarena_gym.routing import render

    def episodes(fresh):
        out = []
        for iface in ("discrete", "text"):
            env = gym.make("NetArena-Routing-v0", level=level, interface=iface, topology=shape)
            for seed in seeds:
                if fresh:
                    features._episode_maps.cache_clear()
                    render._full_rows.cache_clear()
                obs, info = env.reset(seed=seed)
                out.append((obs, info))
                rng = np.random.default_rng(seed)
                for _ in range(3):
                    if fresh:
                        render._full_rows.cache_clear()
                    if iface == "discrete":
                        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
                    else:
                        a = {"machine": "r0", "command": "ip link set r0-eth1 down"}
                    obs, r, term, trunc, info = env.step(a)
                    out.append((obs, r, term, trunc, info))
        return out

    def same(a, b):
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, (list, tuple)):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, np.ndarray):
            return a.dtype == b.dtype and np.array_equal(a, b)
        return a == b
    episodes(False)  # fill the memos
    assert same(episodes(False), episodes(True))
