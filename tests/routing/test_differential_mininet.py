"""The simulator proven against Mininet through the env: the same seeds draw the same
scenarios, and the same actions give the same matrices, result kinds, rewards, ``info``
and (for diagnostics) normalised outputs. Needs root and Mininet (CI runs it as root)."""
import json

import pytest

from netarena_gym.routing.backends.mininet import requirements_missing
from netarena_gym.routing.differential import (
    EnvPair, episode_catalogue, expert_commands, grammar_commands, random_commands, run_both,
    wrong_fixes)
from netarena_gym.routing.faults import METHODS, Fault
from netarena_gym.routing.generator import RoutingGenerator

from .conftest import scenario
from .test_shapes import hop_counts

pytestmark = [pytest.mark.mininet,
              pytest.mark.skipif(bool(requirements_missing()),
                                 reason=f"mininet backend needs {requirements_missing()}")]


@pytest.fixture(scope="module")
def real():
    from netarena_gym.routing.backends.mininet import MininetBackend
    b = MininetBackend(probe_timeout=0.1)
    yield b
    b.close()


def test_seed_draws_the_same_scenario_as_on_the_simulator(real):
    for level in (1, 2, 3):
        sim, mn = RoutingGenerator(level), RoutingGenerator(level, capabilities=real.capabilities)
        for seed in range(50):
            assert sim.generate(seed).scenario == mn.generate(seed).scenario


def test_issue_example_reward_is_the_same(real):
    pair = EnvPair(1, real)
    flushed = Fault("remove_ip", 1, "r0", {"interface": "r0-eth2"})
    cmd = "ip route replace 192.168.2.0/24 dev r0-eth2 proto kernel scope link src 192.168.2.1"
    rep = run_both(scenario([flushed], {"hosts": [[1, 1]], "parents": []}), [("r0", cmd)], pair)
    assert rep.agree, [d.__dict__ for d in rep.diffs]


def test_agentbeats_profile_on_mininet(real):
    """iptables absent on Mininet too: the same inert faults and not-found answers."""
    try:
        pair = EnvPair("compat", real, compat_profile="agentbeats")
        f = Fault("drop_traffic_to_from_subnet", 2, "r0", {"subnet": "192.168.1.0/24"})
        g = Fault("disable_routing", 1, "r0", {})
        sc = scenario([f, g], {"hosts": [[2, 2]], "parents": []}, level="compat")
        rep = run_both(sc, [("r0", "iptables -S"), ("r0", "sysctl -w net.ipv4.ip_forward=1")], pair)
        assert rep.agree and rep.steps == 2, [d.__dict__ for d in rep.diffs]
    finally:
        real.missing_programs = frozenset()


# one sequence per simulator gap the grammar agent found; each runs on one router with three
# LANs (h1 on r0-eth1, h2 on r0-eth2, r0-eth3 down: the episode never ends; h1 and h2 on
# r0-eth1 for the duplicate address), every aspect compared after every step
GAP_SEQUENCES = {
    "per-device sysctl keys": [
        ("r0", "sysctl net.ipv4.conf.r0-eth1"), ("r0", "sysctl net.ipv4.conf.all.accept_source_route"),
        ("r0", "cat /proc/sys/net/ipv4/conf/r0-eth2/forwarding"),
        ("r0", "sysctl -w net.ipv4.conf.r0-eth1.forwarding=0"), ("r0", "ip route get 192.168.2.100 from 192.168.1.100 iif r0-eth1"),
        ("r0", "sysctl -n net.ipv4.conf.r0-eth1.forwarding"), ("h1", "sysctl net.ipv4.conf.h1-eth0.forwarding"),
        ("r0", "sysctl -w net.ipv4.conf.r0-eth2.tag=3"), ("r0", "sysctl -w net.ipv4.conf.lo.mc_forwarding=1"),
        ("r0", "sysctl net.ipv4.conf.eth9.forwarding"),
        ("r0", "sysctl -w net.ipv4.ip_forward=0"), ("r0", "sysctl -w net.ipv4.ip_forward=1"),
        ("r0", "sysctl net.ipv4.conf.default.forwarding")],
    "ip neigh add/replace/del": [
        ("r0", "ip neigh add 192.168.1.100 lladdr 02:00:00:00:00:01 dev r0-eth1"),
        ("r0", "ip neigh replace 192.168.1.100 lladdr 02:00:00:00:00:01 dev r0-eth1"),
        ("r0", "ip neigh show dev r0-eth1"), ("r0", "cat /proc/net/arp | grep 0x6"),
        ("r0", "ip neigh add 192.168.2.7 lladdr 02:00:00:00:00:07 dev r0-eth2"),
        ("r0", "ip neigh add 192.168.2.8 dev r0-eth2"),
        ("r0", "ip neigh add 192.168.2.9 lladdr zz dev r0-eth2"),
        ("r0", "ip neigh add 192.168.2.9 lladdr 02:00:00:00:00 dev r0-eth2"),
        ("r0", "ip neigh add 192.168.2.9 lladdr 02:00:00:00:00:09 dev eth9"),
        ("r0", "ip neigh del 192.168.2.9 dev r0-eth2"), ("r0", "ip neigh del 192.168.2.9"),
        ("r0", "ip neigh flush all"), ("r0", "arp -n -i r0-eth1"),
        ("r0", "ip neigh change 192.168.2.9 lladdr 02:00:00:00:00:09 dev r0-eth2"),
        ("r0", "ip neigh flush dev r0-eth2 nud permanent"),
        ("r0", "ip neigh del 192.168.1.100 dev r0-eth1"), ("h1", "ip neigh del 192.168.1.1 dev h1-eth0")],
    "arp off": [
        ("r0", "ip link set r0-eth2 arp off"), ("r0", "ip link show r0-eth2"), ("r0", "ip -br link"),
        ("r0", "arp -n -i r0-eth2"), ("r0", "ip link set r0-eth2 arp on"),
        ("r0", "ifconfig r0-eth1 -arp"), ("r0", "ip link show dev r0-eth1"),
        ("h1", "ip link set h1-eth0 arp off"), ("r0", "ifconfig r0-eth1 arp"),
        ("h1", "ifconfig h1-eth0 arp"), ("r0", "ip link set lo arp off"), ("r0", "ip link show lo")],
    "ip -c": [
        ("r0", "ip -c addr"), ("r0", "ip -c link"), ("r0", "ip -c route"), ("r0", "ip -c -br addr"),
        ("r0", "ip -c -br link"), ("r0", "ip -c -o addr"), ("r0", "ip -c -o link"), ("r0", "ip -c -d link"),
        ("r0", "ip -c route get 192.168.2.100"), ("r0", "ip -c rule"), ("h1", "ip -c r"),
        ("r0", "ip -c route show table local"), ("r0", "ip -color=auto addr"), ("r0", "ip -c=never link"),
        ("r0", "ip -c=bogus link"), ("r0", "ip -color=always -4 a show dev r0-eth1"),
        ("r0", "ip neigh add 192.168.2.7 lladdr 02:00:00:00:00:07 dev r0-eth2"),
        ("r0", "ip -c neigh show nud permanent"), ("r0", "ip -c route get 192.168.1.100 from 192.168.2.100 iif r0-eth2")],
    "duplicate address on a LAN": [
        ("h2", "ip addr add 192.168.1.100/24 dev h2-eth0"), ("h2", "ip -br addr"),
        ("h1", "ping -c 1 -W 1 192.168.1.101"), ("h2", "ip addr del 192.168.1.100/24 dev h2-eth0"),
        # r0 answers ARP for it too, from another port; h1, which carries it, answers first
        ("r0", "ip addr add 192.168.1.100/24 dev r0-eth2"), ("h2", "ping -c 1 -W 1 192.168.1.100")],
    "ip -j": [
        ("r0", "ip -j addr"), ("r0", "ip -j -br addr"), ("r0", "ip -j link"), ("r0", "ip -j -br link"),
        ("r0", "ip -j route"), ("r0", "ip -j route show table local"), ("r0", "ip -j rule"),
        ("r0", "ip -j -4 addr show dev r0-eth1"), ("h1", "ip -j r"), ("r0", "ip -j neigh show dev r0-eth9"),
        ("r0", "ip -j link set r0-eth1 mtu 1500"), ("r0", "ip -j rule add prohibit pref 5"),
        ("r0", "ip -j route add blackhole 10.8.0.0/16"), ("r0", "ip -j route add 10.9.0.0/16 via 192.168.1.100 metric 7"),
        ("r0", "ip -j route"), ("r0", "ip -j ru"), ("r0", "ip -j rule del pref 5"),
        ("r0", "ip neigh add 192.168.2.7 lladdr 02:00:00:00:00:07 dev r0-eth2"),
        ("r0", "ip -j neigh show nud permanent"), ("r0", "ip -j -br a show dev r0-eth3")],
    "a host's address on a router port": [
        ("r0", "ip addr change 192.168.2.100/24 dev r0-eth1"), ("r0", "ip route"),
        ("h2", "ping -c 1 -W 1 192.168.1.100"), ("r0", "ip addr del 192.168.2.100/24 dev r0-eth1"),
        ("r0", "ip addr replace 192.168.1.100/24 dev r0-eth2")],
    "route usage text": [("r0", "route -z"), ("r0", "route -h"), ("r0", "route add"),
                         ("r0", "route add -net 10.0.0.1 netmask 255.0.0.0 dev r0-eth1")],
    "arp usage text": [("r0", "arp -x"), ("r0", "arp --bogus"), ("h1", "arp -i"), ("r0", "arp -n")],
    # a gateway route to an own address is scope global (the baseline's rules unmerged the
    # local and main tables), so arp -d's scope-link lookup finds no device for the host
    "route via an own address": [
        ("r0", "ip route del 192.168.1.0/24"), ("r0", "route add default gw 192.168.1.1"),
        ("r0", "ip route show"), ("h1", "ping -c 1 -W 1 192.168.2.100"),
        ("r0", "arp -d 192.168.1.100"), ("r0", "route del default gw 192.168.1.1"),
        ("r0", "route -n")],
    "ifconfig of a missing device": [
        ("r0", "ifconfig eth9 down"), ("r0", "ifconfig eth9 mtu 1400 up"),
        ("r0", "ifconfig eth9 192.168.9.1/24"), ("h1", "ifconfig eth9 netmask 255.255.255.0"),
        ("r0", "ifconfig eth9 broadcast 192.168.9.255"), ("r0", "ifconfig eth9 promisc -arp")],
}


@pytest.mark.parametrize("gap", sorted(GAP_SEQUENCES))
def test_gap_sequences_agree(real, gap):
    pair = EnvPair(1, real)
    aside = Fault("disable_interface", 2, "r0", {"interface": "r0-eth3"})  # keeps it running
    hosts = [2, 1, 1] if gap.startswith("duplicate") else [1, 1, 1]
    sc = scenario([aside], {"hosts": [hosts], "parents": []})
    cmds = GAP_SEQUENCES[gap]
    rep = run_both(sc, cmds, pair)
    assert rep.steps == len(cmds) and rep.agree, [d.__dict__ for d in rep.diffs]


PLAN = [(1, 30), (2, 30), ("compat", 20), (3, 20)]  # (level, scenarios): 3 sequences each


def _pairs(real):
    for level, n in PLAN:
        topo = None if level == 3 else {"subnets": 3, "hosts": 2}
        g = RoutingGenerator(level, capabilities=real.capabilities, topology=topo,
                             netem_faults="netem" in real.capabilities)
        yield level, n, g, EnvPair(level, real)


def test_differential_sim_vs_mininet(real):
    """>= 300 episodes across all levels and fault types: expert, catalogue and wrong-fix
    sequences; every aspect (matrix, kind and status, reward, info, episode end,
    normalised diagnostics) compared after every step."""
    episodes, failures, seen = 0, [], set()
    for level, n, g, pair in _pairs(real):
        for seed in range(n):
            sc = g.generate(seed).scenario
            seen |= {(f["type"], f["method"]) for f in sc.faults}
            for cmds in (expert_commands(sc), random_commands(sc, 5, seed), wrong_fixes(sc, 5, seed)):
                rep = run_both(sc, cmds, pair)
                episodes += 1
                if not rep.agree:
                    failures.append({"scenario": rep.scenario, "diff": rep.diffs[0].__dict__})
    assert episodes >= 300
    assert not failures, json.dumps(failures[:2], indent=1)[:4000]
    expected = {(t, m) for t, ms in METHODS.items() for m, spec in ms.items()
                if spec.needs <= real.capabilities}
    assert expected <= seen


def test_differential_grammar_sequences_sim_vs_mininet(real):
    """Random agents over the full command grammar, every aspect compared."""
    failures = []
    for level, n, g, pair in _pairs(real):
        for seed in range(min(n, 10)):
            sc = g.generate(seed).scenario
            rep = run_both(sc, grammar_commands(sc, 8, seed), pair)
            if not rep.agree:
                failures.append({"scenario": rep.scenario, "diff": rep.diffs[0].__dict__})
    assert not failures, json.dumps(failures[:3], indent=1)[:4000]


# a 16-router network of each shape (level 3: three or four faults anywhere, transit links
# included); sizes fixed so that each shape is built once
SHAPE_SIZES = {"routers": 16, "subnets": 2, "hosts": 1}


def _far_and_transit(sc) -> tuple[bool, bool]:
    """Whether ``sc`` has a fault on a router two or more hops from the first router with
    LANs (r0; a leaf-spine's first leaf), and one on a transit link (its interface or its
    address)."""
    from netarena_gym.routing.topology import Layout, TopologySpec
    lay = Layout(TopologySpec.from_dict(sc.params["topology"]))
    hops = hop_counts(lay, lay.subnets[0].router)
    tifs = {ln.a_iface for ln in lay.links} | {ln.b_iface for ln in lay.links}
    far = any(hops[f["router"]] >= 2 for f in sc.faults)
    transit = any(f["params"].get("interface") in tifs
                  or f["params"].get("address", "").startswith("172.16.") for f in sc.faults)
    return far, transit


@pytest.mark.parametrize("shape", ["tree", "ring", "leaf-spine"])
def test_differential_16_router_shapes(real, shape):
    """Expert, catalogue and wrong-fix sequences on a 16-router network of each shape
    agree in every aspect, with faults on far routers and on transit links."""
    topo = {"shape": shape, **SHAPE_SIZES}
    g = RoutingGenerator(3, capabilities=real.capabilities, topology=topo)
    pair = EnvPair(3, real, topology=topo, max_steps=None)
    failures, far, transit = [], False, False
    for seed in (0,):  # a few episodes keep CI short; the benchmark runs campaigns
        sc = g.generate(seed).scenario
        assert len(sc.params["topology"]["hosts"]) == 16
        f, t = _far_and_transit(sc)
        far, transit = far or f, transit or t
        rep = run_both(sc, expert_commands(sc, None, topology=topo), pair)
        # the expert's repair reaches every node on the real network too
        assert rep.agree and pair.real.backend.observe().all(), rep.diffs[:1]
        for cmds in (random_commands(sc, 4, seed, topology=topo), wrong_fixes(sc, 4, seed)):
            rep = run_both(sc, cmds, pair)
            if not rep.agree:
                failures.append({"scenario": rep.scenario, "diff": rep.diffs[0].__dict__})
    assert not failures, json.dumps(failures[:2], indent=1)[:4000]
    assert far and transit


def test_restore_routes_of_a_16_router_leaf_spine(real):
    """The large networks' "restore routes" catalogue action (one command line of route
    replacements per interface) repairs interface faults on Mininet as on the simulator:
    per faulted interface the address, link, MTU, qdisc and routes actions, sequences
    agreeing in every aspect, ending with every node reachable on the real network."""
    from .test_catalogue import FAULTS, REPAIR
    topo = {"shape": "leaf-spine", **SHAPE_SIZES}
    g = RoutingGenerator(3, capabilities=real.capabilities, topology=topo, fault_types=FAULTS)
    pair = EnvPair(3, real, topology=topo, max_steps=None)
    sc = g.generate(1).scenario
    cat = episode_catalogue(sc, topo)
    index = {e.label: e.action for e in cat.entries if e is not None}
    cmds = [(a["machine"], a["command"]) for f in sc.faults for step in REPAIR
            if (a := index.get(f"{f['router']} {f['params']['interface']}: {step}"))]
    assert any("; ip route replace" in c for _, c in cmds)
    rep = run_both(sc, cmds, pair)
    assert rep.agree and pair.real.backend.observe().all(), rep.diffs[:1]


# corners where the simulator used to differ from Linux 6.18 and net-tools 2.10 (session 27):
# any integer in ip_forward, ifconfig's strtoul'd /LEN and inet_aton addresses, the
# broadcast SIOCSIFNETMASK keeps, bash opening every file fd 1 is given, ARP from an
# address the answering node owns, and no prefix route for 0.0.0.0/LEN
EDGE_COMMANDS = [
    ("r0", "sysctl -w net.ipv4.ip_forward=2"), ("r0", "cat /proc/sys/net/ipv4/ip_forward"),
    ("r0", "sysctl net.ipv4.conf.r0-eth1.forwarding"), ("r0", "sysctl -w net.ipv4.ip_forward=-3"),
    ("h1", "ifconfig h1-eth0 192.168.1.100/33"), ("h1", "ip -4 addr show dev h1-eth0"),
    ("h1", "ifconfig h1-eth0 10.1/0x18"), ("h1", "ip -4 addr show dev h1-eth0"),
    ("h1", "ifconfig h1-eth0 1500"), ("h1", "ip -4 addr show dev h1-eth0"),
    ("h1", "ifconfig h1-eth0 192.168.1.100/24/3"), ("h1", "ifconfig h1-eth0 0.1.2.3/-1"),
    ("h1", "ip -4 addr show dev h1-eth0"),
    ("h1", "ifconfig h1-eth0 192.168.1.100 netmask 255.255.255"),
    ("r0", "echo 1 > /proc/sys/net/ipv4/nope > /dev/null || echo failed"),
    ("r0", "echo 0 > /proc/sys/net/ipv4/ip_forward >&2"),
    ("r0", "echo 1 > /proc/sys/net/ipv4/ip_forward > /proc/sys/net/ipv4/nope"),
    ("r0", "cat /proc/sys/net/ipv4/ip_forward"),
    ("h2", "ifconfig h2-eth0 10.0.0.1/31 netmask 255.255.255.0"), ("h2", "ip -4 addr show dev h2-eth0"),
    ("h2", "ifconfig h2-eth0 netmask 255.255.0.0"), ("h2", "ip -4 addr show dev h2-eth0"),
    ("h2", "ifconfig h2-eth0 10.0.0.1 broadcast 10.1.2.3 netmask 255.255.0.0"),
    ("h2", "ip -4 addr show dev h2-eth0"),
    ("h2", "ifconfig h2-eth0 10.0.0.1/32"), ("h2", "ip -4 addr show dev h2-eth0"),
    ("h2", "ifconfig h2-eth0 10.0.0.1/30 netmask 255.255.255.255"), ("h2", "ip -4 addr show dev h2-eth0"),
    ("h3", "ifconfig h3-eth0 24"), ("h3", "ip -4 addr show dev h3-eth0"),
    # r0 owning h2's address answers no ARP request from it (a martian source)
    ("r0", "ip addr add 192.168.2.101/32 dev r0-eth3"), ("r0", "ip neigh show dev r0-eth2"),
    ("h5", "ip neigh show"), ("h4", "ip neigh show"),
    # no prefix route for an address whose prefix is 0.0.0.0 (zeronet)
    ("r0", "ip addr add 10.162.0.1/1 dev r0-eth4"), ("r0", "ifconfig r0-eth5 10.7.0.1/33"),
    ("r0", "ip route show"), ("r0", "ip route get 10.9.9.9"), ("r0", "ip route show table local"),
]


def test_differential_edge_commands_sim_vs_mininet(real):
    sc = RoutingGenerator(1, capabilities=real.capabilities).generate(0).scenario
    rep = run_both(sc, EDGE_COMMANDS, EnvPair(1, real))
    assert rep.steps == len(EDGE_COMMANDS)
    assert rep.agree, json.dumps([d.__dict__ for d in rep.diffs[:2]], indent=1)[:4000]
