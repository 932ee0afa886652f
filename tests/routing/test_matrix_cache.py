"""The incremental probe matrix (pair store with dependencies, memoised classes) against
a brute-force walk of every node pair, over random repair and break sequences."""
import numpy as np
import pytest

from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.generator import RoutingGenerator
from netarena_gym.routing.grader import ReachabilityOracle, pair_ok
from netarena_gym.routing.catalogue import Dims, fill
from netarena_gym.routing.shapes import max_links
from netarena_gym.core.actions import Catalogue

# commands that break things beyond the catalogue: host changes, long prefixes, rules
EXTRA = [
    ("h1", "ip addr add 192.168.1.77/28 dev h1-eth0"),
    ("h1", "ip link set h1-eth0 down"),
    ("h1", "ip link set h1-eth0 up"),
    ("h2", "ip route add 192.168.1.96/27 via 192.168.1.1"),
    ("r0", "ip route add blackhole 192.168.1.101/32"),
    ("r0", "ip route add 192.168.2.100/31 dev r0-eth1"),
    ("r0", "iptables -A FORWARD -d 192.168.2.102/32 -j DROP"),
    ("r0", "ip rule add to 192.168.1.100/30 prohibit pref 100"),
    ("r0", "ip link set r0-eth1 down"),
    ("r0", "ip link set r0-eth1 up"),
    ("r0", "tc qdisc add dev r0-eth2 root netem delay 300ms"),
    ("r1", "sysctl -w net.ipv4.ip_forward=0"),
    ("r1", "sysctl -w net.ipv4.ip_forward=1"),
    ("r1", "ip addr flush dev r1-eth1"),
    ("r0", "ip neigh replace 192.168.1.100 lladdr 02:00:00:00:03:00 dev r0-eth1 nud permanent"),
    ("r0", "ip neigh replace 192.168.2.100 lladdr 02:00:00:00:02:00 dev r0-eth2 nud permanent"),
    ("r0", "ip link set dev r0-eth2 arp off"),
    ("h1", "ip link set dev h1-eth0 arp off"),
    ("r0", "sysctl -w net.ipv4.conf.r0-eth1.forwarding=0"),
]


def brute(oracle: ReachabilityOracle) -> np.ndarray:
    """Every ordered pair walked, no classes, no caches."""
    net, nodes, dsts = oracle.net, oracle._nodes, oracle._dst
    n = len(nodes)
    m = np.ones((n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            if i != j:
                m[i, j] = pair_ok(net, nodes[i], dsts[j], oracle.timeout_s)
    return m


def actions(backend, rng, dims):
    cat = Catalogue(dims.size)
    fill(cat, backend.layout, dims)
    valid = [e.action for e in cat.entries if e is not None]
    for _ in range(14):
        if rng.random() < 0.4:
            machine, command = EXTRA[int(rng.integers(len(EXTRA)))]
            if machine in backend.state.net.nodes:
                yield {"machine": machine, "command": command}
                continue
        yield valid[int(rng.integers(len(valid)))]


FIXED = {"shape": "ring", "routers": 5, "subnets": 2, "hosts": 2}


@pytest.mark.parametrize("level,seeds,topology", [(1, range(5), None), (3, range(4), None),
                                                  ("compat", range(2), None),
                                                  (3, range(4), FIXED)])
def test_incremental_matrix_equals_brute_force(level, seeds, topology):
    """With ``FIXED`` every episode after the first starts from the pristine base."""
    gen = RoutingGenerator(level, topology=topology)
    dims = Dims(*gen.cfg.max_dims(), links=max_links(gen.cfg.shape, gen.cfg.routers[1]))
    for seed in seeds:
        sc = gen.generate(seed).scenario
        b = SimBackend()
        b.apply(sc)
        if topology is not None:
            assert b.state.oracle.pairs.base is not None
        rng = np.random.default_rng(seed)
        m = b.observe()
        assert (m == brute(b.state.oracle)).all()
        for act in actions(b, rng, dims):
            b.run(act)
            m = b.observe()
            assert (m == brute(b.state.oracle)).all(), (seed, act)


def test_unchanged_pairs_are_not_walked_again(monkeypatch):
    from netarena_gym.routing.matrix_cache import PairStore
    walked = []
    real = PairStore._probe
    monkeypatch.setattr(PairStore, "_probe", lambda self, i, j: walked.append((i, j)) or real(self, i, j))
    gen = RoutingGenerator(3)
    b = SimBackend()
    b.apply(gen.generate(3).scenario)
    b.observe()
    first = len(walked)
    h1 = b.state.oracle.index["h1"]
    read_h1 = b.state.oracle.pairs.readers(h1)
    walked.clear()
    # a change on one host: only probes from or to it (it now has a class of its own) and
    # probes whose walks read it are walked again
    b.run({"machine": "h1", "command": "ip link set h1-eth0 mtu 1400"})
    b.observe()
    assert walked and len(walked) < first
    assert all(h1 in p or p in read_h1 for p in walked)
    walked.clear()
    b.run({"machine": "h1", "command": "ip link set h1-eth0 mtu 1500"})
    b.observe()
    b.run({"machine": "h1", "command": "ip link set h1-eth0 mtu 1400"})
    b.observe()  # a state seen before: the whole matrix comes from the content cache
    assert not walked or len(walked) < first


def test_a_route_change_walks_again_only_probes_to_or_from_its_prefix(monkeypatch):
    from netarena_gym.core.scenario import Scenario
    from netarena_gym.core.ipv4 import in_prefix, ip_to_int
    from netarena_gym.routing.matrix_cache import PairStore
    from netarena_gym.routing.shapes import shape_spec
    spec = shape_spec("ring", [(2,)] * 5)
    sc = Scenario(task="routing", level=3, params={"topology": spec.to_dict()}, faults=(),
                  seed=None)
    b = SimBackend()
    b.apply(sc)
    b.observe()
    store = b.state.oracle.pairs
    r2 = b.state.oracle.index["r2"]
    read_r2 = store.readers(r2)
    walked = []
    real = PairStore._probe
    monkeypatch.setattr(PairStore, "_probe", lambda self, i, j: walked.append((i, j)) or real(self, i, j))
    # r2 reaches r0's first subnet through r1; send it the long way round, through r3
    lay = b.layout
    via = dict((nb, (itf, gw)) for nb, itf, gw in lay.neighbors("r2"))["r3"]
    b.run({"machine": "r2", "command": f"ip route replace 192.168.1.0/24 via "
                                       f"{'172.16.%d.%d' % ((via[1] >> 8) & 255, via[1] & 255)} dev {via[0]}"})
    m = b.observe()
    assert m.all()  # a longer path still works
    net = ip_to_int("192.168.1.0")
    assert walked and len(walked) < len(read_r2)
    for i, j in walked:
        assert in_prefix(store.dsts[j], net, 24) or in_prefix(store.source(i, j) or 0, net, 24)


# r0: eth1 -> s1 (h1 .1.100), eth2 -> s2 (h2 .2.100, h3 .2.101), eth3 -> s3 (h4 .3.100);
# one sequence per rule of the packet engine the incremental matrix must keep: its
# commands, then pairs (a, b, reachable) that show the rule at work
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
    # reply is fragmented by r0 (no DF); a request the other way is dropped (DF)
    "echo reply fragmented at the router": (
        [("h1", "ip link set h1-eth0 mtu 80"), ("r0", "ip link set r0-eth1 mtu 80")],
        [("h1", "h2", True), ("h1", "h4", True), ("h2", "h1", False)]),
}


@pytest.mark.parametrize("name", sorted(SEMANTICS))
def test_incremental_matrix_keeps_the_engines_rules(name):
    from tests.routing.conftest import scenario
    cmds, expect = SEMANTICS[name]
    b = SimBackend()
    b.apply(scenario([]))
    b.observe()  # the caches warm before the change
    for machine, command in cmds:
        res = b.run({"machine": machine, "command": command})
        assert res.status == 0, (command, res.output)
        m = b.observe()
        assert (m == brute(b.state.oracle)).all(), command
    idx = b.state.oracle.index
    for a, c, reachable in expect:
        assert bool(m[idx[a], idx[c]]) is reachable, (a, c)


def test_a_probe_notes_every_neighbour_resolution_in_order():
    """The dependencies a pair records come from ``walk(log=)``: the same calls, in the
    same order, as the walks make to ``Network.neighbor``."""
    from netarena_gym.routing.grader import probe
    gen = RoutingGenerator(3, topology=FIXED)
    b = SimBackend()
    b.apply(gen.generate(1).scenario)
    net, oracle = b.state.net, b.state.oracle
    calls = []
    resolve = net.neighbor
    net.neighbor = lambda node, ifname, ip: calls.append((node.name, ifname)) or resolve(node, ifname, ip)
    try:
        for a in oracle.names:
            for c in oracle.names:
                calls.clear()
                log = []
                probe(net, net.nodes[a], net.probe_ip[c], oracle.timeout_s, log)
                assert log == calls, (a, c)
    finally:
        del net.neighbor
