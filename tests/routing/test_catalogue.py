"""The routing catalogue: its memo (two networks with the same routers and subnets but
different transit links get their own entries) and the "restore routes" action of large
networks."""
import gymnasium as gym
import pytest

from netarena_gym.core.actions import Catalogue
from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.routing import catalogue
from netarena_gym.routing.catalogue import Dims, fill
from netarena_gym.routing.generator import level_config
from netarena_gym.routing.topology import TopologySpec, layout_of

ROUTING = "NetArena-Routing-v0"
FAULTS = ("disable_interface", "remove_ip")
REPAIR = ("flush addresses", "add address", "link up", "mtu 1500", "delete qdisc",
          "restore routes")


def test_networks_that_differ_only_in_links_get_their_own_entries():
    hosts = ((1,),) * 4
    ring = TopologySpec(hosts=hosts, links=((0, 1), (1, 2), (2, 3), (0, 3)))
    star = TopologySpec(hosts=hosts, links=((0, 1), (0, 2), (0, 3), (1, 2)))
    dims = Dims(4, 1, 1, links=4)
    catalogue._CACHE.clear()
    for spec in (ring, star):
        memo, built = Catalogue(dims.size), Catalogue(dims.size)
        fill(memo, layout_of(spec), dims)
        catalogue._build(built, layout_of(spec), dims)
        assert memo.entries == built.entries and (memo.mask == built.mask).all()


def test_levels_of_up_to_four_routers_keep_five_interface_actions():
    """The "restore routes" action is only on large networks: the level 1-3 layouts (and
    the policies trained on them) stay as they were."""
    for level in (1, 2, 3):
        assert not Dims.of(level_config(level, None)).batches
    assert gym.make(ROUTING, level=1, interface="discrete").action_space.n == 56
    assert Dims.of(level_config(3, {"shape": "ring", "routers": 5})).batches


def test_restore_routes_replaces_every_intended_route_through_the_interface():
    """The batch entry of an interface is the router's intended routes that leave through
    it, as one command line, its connected route first (the others' gateways need it)."""
    env = gym.make(ROUTING, level=3, interface="discrete",
                   topology={"shape": "leaf-spine", "routers": 8, "subnets": 2, "hosts": 1})
    env.reset(seed=0)
    u = env.unwrapped
    lay = u.backend.layout
    checked = 0
    for e in u.catalogue.entries:
        if e is None or not e.label.endswith(": restore routes"):
            continue
        router, itf = e.label.split(":")[0].split()
        want = {f"{int_to_ip(net)}/{plen}": gw for net, plen, dev, gw
                in lay.intended_routes(router) if dev == itf}
        cmds = [c.split() for c in e.action["command"].split("; ")]
        assert sorted(c[3] for c in cmds) == sorted(want)
        for c in cmds:
            gw = want[c[3]]
            assert c[:3] == ["ip", "route", "replace"]
            assert c[4:7] == (["dev", itf, "proto"] if gw is None
                              else ["via", int_to_ip(gw), "dev"])
        assert want[cmds[0][3]] is None  # the connected route first
        checked += 1
    assert checked == sum(len(v) for v in lay.router_ifaces.values())


@pytest.mark.parametrize("shape", ["leaf-spine", "tree", "ring"])
def test_interface_faults_at_64_routers_are_repairable_within_the_budget(shape):
    """A leaf's uplink that goes down takes up to 177 routes with it (Linux drops the
    routes through a downed interface); one route per action could not restore them in
    the 104 steps of a 64-router episode. Per faulted interface, six catalogue actions
    (flush and add the address, link up, MTU, qdisc, restore routes) repair every episode
    of interface faults."""
    env = gym.make(ROUTING, level=3, interface="discrete", fault_types=FAULTS,
                   topology={"shape": shape, "routers": 64, "subnets": 2, "hosts": 2})
    u = env.unwrapped
    for seed in range(6):
        env.reset(seed=seed)
        index = {e.label: i for i, e in enumerate(u.catalogue.entries) if e is not None}
        plan = [index[label] for f in u.scenario.faults for a in REPAIR
                if (label := f"{f['router']} {f['params']['interface']}: {a}") in index]
        assert len(plan) <= u.max_steps
        for a in plan:
            _, _, term, trunc, info = env.step(a)
            if term or trunc:
                break
        assert term and info["correct"], (seed, u.scenario.faults, info["broken_pairs"])
