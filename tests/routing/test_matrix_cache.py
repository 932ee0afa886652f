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
    from netarena_gym.routing.pair_store import PairStore
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
    from netarena_gym.routing.pair_store import PairStore
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


def test_one_router_walks_again_only_probes_to_or_from_a_changed_prefix(monkeypatch):
    """Every probe reads the one router, yet a change of one prefix's route there walks
    again only the probes to or from that prefix (as at level 1 and 2)."""
    from netarena_gym.core.scenario import Scenario
    from netarena_gym.core.ipv4 import in_prefix, ip_to_int
    from netarena_gym.routing.pair_store import PairStore
    from netarena_gym.routing.topology import TopologySpec
    walked = []
    real = PairStore._probe
    monkeypatch.setattr(PairStore, "_probe", lambda self, i, j: walked.append((i, j)) or real(self, i, j))
    b = SimBackend()
    spec = TopologySpec.uniform(4, 2)
    b.apply(Scenario(task="routing", level=1, params={"topology": spec.to_dict()}, faults=(),
                     seed=None))
    assert b.observe().all()
    first = len(walked)  # 5 classes (4 subnets, the router): 20 probes between, 4 within
    walked.clear()
    b.run({"machine": "r0", "command": "ip route add blackhole 192.168.3.0/25"})
    m = b.observe()
    store, oracle = b.state.oracle.pairs, b.state.oracle
    net = ip_to_int("192.168.3.0")
    inside = [i for i, d in enumerate(store.dsts) if in_prefix(d, net, 25)]
    assert inside and not m[np.ix_([oracle.index["h1"]], inside)].any()
    assert walked and len(walked) <= first // 2
    for i, j in walked:
        assert in_prefix(store.dsts[j], net, 25) or in_prefix(store.source(i, j) or 0, net, 25)
    assert (m == brute(oracle)).all()


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


# ----------------------------------------------------------------- finer dependencies
def fmt(v: int) -> str:
    return ".".join(str((v >> s) & 255) for s in (24, 16, 8, 0))


def transit_commands(b, rng):
    """One random break or repair, mostly on a router: interface addresses (flush, the
    right one, a wrong mask, another interface's or a neighbour's: a duplicate, a
    foreign one, a secondary), link state, MTU, ARP, netem, routes, policy rules and
    filter rules with and without address selectors, sysctls, permanent neighbours;
    sometimes on a host."""
    net, lay = b.state.net, b.layout
    routers = lay.routers
    r = routers[int(rng.integers(len(routers)))]
    node = net.nodes[r]
    itfs = [i for i in node.interfaces if i != "lo"]
    itf = itfs[int(rng.integers(len(itfs)))]
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    nbrs = lay.neighbors(r)
    subnet = pick(lay.subnets)
    host = pick(subnet.hosts)
    sub = f"{fmt(subnet.net)}/24"
    own = [(a.ip, a.plen) for i in node.interfaces.values() for a in i.addresses if not i.loopback]
    # the addresses it was built with, on any of its interfaces (as a /32 too)
    built = [(s.gateway, 24) for s in lay.subnets if s.router == r] + [
        (ln.a_ip if ln.a == r else ln.b_ip, 30) for ln in lay.links if r in (ln.a, ln.b)]
    built += [(ip, 32) for ip, _ in built]
    addr = pick([*own, *built, (subnet.gateway, 24), (net.probe_ip[host], 24),
                 (0x0A4D0001 + (int(rng.integers(4)) << 8), 24)]
                + [(gw, 24 if rng.random() < 0.5 else 30) for _, _, gw in nbrs])
    gw = pick(nbrs) if nbrs else None
    if rng.random() < 0.15:
        h = net.nodes[host]
        hitf = f"{host}-eth0"
        return host, pick([
            f"ip addr add {fmt(addr[0])}/{addr[1]} dev {hitf}", f"ip addr flush dev {hitf}",
            f"ip addr add {fmt(subnet.gateway)}/24 dev {hitf}",
            f"ip route replace default via {fmt(subnet.gateway)}",
            f"ip route add default via {fmt(net.probe_ip[pick(subnet.hosts)])}",
            f"ip link set {hitf} mtu 68", f"ip link set {hitf} mtu 1500",
            f"iptables -A INPUT -s {sub} -j DROP", "iptables -F",
            f"ip link set {hitf} {pick(['up', 'down'])}",
        ] + [f"ip addr del {fmt(a.ip)}/{a.plen} dev {hitf}" for a in h.interfaces[hitf].addresses])
    cmds = [
        f"ip addr flush dev {itf}", f"ip addr add {fmt(addr[0])}/{addr[1]} dev {itf}",
        f"ip link set {itf} down", f"ip link set {itf} up", f"ip link set {itf} mtu 68",
        f"ip link set {itf} mtu 1500", f"ip link set dev {itf} arp {pick(['on', 'off'])}",
        f"tc qdisc replace dev {itf} root netem delay 300ms", f"tc qdisc del dev {itf} root",
        f"ip route add blackhole {fmt(net.probe_ip[host])}/32", f"ip route del {sub}",
        f"ip route replace {sub} dev {itf}",
        *[f"ip route replace {fmt(ln.net)}/30 dev {itf}" for ln in lay.links if r in (ln.a, ln.b)],
        f"ip rule add from {sub} prohibit pref 100", f"ip rule add to {sub} prohibit pref 101",
        f"ip rule add iif {itf} prohibit pref 102", f"ip rule add not to {sub} prohibit pref 103",
        "ip rule del pref 100", "ip rule del pref 103",
        "ip rule del pref 101", "ip rule del pref 102",
        f"iptables -A FORWARD -s {sub} -j DROP", f"iptables -I FORWARD -d {sub} -j REJECT",
        f"iptables -A INPUT -s {sub} -j DROP", f"iptables -A OUTPUT -d {sub} -j DROP",
        f"iptables -A FORWARD ! -s {sub} -j DROP", f"iptables -I FORWARD ! -d {sub} -j DROP",
        "iptables -A FORWARD -p icmp -j DROP", f"iptables -A FORWARD -i {itf} -j DROP",
        "iptables -D FORWARD 1", "iptables -F", f"iptables -P FORWARD {pick(['DROP', 'ACCEPT'])}",
        f"sysctl -w net.ipv4.ip_forward={pick(['0', '1'])}",
        f"sysctl -w net.ipv4.conf.{itf}.forwarding={pick(['0', '1'])}",
    ] + [f"ip addr del {fmt(a.ip)}/{a.plen} dev {itf}" for a in node.interfaces[itf].addresses]
    if gw is not None:
        cmds += [f"ip route replace {sub} via {fmt(gw[2])} dev {gw[1]}",
                 f"ip route replace default via {fmt(gw[2])} dev {gw[1]}",
                 f"ip neigh replace {fmt(gw[2])} lladdr 02:00:00:00:09:09 dev {gw[1]} nud permanent"]
    return r, pick(cmds)


def check_store(oracle, sample: int | None = None, rng=None) -> int:
    """Every probe the pair store keeps (its own and its base's still valid) is what a
    walk from scratch gives (hop by hop, no memo): the same result and source address,
    and the keys that walk reads are among those the store recorded for it. Returns how
    many were checked. A matrix served from the content cache leaves the store where it
    was: it is brought up to the network's state first."""
    from netarena_gym.routing.grader import probe
    from netarena_gym.routing.matrix_cache import segment_deps
    key = oracle._key()
    if oracle._seen != list(key):
        oracle._compute(key)
    store, net = oracle.pairs, oracle.net
    nodes, dsts, n = oracle._nodes, oracle._dst, len(oracle._nodes)
    seg = segment_deps(net, {x.name: i for i, x in enumerate(nodes)})
    held: dict[int, tuple] = {}
    base = store.base
    if base is not None:
        base_rdeps = base.rdeps
        for q, ok in base.res.items():
            if q not in store.dead:
                held[q] = (ok, base.src[q], base_rdeps)
    rdeps = store.rdeps  # listed out once
    for q, ok in store.res.items():
        held[q] = (ok, store.src[q], rdeps)
    todo = sorted(held)
    if sample is not None and sample < len(todo):
        todo = sorted(rng.choice(todo, sample, replace=False).tolist())
    want = set(todo)
    keys: dict[int, set] = {q: set() for q in todo}
    for rdeps in {id(v[2]): v[2] for v in held.values()}.values():
        for k, readers in enumerate(rdeps):
            for q in readers:
                if q in want and held[q][2] is rdeps:
                    keys[q].add(k)
    for q in todo:
        i, j = divmod(q, n)
        log = []
        ok, src = probe(net, nodes[i], dsts[j], oracle.timeout_s, log)
        read = {i}
        for key in log:
            read.update(seg.get(key, ()))
        assert (held[q][0], held[q][1]) == (ok, src), (nodes[i].name, nodes[j].name)
        assert read <= keys[q], (nodes[i].name, nodes[j].name, read - keys[q])
    return len(todo)


TREE16 = {"shape": "tree", "routers": 16, "subnets": 2, "hosts": 2}
TREE64 = {"shape": "tree", "routers": 64, "subnets": 2, "hosts": 2}
SPINE12 = {"shape": "leaf-spine", "routers": 12, "subnets": 2, "hosts": 2}
RING8 = {"shape": "ring", "routers": 8, "subnets": 2, "hosts": 2}


@pytest.mark.parametrize("topology,seeds,steps", [(TREE16, range(2), 30), (RING8, range(2), 30),
                                                  (SPINE12, range(2), 25)],
                         ids=["tree16", "ring8", "spine12"])
def test_kept_probes_are_walks_from_scratch_through_transit_changes(topology, seeds, steps):
    """Random breaks and repairs on transit routers (and hosts): after each, every probe
    the store keeps is a walk from scratch, and the matrix is the brute force's."""
    gen = RoutingGenerator(3, topology=topology)
    for seed in seeds:
        b = SimBackend()
        b.apply(gen.generate(seed).scenario)
        assert b.state.oracle.pairs.base is not None
        rng = np.random.default_rng(seed)
        b.observe()
        check_store(b.state.oracle)
        for k in range(steps):
            machine, command = transit_commands(b, rng)
            b.run({"machine": machine, "command": command})
            m = b.observe()
            check_store(b.state.oracle)
            if k % 6 == 5:
                assert (m == brute(b.state.oracle)).all(), (seed, machine, command)


def test_kept_probes_are_walks_from_scratch_at_64_routers():
    gen = RoutingGenerator(3, topology=TREE64)
    b = SimBackend()
    b.apply(gen.generate(5).scenario)
    rng = np.random.default_rng(5)
    b.observe()
    for _ in range(10):
        machine, command = transit_commands(b, rng)
        b.run({"machine": machine, "command": command})
        b.observe()
        assert check_store(b.state.oracle, sample=1000, rng=rng) == 1000


def test_a_change_walks_again_only_the_probes_it_can_affect(monkeypatch):
    """On a healthy 16-router tree, from its pristine base: an unrelated extra address
    on a router's LAN walks again only the router's own probes and those over that LAN;
    a filter rule for one subnet only probes to or from it; flushing a transit interface
    only probes to or from the subtree behind it."""
    from netarena_gym.core.ipv4 import in_prefix
    from netarena_gym.core.scenario import Scenario
    from netarena_gym.routing.pair_store import PairStore
    from netarena_gym.routing.shapes import shape_spec
    spec = shape_spec("tree", [(2, 2)] * 16)
    sc = Scenario(task="routing", level=3, params={"topology": spec.to_dict()}, faults=(),
                  seed=None)
    for _ in range(2):  # the second build starts from the pristine base
        b = SimBackend()
        b.apply(sc)
    b.observe()
    oracle, store, lay = b.state.oracle, b.state.oracle.pairs, b.layout
    assert store.base is not None and not store.res
    walked = []
    real = PairStore._probe
    monkeypatch.setattr(PairStore, "_probe", lambda self, i, j: walked.append((i, j)) or real(self, i, j))
    r1 = oracle.index["r1"]
    read_r1 = {divmod(q, store.n) for q in store.base.rdeps[r1]}
    lan = {oracle.index[h] for s in lay.subnets if s.iface == "r1-eth1" for h in s.hosts}
    b.run({"machine": "r1", "command": "ip addr add 10.99.0.1/24 dev r1-eth1"})
    b.observe()
    assert walked and len(walked) < len(read_r1) // 5
    assert all(i == r1 or i in lan or j in lan for i, j in walked)
    walked.clear()
    sub = lay.subnets[5]
    b.run({"machine": "r1", "command": f"iptables -A FORWARD -s {fmt(sub.net)}/24 -j DROP"})
    b.observe()
    assert walked
    for i, j in walked:
        assert in_prefix(store.dsts[j], sub.net, 24) or in_prefix(store.source(i, j), sub.net, 24)
    walked.clear()
    link = next(ln for ln in lay.links if ln.a == "r1")  # r1 above ln.b
    below, todo = set(), [link.b]
    while todo:
        r = todo.pop()
        below |= {r} | {h for s in lay.subnets if s.router == r for h in s.hosts}
        todo += [x.b for x in lay.links if x.a == r]
    below = {oracle.index[x] for x in below}
    b.run({"machine": "r1", "command": f"ip addr flush dev {link.a_iface}"})
    b.observe()
    assert walked and all((i in below) != (j in below) or r1 in (i, j) for i, j in walked)
    check_store(oracle)


# r0 (eth1: s1 h1 h2 .1.0/24; eth2: 172.16.0.1/30 to r1; eth3: 172.16.1.1/30 to r2),
# r1 (eth1: s2 h3 h4; eth2: 172.16.0.2), r2 (eth1: s3 h5 h6; eth2: 172.16.1.2); one
# sequence per way a change reaches probes that the finer dependencies must still see
TREE3 = {"hosts": [[2], [2], [2]], "parents": [0, 0]}
REACH = {
    # r1 resolves its gateway 172.16.0.1 on the r0-r1 link, where r0 answers for it
    # although it now sits on r0's other link (arp_ignore=0): a neighbour's gateway
    "gateway answered from another interface": (
        [("r0", "ip addr flush dev r0-eth2"), ("r0", "ip addr add 10.0.0.1/24 dev r0-eth2"),
         ("r0", "ip route add 172.16.0.0/30 dev r0-eth2"),
         ("r0", "ip route add 192.168.2.0/24 via 172.16.0.2 dev r0-eth2"),
         ("r0", "ip addr add 172.16.0.1/32 dev r0-eth3")],
        [("h3", "h1", True)]),
    # probes dropped at r0 for an MTU under their size never resolved on that link
    "an MTU under the probe's size, raised": (
        [("r0", "ip link set r0-eth2 mtu 68"), ("r0", "ip link set r0-eth2 mtu 1500")],
        [("h1", "h3", True)]),
    # r1 without any address sends nothing; an address on another interface becomes the
    # source of all its probes (its own probes go, whatever they read)
    "a router without addresses picks a source again": (
        [("r1", "ip addr flush dev r1-eth2"), ("r1", "ip route add 172.16.0.0/30 dev r1-eth2"),
         ("r1", "ip route add 192.168.1.0/24 via 172.16.0.1 dev r1-eth2"),
         ("r1", "ip addr flush dev r1-eth1"), ("r1", "ip addr add 192.168.2.1/24 dev r1-eth1")],
        [("r1", "h1", False)]),
    "negated filter selectors": (
        [("r0", "iptables -A FORWARD ! -d 192.168.2.0/24 -j DROP"),
         ("r0", "iptables -D FORWARD 1"), ("r0", "iptables -A FORWARD ! -s 192.168.2.0/24 -j DROP")],
        [("h5", "h1", False), ("r0", "h5", True)]),
    "policy rules by source, destination and interface": (
        [("r0", "ip rule add from 192.168.3.0/24 prohibit pref 100"),
         ("r0", "ip rule add to 192.168.2.0/24 prohibit pref 101"),
         ("r0", "ip rule del pref 100"),
         ("r0", "ip rule add iif r0-eth3 to 192.168.1.0/24 prohibit pref 103"),
         ("r0", "ip rule add not to 192.168.1.0/24 prohibit pref 104"), ("r0", "ip rule del pref 104"),
         ("r0", "ip rule add iif r0-eth1 prohibit pref 102")],
        [("h5", "h3", False), ("h1", "h5", False), ("r2", "r0", True)]),
    # r0 given r1's transit address on its LAN port answers no ARP request r1 sends from
    # it (a martian source): replies through r1 to s1 stop, although neither address of
    # those probes changed and r0's link to r1 did not
    "a neighbour's own address, taken": (
        [("r0", "ip addr add 172.16.0.2/32 dev r0-eth1")],
        [("h3", "h1", False), ("h1", "h3", False), ("h5", "h1", True)]),
    # h2 carries the gateway's address too; r0's LAN address list is then rebuilt
    "a duplicate of the gateway, then its addresses reordered": (
        [("h2", "ip addr flush dev h2-eth0"), ("h2", "ip addr add 192.168.1.1/24 dev h2-eth0"),
         ("r0", "ip addr flush dev r0-eth1"), ("r0", "ip addr add 192.168.1.7/24 dev r0-eth1"),
         ("r0", "ip addr add 192.168.1.1/24 dev r0-eth1")],
        []),
}


@pytest.mark.parametrize("name", sorted(REACH))
def test_finer_dependencies_see_every_way_a_change_reaches_a_probe(name):
    from tests.routing.conftest import scenario
    cmds, expect = REACH[name]
    b = SimBackend()
    b.apply(scenario([], topology=TREE3))
    b.observe()
    for machine, command in cmds:
        res = b.run({"machine": machine, "command": command})
        assert res.status == 0, (command, res.output)
        m = b.observe()
        check_store(b.state.oracle)
        assert (m == brute(b.state.oracle)).all(), command
    idx = b.state.oracle.index
    for a, c, reachable in expect:
        assert bool(m[idx[a], idx[c]]) is reachable, (a, c)


def test_address_test_on_arrays_is_the_test_of_each_address():
    """``AddressTest.hits`` (a base's forgetting, on arrays) agrees with the test of each
    address, None (-1) included, for prefixes and for a gateway test."""
    from netarena_gym.routing.matrix_cache import AddressTest, gateway_test
    rng = np.random.default_rng(0)
    ips = np.concatenate([rng.integers(0, 2**32, 300), [-1, 0, 2**32 - 1],
                          0xC0A80100 + rng.integers(0, 512, 200)]).astype(np.int64)
    for prefixes in ([(0xC0A80100, 24)], [(0xC0A80105, 32), (0x0A000000, 8), (0, 1)], []):
        test = AddressTest(prefixes)
        want = [test(None if ip < 0 else ip) for ip in ips.tolist()]
        assert test.hits(ips).tolist() == want
        assert any(want) or not prefixes
    b = SimBackend()
    b.apply(RoutingGenerator(1).generate(0).scenario)
    net = b.state.net
    host = net.hosts()[0]
    gw = {rt.next_hop for routes in host.tables.values() for rt in routes if rt.next_hop}
    test = gateway_test(host, frozenset(gw))
    addrs = np.array(list(net.probe_ip.values()) + [-1], dtype=np.int64)
    want = [test(None if ip < 0 else ip) for ip in addrs.tolist()]
    assert test.hits(addrs).tolist() == want and any(want)
