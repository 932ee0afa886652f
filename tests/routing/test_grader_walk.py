"""The memoised probe walk against the plain packet engine (``walk(detail=False)`` and the
reply through :func:`learned_from`), pair by pair: same outcome, same source address, same
neighbour resolutions in the same order. Over random repair and break sequences, and over
one sequence per rule of the engine that a hop memo could get wrong: the reply through the
neighbour the request's ARP taught, duplicate owners of an address, OUTPUT drops and
rejects, echo replies fragmented at a forwarding router."""
import numpy as np
import pytest

from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.catalogue import Dims
from netarena_gym.routing.generator import RoutingGenerator
from netarena_gym.routing.grader import BASE_MS, learned_from, probe, walk
from netarena_gym.routing import grader_walk
from netarena_gym.routing.grader_walk import MAX_TTL, probe_walk
from netarena_gym.routing.shapes import max_links
from tests.routing.conftest import scenario
from tests.routing.test_matrix_cache import actions

FIXED = {"shape": "tree", "routers": 6, "subnets": 1, "hosts": 2}
# decisions that depend on the source address (a node stops being source blind)
BY_SOURCE = [("r0", "iptables -I FORWARD -s 192.168.1.100/32 -j DROP"),
             ("r0", "ip rule add from 192.168.2.0/24 prohibit pref 200"),
             ("r0", "iptables -I INPUT -s 192.168.1.101/32 -j REJECT")]


def reference(net, a, dst, timeout_s, log):
    """``probe`` spelled with the unmemoised engine, noting every neighbour resolution."""
    resolve = net.neighbor

    def neighbor(node, ifname, ip):
        log.append((node.name, ifname))
        return resolve(node, ifname, ip)
    net.neighbor = neighbor
    try:
        req = walk(net, a, dst, detail=False)
        if not req.ok:
            return False, req.src
        if req.node is a:
            return True, req.src
        rep = walk(net, req.node, req.src, dst, icmp_type="echo-reply", detail=False,
                   learned=learned_from(req))
        return (rep.ok and rep.node is a and req.loss == 0.0 and rep.loss == 0.0
                and BASE_MS + req.delay_ms + rep.delay_ms < timeout_s * 1000.0), req.src
    finally:
        del net.neighbor


def check_all_pairs(b):
    """Every ordered pair agrees; returns ``{(a, b): ok}``."""
    net, oracle = b.state.net, b.state.oracle
    out = {}
    for a in (net.nodes[n] for n in oracle.names):
        for name in oracle.names:
            dst = net.probe_ip[name]
            want_log, got_log = [], []
            want = reference(net, a, dst, oracle.timeout_s, want_log)
            got = probe(net, a, dst, oracle.timeout_s, got_log)
            assert got == want, (a.name, name)
            assert got_log == want_log, (a.name, name)
            out[(a.name, name)] = got[0]
            same_trip(net, a, dst)
    return out


def same_trip(net, a, dst, ttl=MAX_TTL):
    """The request and its reply as ``walk`` makes them: outcome, node, source, delay and
    loss to the bit, and the last hop of a delivered request."""
    req = walk(net, a, dst, detail=False, ttl=ttl)
    got = probe_walk(net, a, dst, None, "echo-request")
    assert got[:5] == (req.ok, got[1] if not req.ok else req.node, req.src, req.delay_ms,
                       req.loss), (a.name, dst)
    if req.ok and req.node is not a:
        assert got[5] == req.last
        rep = walk(net, req.node, req.src, dst, icmp_type="echo-reply", detail=False,
                   learned=learned_from(req), ttl=ttl)
        got = probe_walk(net, req.node, req.src, dst, "echo-reply", None, learned_from(req))
        assert got[0] == rep.ok and got[2:5] == (rep.src, rep.delay_ms, rep.loss)
        if rep.ok:
            assert got[1] is rep.node
    return req.ok, req.error


@pytest.mark.parametrize("level,seeds,topology", [(1, range(3), None), (3, range(3), None),
                                                  ("compat", range(2), None),
                                                  (3, range(2), FIXED)])
def test_probe_walk_equals_plain_walk(level, seeds, topology):
    gen = RoutingGenerator(level, topology=topology)
    dims = Dims(*gen.cfg.max_dims(), links=max_links(gen.cfg.shape, gen.cfg.routers[1]))
    for seed in seeds:
        b = SimBackend()
        b.apply(gen.generate(seed).scenario)
        b.observe()  # fills the memos: later checks read memoised decisions
        check_all_pairs(b)
        for act in actions(b, np.random.default_rng(seed), dims):
            b.run(act)
            check_all_pairs(b)
        for machine, command in BY_SOURCE:
            b.run({"machine": machine, "command": command})
            b.observe()
            check_all_pairs(b)


# r0: eth1 -> s1 (h1 .1.100), eth2 -> s2 (h2 .2.100, h3 .2.101), eth3 -> s3 (h4 .3.100);
# each sequence: its commands, then pairs (a, b, reachable) that show the rule at work
SEMANTICS = {
    # h3 takes h2's address as its own: r0 answers h3 through the entry h3's ARP request
    # taught it, not through a fresh resolution (which h2 wins)
    "reply via the learnt neighbour": (
        [("h3", "ip addr flush dev h3-eth0"), ("h3", "ip addr add 192.168.2.100/24 dev h3-eth0"),
         ("h3", "ip route add default via 192.168.2.1")],
        [("h3", "r0", True), ("h2", "r0", True), ("h3", "h1", False)]),
    # h2 also carries h3's address (secondary): h3, which sends with it, answers ARP for it
    "duplicate owners": (
        [("h2", "ip addr add 192.168.2.101/24 dev h2-eth0")],
        [("h1", "h3", True), ("r0", "h3", True), ("h3", "h1", True)]),
    "OUTPUT drop and reject": (
        [("h1", "iptables -A OUTPUT -d 192.168.2.100/32 -j DROP"),
         ("r0", "iptables -A OUTPUT -d 192.168.3.0/24 -j REJECT"),
         ("h4", "iptables -A OUTPUT -o lo -j DROP")],
        [("h1", "h2", False), ("h1", "h3", True), ("r0", "h4", False), ("h4", "r0", False),
         ("h2", "h4", True)]),
    # h1's side of r0 takes 80-byte frames: the request leaves h1 fragmented, the 84-byte
    # reply is fragmented by r0 (no DF); a request the other way needs DF-less forwarding
    "echo reply fragmented at the router": (
        [("h1", "ip link set h1-eth0 mtu 80"), ("r0", "ip link set r0-eth1 mtu 80")],
        [("h1", "h2", True), ("h1", "h4", True), ("h2", "h1", False)]),
}


@pytest.mark.parametrize("name", sorted(SEMANTICS))
def test_probe_walk_keeps_the_engines_rules(name):
    cmds, expect = SEMANTICS[name]
    b = SimBackend()
    b.apply(scenario([]))
    b.observe()
    check_all_pairs(b)  # memos warm before the change
    for machine, command in cmds:
        res = b.run({"machine": machine, "command": command})
        assert res.status == 0, (command, res.output)
        got = check_all_pairs(b)
        b.observe()
    for a, c, reachable in expect:
        assert got[(a, c)] is reachable, (a, c)
    m = b.state.oracle.matrix()
    idx = b.state.oracle.index
    for a, c, reachable in expect:
        assert bool(m[idx[a], idx[c]]) is reachable, (a, c)


def test_a_change_on_a_node_empties_its_memo():
    b = SimBackend()
    b.apply(RoutingGenerator(1).generate(0).scenario)
    r0 = b.state.net.nodes["r0"]
    b.observe()
    assert r0.memo()
    b.run({"machine": "r0", "command": "sysctl -w net.ipv4.ip_forward=0"})
    assert r0.memo() == {}


def test_source_blind_follows_rules_and_filters():
    b = SimBackend()
    b.apply(RoutingGenerator(1).generate(0).scenario)
    r0 = b.state.net.nodes["r0"]
    r0.set_sysctl("net.ipv4.ip_forward", "1")
    b.run({"machine": "r0", "command": "iptables -F"})
    b.run({"machine": "r0", "command": "ip rule del prohibit"})
    for cmd, blind in [("iptables -A FORWARD -s 10.0.0.0/8 -j DROP", False),
                       ("iptables -F", True),
                       ("ip rule add from 10.0.0.0/8 table main pref 100", False),
                       ("ip rule del pref 100", True)]:
        b.run({"machine": "r0", "command": cmd})
        assert r0.source_blind() is blind, cmd


def test_the_ttl_runs_out_where_the_plain_walk_runs_out(monkeypatch):
    # with a TTL of 3 on a 6-router tree, near pairs get through and far ones expire
    monkeypatch.setattr(grader_walk, "MAX_TTL", 3)
    b = SimBackend()
    b.apply(RoutingGenerator(3, topology=FIXED).generate(0).scenario)
    net = b.state.net
    names = b.state.oracle.names
    seen = {same_trip(net, net.nodes[a], net.probe_ip[n], ttl=3) for a in names for n in names}
    assert (True, None) in seen and (False, "Time to live exceeded") in seen
