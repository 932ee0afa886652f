"""Interface labels (aliases): off in compat (upstream's nodes carry none), on elsewhere,
and an explicit, validated env option ``interface_labels``."""
import gymnasium as gym
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.agents import play_episode
from netarena_gym.errors import InvalidConfig
from netarena_gym.routing.backends.mininet import baseline_script
from netarena_gym.routing.backends.sim import SimBackend, SimState
from netarena_gym.routing.config import RoutingConfig
from netarena_gym.routing.env import RoutingEnv
from netarena_gym.routing.expert import RoutingExpert
from netarena_gym.routing.topology import Layout, TopologySpec, build_network, labels_for

from .conftest import SMALL, scenario


def aliases(net) -> dict:
    return {(n.name, i.name): i.alias for n in net.routers() for i in n.interfaces.values()
            if not i.loopback}


def test_labels_for_levels_and_overrides():
    assert labels_for(1) and labels_for(3) and not labels_for("compat")
    assert labels_for("compat", True) and not labels_for(1, False)


def test_build_network_with_and_without_labels():
    spec = TopologySpec(hosts=((1, 2), (1,)), parents=(0,))
    on = aliases(build_network(spec)[0])
    assert on[("r0", "r0-eth1")] == "LAN s1 192.168.1.1/24"
    assert on[("r0", "r0-eth3")] == "TRANSIT r1 172.16.0.1/30"
    assert set(aliases(build_network(spec, labels=False)[0]).values()) == {None}


def test_sim_state_follows_the_scenario_level_unless_told():
    assert not SimState.build(scenario([], SMALL, level="compat")).labels
    assert SimState.build(scenario([], SMALL, level=1)).labels
    assert SimState.build(scenario([], SMALL, level="compat"), labels=True).labels
    b = SimBackend(interface_labels=False)
    b.apply(scenario([], SMALL, level=1), SimState.build(scenario([], SMALL, level=1)))
    assert not b.state.labels  # a prebuilt state with other labels is not used


def test_mininet_baseline_sets_or_clears_aliases():
    lay = Layout(TopologySpec.from_dict(SMALL))
    assert "link set dev r0-eth1 alias 'LAN s1 192.168.1.1/24'" in baseline_script(lay, "r0")
    # real: `alias ''` removes the alias line from `ip link show`
    off = baseline_script(lay, "r0", labels=False)
    assert "link set dev r0-eth1 alias ''" in off and "LAN" not in off


@pytest.mark.parametrize("level,option,shown", [
    ("compat", None, False), (1, None, True), ("compat", True, True), (2, False, False)])
def test_env_option_decides_what_ip_link_shows(level, option, shown):
    env = gym.make("NetArena-Routing-v0", level=level, interface_labels=option)
    env.reset(seed=5)
    obs, *_ = env.step({"machine": "r0", "command": "ip -d link show; ip -d addr show"})
    assert ("    alias LAN s" in obs) == shown
    env.close()


def test_option_is_validated_and_listed():
    assert "interface_labels" in RoutingConfig.field_names()
    with pytest.raises(InvalidConfig, match="interface_labels"):
        RoutingConfig(interface_labels="yes")
    with pytest.raises(InvalidConfig, match="interface_labels"):
        RoutingEnv(interface_labels=1)
    assert RoutingEnv.from_config({"level": "compat", "interface_labels": True}).config.interface_labels


def test_expert_solves_a_single_router_without_labels():
    env = gym.make("NetArena-Routing-v0", level=2, interface_labels=False)
    results = [play_episode(env, RoutingExpert(), seed=2000 + i) for i in range(40)]
    assert all(r.correct and r.safe for r in results)


def build_through_the_node_api(spec, labels=True):
    """The reference build: every interface, address and route through the Node methods
    (the kernel's rules: connected routes, table order), versions zeroed at the end."""
    from netarena_gym.routing.state import Network, Node, Route
    from netarena_gym.routing.topology import _add_hosts, _mac, layout_of
    lay = layout_of(spec)
    net = Network()
    peer_ifindex = 100
    for node_no, r in enumerate(lay.routers, start=1):
        node = net.add_node(Node(r, "router"))
        for n, itf in enumerate(lay.router_ifaces[r], start=1):
            node.add_interface(itf, mac=_mac(node_no, n),
                               alias=lay.iface_alias(r, itf) if labels else None,
                               peer_ifindex=peer_ifindex)
            peer_ifindex += 1
        node.set_sysctl("net.ipv4.ip_forward", "1")
    for s in lay.subnets:
        assert net.nodes[s.router].add_address(s.iface, s.gateway, 24) is None
    for ln in lay.links:
        assert net.nodes[ln.a].add_address(ln.a_iface, ln.a_ip, 30) is None
        assert net.nodes[ln.b].add_address(ln.b_iface, ln.b_ip, 30) is None
        ia, ib = net.nodes[ln.a].interfaces[ln.a_iface], net.nodes[ln.b].interfaces[ln.b_iface]
        ia.peer, ib.peer = ib, ia
    for r in lay.routers:
        for dst, plen, dev, gw in lay.intended_routes(r):
            if gw is not None:
                net.nodes[r].insert_route(Route(dst=dst, plen=plen, dev=dev, gateway=gw))
    for node in net.nodes.values():
        node.version = 0
        node._cache_version = node._fp_version = -1
    _add_hosts(net, lay)
    return net


def test_the_direct_build_is_what_the_node_api_builds():
    """build_network_fresh sets the state directly; the Node methods (what ``ip`` runs)
    build the same network, field by field, for drawn and shaped topologies."""
    from netarena_gym.core.seeding import rng_from_seed
    from netarena_gym.routing.generator import LEVELS, sample_topology
    from netarena_gym.routing.shapes import shape_spec
    from netarena_gym.routing.topology import build_network_fresh
    from tests.routing.test_clone import dump
    specs = [shape_spec("tree", [(2, 2)] * 64), shape_spec("ring", [(1, 2, 3)] * 12),
             shape_spec("leaf-spine", [(2, 1)] * 24)]
    for seed in range(60):
        specs.append(sample_topology(rng_from_seed(seed), LEVELS[1 + seed % 3]))
    for spec in specs:
        for labels in (True, False):
            assert dump(build_network_fresh(spec, labels=labels)[0]) == \
                dump(build_through_the_node_api(spec, labels)), spec


def test_links_must_connect_every_router_in_any_listing_order():
    hosts = ((1,),) * 4
    TopologySpec(hosts=hosts, links=((3, 2), (2, 1), (1, 0)))  # a chain listed from its far end
    TopologySpec(hosts=hosts, links=((0, 3), (3, 1), (1, 2)))
    with pytest.raises(ValueError, match="connect every router"):
        TopologySpec(hosts=hosts, links=((0, 1), (2, 3)))  # two islands
    with pytest.raises(ValueError, match="connect every router"):
        TopologySpec(hosts=hosts, links=((1, 2), (2, 3), (3, 1)))  # r0 left out of a cycle


@pytest.mark.parametrize("kw, says", [
    ({"hosts": ((1,), (1,)), "parents": (True,)}, "ints"),  # True passed as router 1
    ({"hosts": ((1.5, 2),)}, "ints"),  # a float host count got as far as range()
    ({"hosts": ((True, 2),)}, "ints"),
    ({"hosts": ([1, 2],)}, "ints"),  # a list is unhashable: layout_of's memo raised
    ({"hosts": ((1,), (1,)), "links": ((0, 1.0),)}, "ints"),
    ({"hosts": ((1,), (1,))}, "one parent per router"),
    ({"hosts": ((9,),)}, "hosts per subnet"),
])
def test_a_spec_that_cannot_be_built_is_a_scenario_error(kw, says):
    """Before, a plain ValueError (outside the root class), or no error at all for bools
    and floats until the build failed elsewhere."""
    from netarena_gym.errors import ScenarioError
    with pytest.raises(ScenarioError, match=says):
        TopologySpec(**kw)
