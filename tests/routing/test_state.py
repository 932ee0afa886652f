"""Node bookkeeping: the indexed longest-prefix match of long tables picks the route a scan
picks, before and after a change (the hop-decision memo and source blindness are tested
with the walk that reads them, in test_grader_walk.py)."""
import numpy as np

from netarena_gym.routing.state import LPM_SCAN, MAIN, Node, Route


def test_indexed_lpm_picks_the_route_a_scan_picks():
    rng = np.random.default_rng(0)
    node = Node("r0", "router")
    routes = []
    for _ in range(4 * LPM_SCAN):
        plen = int(rng.choice([0, 8, 16, 24, 30, 32]))
        net = (int(rng.integers(0, 4)) << 24 | int(rng.integers(0, 4)) << 16
               | int(rng.integers(0, 4)) << 8)
        mask = (0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF
        dst = net & mask if rng.random() < 0.9 else net | 1  # some never match, as in a scan
        routes.append(Route(dst=dst, plen=plen, dev="eth0", metric=int(rng.integers(0, 3))))
    node.tables[MAIN] = routes  # unsorted, with ties in prefix and metric: table order decides
    node.touch()

    def scan(d):  # longest prefix, then lowest metric, then first in table order
        best = None
        for r in routes:
            mask = (0xFFFFFFFF << (32 - r.plen)) & 0xFFFFFFFF
            if d & mask == r.dst and (best is None or r.plen > best.plen
                                      or (r.plen == best.plen and r.metric < best.metric)):
                best = r
        return best
    for _ in range(2000):
        d = (int(rng.integers(0, 4)) << 24 | int(rng.integers(0, 4)) << 16
             | int(rng.integers(0, 4)) << 8 | int(rng.integers(0, 3)))
        want = scan(d)
        got = node.lookup(d)
        assert (got.route is want) if want is not None else got.kind == "unreachable"
    # a change rebuilds the index
    node.remove_route(routes[0])
    routes.pop(0)
    for d in range(0, 1 << 26, 1 << 20):
        want = scan(d)
        got = node.lookup(d)
        assert (got.route is want) if want is not None else got.kind == "unreachable"


def test_a_discarded_network_is_freed_by_reference_counting():
    import gc
    import weakref

    from netarena_gym.routing.backends.sim import SimBackend
    from netarena_gym.routing.generator import RoutingGenerator
    was = gc.isenabled()
    gc.disable()
    try:
        b = SimBackend()
        b.apply(RoutingGenerator(3, topology={"shape": "tree", "routers": 6, "subnets": 1,
                                              "hosts": 2}).generate(0).scenario)
        b.observe()
        b.run({"machine": "r0", "command": "ip link set r0-eth1 down"})  # touches the network
        b.observe()
        net = b.state.net
        v = net.version
        net.nodes["r1"].touch()
        assert net.version == v + 1  # a node still reaches its network
        gone = weakref.ref(net)
        del b, net
        assert gone() is None  # freed at once: no reference cycle holds it
    finally:
        if was:
            gc.enable()


def test_a_directly_built_host_is_what_the_node_api_builds():
    """``Node.host`` sets the state directly; ``Node``, ``add_interface``, ``add_address``
    and ``ip route add default`` leave the same attributes, in the same order, and an
    unchanged node's lookups, local addresses and fingerprint."""
    from netarena_gym.routing.state import KERNEL_RULES, Iptables, default_rules
    ip, gw = 0xC0A80264, 0xC0A80201
    fast = Node.host("h5", "h5-eth0", mac="02:00:00:00:06:00", peer_ifindex=107, ip=ip,
                     plen=24, gateway=gw)
    ref = Node("h5", "host")
    ref.add_interface("h5-eth0", mac="02:00:00:00:06:00", peer_ifindex=107)
    assert ref.add_address("h5-eth0", ip, 24) is None
    ref.insert_route(Route(dst=0, plen=0, dev="h5-eth0", gateway=gw))
    ref.version, ref._cache_version, ref._fp_version = 0, -1, -1
    assert list(vars(fast)) == list(vars(ref))
    fp = ("_fingerprint", "_fp_version")
    assert repr({k: v for k, v in vars(fast).items() if k not in fp}) == \
        repr({k: v for k, v in vars(ref).items() if k not in fp})
    assert fast.iptables == Iptables() and fast.rules == default_rules()
    assert fast.rules[0] is KERNEL_RULES[0] and fast.rules is not ref.rules  # records shared
    assert fast.interfaces["lo"] is not ref.interfaces["lo"]  # containers and interfaces not
    assert fast.fingerprint() == ref.fingerprint()
    again = Node.host("h5", "h5-eth0", mac="02:00:00:00:07:00", peer_ifindex=109, ip=ip,
                      plen=24, gateway=gw)  # the same addressing: shared records and lookups
    assert again.fingerprint() is fast.fingerprint() and again.tables[MAIN][0] is fast.tables[MAIN][0]
    assert again.lookup(gw) is fast.lookup(gw)
    again.add_address("h5-eth0", ip + 1, 24)  # a change: its own caches from then on
    assert again.fingerprint() is not fast.fingerprint() and again.lookup(gw) is not fast.lookup(gw)
    assert fast.lookup(gw) == ref.lookup(gw)
    for dst in (ip, gw, 0x0A000001, 0x7F000001, 0xC0A802FF):
        assert fast.lookup(dst) == ref.lookup(dst)
    assert fast.local_ips() == ref.local_ips() and fast.select_source("h5-eth0", gw) == ip


def test_episodes_do_not_depend_on_what_hosts_share():
    """Seeded episodes are the same when nothing is shared across networks (the shared
    host parts and lookups forgotten before every reset and step)."""
    import gymnasium as gym

    import netarena_gym  # noqa: F401
    from netarena_gym.routing.state import clear_shared

    def play(clear):
        env = gym.make("NetArena-Routing-v0", level=3, interface="discrete")
        out, rng = [], np.random.default_rng(0)
        for seed in list(range(6)) * 2:  # each seed twice: the second time, hosts recur
            clear and clear_shared()
            obs, info = env.reset(seed=seed)
            out.append(repr(sorted((k, v.tolist()) for k, v in obs.items())))
            for _ in range(5):
                clear and clear_shared()
                a = int(rng.choice(np.flatnonzero(info["action_mask"])))
                obs, r, term, trunc, info = env.step(a)
                out.append((repr(sorted((k, v.tolist()) for k, v in obs.items())), r,
                            info["broken_pairs"]))
        return out
    assert play(False) == play(True)
