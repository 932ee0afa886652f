"""Large topologies of a named shape: structure, addressing, routes, faults, the expert."""
import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.agents.episode import play_episode
from netarena_gym.agents.experts import make_expert
from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.generator import RoutingGenerator, level_config
from netarena_gym.routing.shapes import max_links, shape_spec, spines
from netarena_gym.routing.topology import Layout, TopologySpec, build_network, subnet_net


def hop_counts(lay: Layout, router: str) -> dict[str, int]:
    """Breadth-first hop count from ``router`` to every router of ``lay``."""
    d, frontier = {router: 0}, [router]
    while frontier:
        cur = frontier.pop(0)
        for nb, _, _ in lay.neighbors(cur):
            if nb not in d:
                d[nb] = d[cur] + 1
                frontier.append(nb)
    return d


def test_shapes_structure():
    hosts = [(1,)] * 8
    tree = Layout(shape_spec("tree", hosts))
    assert [(ln.a, ln.b) for ln in tree.links][:4] == [("r0", "r1"), ("r0", "r2"), ("r1", "r3"),
                                                       ("r1", "r4")]
    ring = Layout(shape_spec("ring", hosts))
    assert len(ring.links) == 8 and (ring.links[-1].a, ring.links[-1].b) == ("r0", "r7")
    ls = Layout(shape_spec("leaf-spine", [(2,)] * 20))
    s = spines(20)
    assert s == 2 and len(ls.links) == s * (20 - s) == max_links("leaf-spine", 20)
    assert not ls.router_ifaces["r0"][0].endswith("eth0")
    assert all(sub.router not in ("r0", "r1") for sub in ls.subnets)  # spines have no LAN
    assert max_links("ring", 8) == 8 and max_links("tree", 8) == -1


def test_addressing_beyond_255_subnets_and_links():
    assert int_to_ip(subnet_net(255)) == "192.168.255.0"
    assert int_to_ip(subnet_net(256)) == "100.64.0.0"
    lay = Layout(shape_spec("leaf-spine", [(1,) * 8] * 64))
    assert len(lay.subnets) == 8 * (64 - spines(64)) and len(lay.links) == 240
    assert int_to_ip(lay.links[239].net) == "172.16.239.0"
    assert int_to_ip(Layout(shape_spec("ring", [(1,)] * 64)).links[63].net) == "172.16.63.0"
    assert int_to_ip(lay.subnets[-1].gateway) == "100.64.224.1"
    nets = [s.net for s in lay.subnets] + [ln.net for ln in lay.links]
    assert len(set(nets)) == len(nets)
    with pytest.raises(ValueError):
        TopologySpec(hosts=((1,), (1,), (1,)), links=((0, 1),))  # r2 unconnected
    with pytest.raises(ValueError):
        TopologySpec(hosts=((1,), (1,)), links=((0, 1), (1, 0)))


@pytest.mark.parametrize("shape", ["tree", "ring", "leaf-spine"])
def test_healthy_network_fully_reachable_along_shortest_paths(shape):
    spec = shape_spec(shape, [(1, 1)] * 12)
    net, lay = build_network(spec)
    b = SimBackend()
    from netarena_gym.core.scenario import Scenario
    b.apply(Scenario(task="routing", level=3, params={"topology": spec.to_dict()}, faults=(),
                     seed=None))
    assert b.observe().all()
    # static routes follow shortest paths: hop counts of a traceroute equal BFS distances
    from netarena_gym.routing.grader import walk
    dist = {r: hop_counts(lay, r) for r in lay.routers}
    net = b.state.net
    for s in lay.subnets[::3]:
        src = net.nodes[s.hosts[0]]
        for t in [t for t in lay.subnets[1::4] if t is not s]:
            trip = walk(net, src, t.net + 100, record=True)
            assert trip.ok
            routers = [n.name for n, _ in trip.hops if n.kind == "router"]
            assert len(routers) == dist[s.router][t.router] + 1


def test_topology_option_validation():
    assert level_config(3, {"shape": "ring", "routers": 64}).shape == "ring"
    for bad in ({"shape": "mesh"}, {"routers": 65}, {"shape": "leaf-spine", "routers": 3},
                {"size": 3}):
        with pytest.raises(ValueError):
            level_config(3, bad)


@pytest.mark.parametrize("shape", ["tree", "ring", "leaf-spine"])
def test_faults_hit_any_router_and_transit_links(shape):
    gen = RoutingGenerator(3, topology={"shape": shape, "routers": 16, "subnets": 1, "hosts": 1})
    transit = routers = 0
    for seed in range(12):
        sc = gen.generate(seed).scenario
        lay = Layout(TopologySpec.from_dict(sc.params["topology"]))
        tifs = {ln.a_iface for ln in lay.links} | {ln.b_iface for ln in lay.links}
        for f in sc.faults:
            routers += f["router"] not in ("r0", "r1", "r2", "r3")
            transit += f["params"].get("interface") in tifs
    assert routers and transit


@pytest.mark.parametrize("shape,routers", [("tree", 16), ("ring", 16), ("leaf-spine", 16),
                                           ("tree", 64), ("ring", 64), ("leaf-spine", 64)])
def test_expert_solves_large_shapes_safely(shape, routers):
    size = 2 if routers <= 16 else 1
    env = gym.make("NetArena-Routing-v0", level=3, interface="text",
                   topology={"shape": shape, "routers": routers, "subnets": size, "hosts": size})
    seeds = range(4) if routers <= 16 else range(1)
    for seed in seeds:
        rec = play_episode(env, make_expert(env), seed=seed, catch=False)
        assert rec.correct and rec.safe, (shape, seed, rec.steps)


def test_discrete_interface_at_64_routers():
    env = gym.make("NetArena-Routing-v0", level=3, interface="discrete",
                   topology={"shape": "leaf-spine", "routers": 64, "subnets": 1, "hosts": 1})
    obs, info = env.reset(seed=0)
    mask = info["action_mask"]
    rng = np.random.default_rng(0)
    for _ in range(5):
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        mask = info["action_mask"]
    assert env.observation_space.contains(obs)


def test_bad_shape_arguments_are_invalid_config():
    """Before, a plain ValueError (outside netarena_gym's root class)."""
    from netarena_gym.errors import InvalidConfig
    for shape, n in (("mesh", 4), ("tree", 0), ("tree", 65), ("leaf-spine", 2)):
        with pytest.raises(InvalidConfig):
            shape_spec(shape, [(1,)] * n)
