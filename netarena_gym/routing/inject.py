"""Fault injection with remembered effects, for networks built from a kept topology
(:func:`netarena_gym.routing.topology.is_kept`: a fixed shape or ``topology=``): a
scenario's fault commands run through the shell parser
(:func:`netarena_gym.routing.commands.executor.run`, what agents use), and what they did
to each router is kept and copied into later networks of that topology.

A fault's commands change only the router they run on (its interfaces, tables, rules,
sysctls, iptables, qdiscs, permanent neighbours) and that router's entries in the
network's neighbour bookkeeping, and what they do depends only on that router's pristine
state. So the effect of a router's command list is kept under (topology, router,
commands, timeout, missing programs), from the second time it is seen: the router as the
commands left it, each command's result, and the version bumps; a later network gets a
copy of that router (:func:`~netarena_gym.routing.clone.clone_node`), linked to its
transit peers, instead of running the commands again. Networks drawn at random (no
topology key) always run the commands: their effects would rarely be reused. The results
and the state are the same as running them (tests/routing/test_clone.py).
"""
from __future__ import annotations

from netarena_gym.routing.clone import clonable, clone_node
from netarena_gym.routing.commands import executor
from netarena_gym.routing.faults import Fault
from netarena_gym.routing.state import Network, Node
from netarena_gym.shell.parser import CommandResult

__all__ = ["inject", "clear", "MAX_KEPT"]

MAX_KEPT = 4096  # effects kept or noted (least recently used out first)
# key -> (router as left, results, network version bumps, devices forgotten in the
# network's neighbour bookkeeping), None: seen once
_KEPT: dict[tuple, tuple[Node, list[CommandResult], int, frozenset | None] | None] = {}


def inject(net: Network, switches, router_key: tuple | None, faults, timeout_s: float,
           missing: frozenset[str] = frozenset()) -> list[tuple[str, str, CommandResult]]:
    """Inject ``faults`` (scenario fault dicts) into the pristine network ``net`` whose
    routers are named by ``router_key`` (None: none, every command runs); returns
    (router, command, result) in fault order. Faults on a machine that is not a router
    (a hand-written record) always run."""
    order: list[tuple[str, str]] = []
    per_router: dict[str, list[str]] = {}
    for fd in faults:
        f = Fault.from_dict(fd)
        for cmd in f.commands():
            order.append((f.router, cmd))
            per_router.setdefault(f.router, []).append(cmd)
    results = {}
    for router, cmds in per_router.items():
        node = net.nodes.get(router)
        if router_key is None or node is None or node.kind != "router":
            results[router] = iter([executor.run(net, switches, router, c, timeout_s, missing)
                                    for c in cmds])
            continue
        key = (router_key, router, tuple(cmds), timeout_s, missing)
        kept = _KEPT.get(key)
        if kept is not None:
            _KEPT[key] = _KEPT.pop(key)  # the most recently used go out last
            _copy_in(net, router, kept)
            results[router] = iter(kept[1])
            continue
        v0 = net.version
        res = [executor.run(net, switches, router, c, timeout_s, missing) for c in cmds]
        results[router] = iter(res)
        # kept from the second time (what is seen once keeps nothing alive), unless the
        # router has an explicit neighbour table (none in a network just built)
        if key in _KEPT and router not in net.neigh_tables and clonable(net, node):
            tpl = clone_node(net.nodes[router])
            tpl.fingerprint()  # shared by every copy until it changes
            forgotten = net.neigh_forgotten.get(router)
            _KEPT[key] = (tpl, res, net.version - v0,
                          None if forgotten is None else frozenset(forgotten))
        else:
            _KEPT[key] = None
            if len(_KEPT) > MAX_KEPT:
                _KEPT.pop(next(iter(_KEPT)))
    out = []
    for r, c in order:
        res = next(results[r])  # a copy: the log belongs to this episode
        out.append((r, c, CommandResult(res.output, res.status, res.kind)))
    return out


def _copy_in(net: Network, router: str, kept) -> None:
    tpl, _, bumps, forgotten = kept
    old = net.nodes[router]
    new = clone_node(tpl)
    for name, itf in old.interfaces.items():
        if itf.peer is not None:
            mine = new.interfaces[name]
            mine.peer, itf.peer.peer = itf.peer, mine
    version = net.version
    net.add_node(new)  # in the old one's place
    net.version = version + bumps
    if forgotten is not None:
        net.neigh_forgotten[router] = set(forgotten)


def clear() -> None:
    """Forget every kept effect."""
    _KEPT.clear()
