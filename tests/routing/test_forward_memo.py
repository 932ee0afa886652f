"""The forwarding memo against the hop-by-hop walk: every probe gives the same result,
the same source address and the same dependencies, over generated scenarios of every
level and shape (64 routers included, faults on transit links included) and after random
repair and break sequences; and whole episodes are the same with the memo as without."""
import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.routing import matrix_cache
from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.catalogue import Dims
from netarena_gym.routing.forward_memo import ForwardingMemo, plain
from netarena_gym.routing.generator import RoutingGenerator
from netarena_gym.routing.grader import probe
from netarena_gym.routing.matrix_cache import segment_deps
from netarena_gym.routing.shapes import max_links
from tests.routing.test_matrix_cache import actions

TREE64 = {"shape": "tree", "routers": 64, "subnets": 2, "hosts": 2}
TREE16 = {"shape": "tree", "routers": 16, "subnets": 2, "hosts": 2}
RING8 = {"shape": "ring", "routers": 8, "subnets": 2, "hosts": 2}
SPINE12 = {"shape": "leaf-spine", "routers": 12, "subnets": 2, "hosts": 2}


def compare_all(net, pairs=None, rng=None):
    """Every pair (or ``pairs`` drawn at random) probed both ways in this state; returns
    how many went through at least one chain of plain nodes."""
    names = net.probe_order()
    nodes = [net.nodes[n] for n in names]
    dsts = [net.probe_ip[n] for n in names]
    seg = segment_deps(net, {n.name: i for i, n in enumerate(nodes)})
    memo = ForwardingMemo(net, seg)
    todo = [(i, j) for i in range(len(nodes)) for j in range(len(nodes)) if i != j]
    if pairs is not None and pairs < len(todo):
        todo = [todo[k] for k in rng.choice(len(todo), pairs, replace=False)]
    for i, j in todo:
        log = []
        ok, src = probe(net, nodes[i], dsts[j], 0.2, log)
        want = {i}
        for key in log:
            want.update(seg.get(key, ()))
        log2 = []
        got_ok, got_src, reads = memo.probe(nodes[i], dsts[j], 0.2, log2)
        deps = {i} | {k for k in range(reads.bit_length()) if reads >> k & 1}
        for key in log2:
            deps.update(seg.get(key, ()))
        assert (got_ok, got_src) == (ok, src), (names[i], names[j])
        assert deps == want, (names[i], names[j])
    return len(memo.memo)


CASES = [(1, None, range(6)), (2, None, range(4)), (3, None, range(8)),
         ("compat", None, range(3)), (3, TREE16, range(4)), (3, RING8, range(4)),
         (3, SPINE12, range(3))]


@pytest.mark.parametrize("level,topology,seeds", CASES,
                         ids=["L1", "L2", "L3", "compat", "tree16", "ring8", "spine12"])
def test_every_probe_is_the_walks_through_repairs_and_breaks(level, topology, seeds):
    gen = RoutingGenerator(level, topology=topology)
    dims = Dims(*gen.cfg.max_dims(), links=max_links(gen.cfg.shape, gen.cfg.routers[1]))
    jumped = 0
    for seed in seeds:
        b = SimBackend()
        b.apply(gen.generate(seed).scenario)
        net = b.state.net
        jumped += compare_all(net)
        rng = np.random.default_rng(seed)
        for k, act in enumerate(actions(b, rng, dims)):
            b.run(act)
            if k % 3 == 2:
                compare_all(net, pairs=400, rng=rng)
        compare_all(net)
    assert jumped  # the memo was used, not only the walk


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_64_router_tree_probes_are_the_walks(seed):
    gen = RoutingGenerator(3, topology=TREE64)
    g = gen.generate(seed)
    net = g.state.net
    assert not all(plain(n) for n in net.routers()) or g.scenario.faults
    compare_all(net, pairs=6000, rng=np.random.default_rng(seed))


def test_a_forwarding_loop_falls_back_to_the_walk():
    """Two routers sending a host's subnet at each other: probes to it loop until the TTL
    runs out, walked hop by hop, with the walk's results and dependencies."""
    from netarena_gym.routing.commands import executor
    gen = RoutingGenerator(3, topology=RING8)
    b = SimBackend()
    b.apply(gen.generate(1).scenario)
    net = b.state.net
    lay = b.layout
    near = {net.segment_of.get((r, k)) for r in ("r0", "r1") for k in net.nodes[r].interfaces}
    far = next(h for h in net.hosts()
               if net.segment_of.get((h.name, f"{h.name}-eth0")) not in near)
    prefix = net.probe_ip[far.name] & 0xFFFFFF00
    ip = lambda v: ".".join(str((v >> s) & 255) for s in (24, 16, 8, 0))  # noqa: E731
    for router, other in (("r1", "r0"), ("r0", "r1")):
        itf, gw = {n: (i, g) for n, i, g in lay.neighbors(router)}[other]
        res = executor.run(net, frozenset(), router,
                           f"ip route replace {ip(prefix)}/24 via {ip(gw)} dev {itf}", 1.0)
        assert res.status == 0, res.output
    memo = ForwardingMemo(net, {})
    r0 = net.nodes["r0"]
    assert memo.probe(r0, net.probe_ip[far.name], 0.2, None)[:2] == (False, probe(
        net, r0, net.probe_ip[far.name], 0.2)[1])
    assert any(o[0] == 3 for o in memo.memo.values())  # a loop was found
    compare_all(net)


def test_a_send_is_replayed_only_where_the_sender_cannot_tell_packets_apart():
    """A host's sends through its gateway are worked out once and replayed for other
    destinations; not where its ``OUTPUT`` chain can tell them apart (a rule for one
    destination) or a netem qdisc delays them. Every probe is still the walk's."""
    from netarena_gym.routing.commands import executor
    gen = RoutingGenerator(3, topology=RING8)
    b = SimBackend()
    b.apply(gen.generate(2).scenario)
    net = b.state.net
    hosts = net.hosts()
    filtered, delayed, target = hosts[0], hosts[3], hosts[-1]
    ip = lambda v: ".".join(str((v >> s) & 255) for s in (24, 16, 8, 0))  # noqa: E731
    for node, cmd in ((filtered, f"iptables -A OUTPUT -d {ip(net.probe_ip[target.name])}/32"
                                 " -j DROP"),
                      (delayed, f"tc qdisc add dev {delayed.name}-eth0 root netem delay 300ms")):
        assert executor.run(net, frozenset(), node.name, cmd, 1.0).status == 0
    names = net.probe_order()
    memo = ForwardingMemo(net, {})
    for a in hosts:
        for name in names:
            if name != a.name:
                want = probe(net, a, net.probe_ip[name], 0.2)
                assert memo.probe(a, net.probe_ip[name], 0.2, None)[:2] == want, (a.name, name)
    kept = {key[0] for key, done in memo.sends.items() if done}
    assert filtered not in kept and delayed not in kept
    assert len(kept & set(hosts)) >= len(hosts) // 2  # (not a host whose first hop fails)
    assert not probe(net, filtered, net.probe_ip[target.name], 0.2)[0]
    assert probe(net, filtered, net.probe_ip[hosts[-2].name], 0.2)[0]


def flat(obs):
    """An observation in full (``repr`` of a large array elides its middle)."""
    if isinstance(obs, dict):
        return tuple((k, flat(v)) for k, v in sorted(obs.items()))
    if isinstance(obs, np.ndarray):
        return obs.dtype.str, obs.shape, obs.tobytes()
    return repr(obs)


def episode(level, topology, seeds, steps=25):
    env = gym.make("NetArena-Routing-v0", level=level, interface="discrete", topology=topology)
    out = []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        env.action_space.seed(seed)
        out.append((flat(obs), info.get("scenario")))
        mask = info.get("action_mask")
        for _ in range(steps):
            a = env.action_space.sample(mask=mask) if mask is not None else env.action_space.sample()
            obs, r, term, trunc, info = env.step(a)
            mask = info.get("action_mask")
            out.append((flat(obs), r, term, trunc))
            if term or trunc:
                break
    return out


@pytest.mark.parametrize("level,topology,seeds", [(1, None, range(3)), (3, None, range(3)),
                                                  (3, TREE16, range(2))])
def test_episodes_are_the_same_with_and_without_the_memo(level, topology, seeds, monkeypatch):
    monkeypatch.setattr(matrix_cache, "MEMO_ROUTERS", 1)  # the memo even for one router
    fast = episode(level, topology, seeds)
    monkeypatch.setattr(matrix_cache, "FAST_PROBES", False)
    assert episode(level, topology, seeds) == fast
