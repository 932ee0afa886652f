"""The dynamic neighbour (ARP) cache: what ``ip neigh`` and ``arp -n`` show (Linux 6.x
``net/core/neighbour.c`` and ``net/ipv4/arp.c``, as iproute2 6.x and net-tools 2.10 print it).

Entries exist only where traffic resolved them. The model is deterministic (no clock):

* A **traffic round** is the backend's probe round (``observe``: every node pings every other
  node once, ``ping -c1``). At the start of a round the tables are emptied, as the Mininet
  backend flushes them before it probes, and the round's ARP exchanges fill them. The
  round's tables are a pure function of the configuration, computed when first looked at
  and cached by content; configuration changes made since the round (in the same command
  line) are taken as already probed, except that taking a link down or removing its last
  address drops the device's entries (``neigh_ifdown``), as the kernel does.
* An ARP exchange ``X`` asks for ``t`` on ``dev`` (a node owning ``t`` answers unless it
  also owns ``X``'s sender address, a martian source for ``ip_route_input``): if someone
  answers, ``X`` holds ``t`` ``REACHABLE`` and the answering node learns ``X``'s sender
  address (``neigh_event_ns``, ``STALE``); if no one answers, ``X`` holds ``t`` ``INCOMPLETE`` (``arp`` prints
  ``(incomplete)``): the kernel solicits ``mcast_solicit`` (3) times ``retrans_time`` (1 s)
  apart and only then marks the entry ``FAILED``, and every command runs within those 3 s
  of the probe round that the step before ended with (measured on Mininet: ``INCOMPLETE``
  0.3 s and 1.8 s after the round, ``FAILED`` at 3.8 s; the backend flushes before each
  round, so no older unresolved entry survives). Sending through an entry that is already there resolves nothing new
  and confirms a ``STALE`` one (the kernel's DELAY, PROBE, REACHABLE, settled).
* The agent's own ``ping`` and ``traceroute`` add to the current round's tables the same
  way; ``ip neigh flush`` and ``arp -d`` delete entries until the next round.
* ``arp -d HOST`` without ``-i`` (:func:`siocdarp`) deletes on the device of the route to
  ``HOST`` of scope link or narrower (``arp_req_delete``: ``ip_route_output`` at
  ``RT_SCOPE_LINK``), so it fails where that lookup fails: ``Network is unreachable`` with
  no such route (a gateway route does not count; nor does a main table that a deleted
  rule no longer reaches), ``Permission denied`` under a ``prohibit`` rule.
* ``ip neigh add|replace|change`` makes a ``PERMANENT`` entry (``Node.static_neigh``, part
  of the configuration): traffic through it asks no one and goes to whoever owns the MAC
  on the segment (no one: lost); probe rounds and a plain flush keep it; ``nud
  permanent``/``nud all`` flushes, ``ip neigh del``, ``arp -d``, taking the link down and
  removing its last address drop it.

Left out: timers (REACHABLE turning STALE after ``base_reachable_time``; INCOMPLETE
turning FAILED 3 s after the first solicitation, which a command line that itself runs for
over 3 s, e.g. several ``ping -W1`` in a row, would see; the model shows the state at the
start of a step), garbage
collection (the kernel keeps entries below ``gc_thresh1`` anyway), entries added with a
``nud`` state other than permanent, proxy ARP and ``arp_ignore``/``arp_announce`` other than 0. The kernel lists
entries in hash order; the simulator lists them by interface, then address.
"""
from __future__ import annotations

from contextlib import contextmanager

from netarena_gym.core.ipv4 import in_prefix
from netarena_gym.routing.grader import pair_ok
from netarena_gym.routing.state import NeighEntry, Network, Node

__all__ = ["round_tables", "table", "entries", "recording", "flush", "delete", "add",
           "siocdarp"]

Table = dict[tuple[str, int], NeighEntry]


def _apply(log: list, get) -> None:
    """Replay ARP resolutions (``Network.arp_log`` records) into the tables ``get`` gives."""
    for node, ifname, ip, res in log:
        t = get(node.name)
        key = (ifname, ip)
        e = t.get(key)
        if res is None:
            if e is None or e.mac is not None:
                t[key] = NeighEntry(ip, ifname, None, "INCOMPLETE")
            continue
        peer, pif = res
        pmac = peer.interfaces[pif].mac
        if e is not None and e.mac == pmac:
            if e.state != "REACHABLE":
                t[key] = NeighEntry(ip, ifname, pmac, "REACHABLE")
            continue
        t[key] = NeighEntry(ip, ifname, pmac, "REACHABLE")
        sip = node.select_source(ifname, ip)
        if sip is None:
            continue
        pt = get(peer.name)
        mymac = node.interfaces[ifname].mac
        pe = pt.get((pif, sip))
        if pe is None or pe.mac != mymac:
            pt[(pif, sip)] = NeighEntry(sip, pif, mymac, "STALE")


def _compute_round(net: Network) -> dict[str, Table]:
    tables: dict[str, Table] = {name: {} for name in net.nodes}
    log: list = []
    saved, net.arp_log = net.arp_log, log
    try:
        order = net.probe_order()
        for a in order:
            src = net.nodes[a]
            for b in order:
                if a != b:
                    pair_ok(net, src, net.probe_ip[b], 1.0)
    finally:
        net.arp_log = saved
    _apply(log, tables.__getitem__)
    return tables


def round_tables(net: Network) -> dict[str, Table]:
    """Every node's table after one probe round over the current configuration (cached by
    the network's content; treat as read-only)."""
    c = net.neigh_cache
    if c is not None and c[0] == net.version:
        return c[2]
    fp = net.fingerprint()
    if c is not None and c[1] == fp:
        net.neigh_cache = (net.version, fp, c[2])
        return c[2]
    tables = _compute_round(net)
    net.neigh_cache = (net.version, fp, tables)
    return tables


def table(net: Network, node: str) -> Table:
    """``node``'s table now (read-only)."""
    t = net.neigh_tables.get(node)
    if t is not None:
        return t
    base = round_tables(net)[node]
    gone = net.neigh_forgotten.get(node)
    if gone:
        return {k: v for k, v in base.items() if k[0] not in gone}
    return base


def _explicit(net: Network, node: str) -> Table:
    t = net.neigh_tables.get(node)
    if t is None:
        t = net.neigh_tables[node] = dict(table(net, node))
    return t


def entries(net: Network, node: Node, ifname: str | None = None) -> list[NeighEntry]:
    """``node``'s entries (optionally on ``ifname`` only), by interface then address."""
    order = {name: i for i, name in enumerate(node.interfaces)}
    t = table(net, node.name)
    if node.static_neigh:
        t = dict(t)
        for (dev, ip), mac in node.static_neigh.items():
            t[(dev, ip)] = NeighEntry(ip, dev, mac, "PERMANENT")
    out = [e for e in t.values() if ifname is None or e.dev == ifname]
    out.sort(key=lambda e: (order.get(e.dev, len(order)), e.ip))
    return out


@contextmanager
def recording(net: Network):
    """Agent traffic inside the block resolves neighbours into the current round."""
    if net.arp_log is not None:  # nested: the outer block records
        yield
        return
    log: list = []
    net.arp_log = log
    try:
        yield
    finally:
        net.arp_log = None
    if log:
        _apply(log, lambda name: _explicit(net, name))


def flush(net: Network, node: Node, ifname: str | None = None,
          prefix: tuple[int, int] | None = None, states: set[str] | None = None) -> int:
    """``ip neigh flush``: delete the matching entries; returns how many. ``states``
    (lower-case ``nud`` names): only those; None: every state but ``permanent``."""
    def hit(dev: str, ip: int, state: str) -> bool:
        return ((ifname is None or dev == ifname)
                and (prefix is None or in_prefix(ip, prefix[0], prefix[1]))
                and (state != "permanent" if states is None else state in states))
    t = _explicit(net, node.name)
    victims = [k for k, e in t.items() if hit(e.dev, e.ip, e.state.lower())]
    for k in victims:
        del t[k]
    perm = [k for k in node.static_neigh if hit(k[0], k[1], "permanent")]
    for k in perm:
        del node.static_neigh[k]
    if perm:
        node.touch()
    return len(victims) + len(perm)


def delete(net: Network, node: Node, ip: int, ifname: str | None = None) -> bool:
    """``arp -d`` / ``ip neigh del``: delete ``ip``'s entry, permanent or not; False if
    there is none."""
    t = _explicit(net, node.name)
    victims = [k for k, e in t.items() if e.ip == ip and (ifname is None or e.dev == ifname)]
    for k in victims:
        del t[k]
    perm = [k for k in node.static_neigh if k[1] == ip and (ifname is None or k[0] == ifname)]
    for k in perm:
        del node.static_neigh[k]
    if perm:
        node.touch()
    return bool(victims or perm)


def add(net: Network, node: Node, ifname: str, ip: int, mac: str, mode: str) -> str | None:
    """``ip neigh add|replace|change ... nud permanent``: None, or the kernel's refusal
    (an entry exists for ``add``, none does for ``change``)."""
    key = (ifname, ip)
    exists = key in node.static_neigh or key in table(net, node.name)
    if mode == "add" and exists:
        return "RTNETLINK answers: File exists"
    if mode == "change" and not exists:
        return "RTNETLINK answers: No such file or directory"
    _explicit(net, node.name).pop(key, None)  # one entry: it becomes the permanent one
    if node.static_neigh.get(key) != mac:
        node.static_neigh[key] = mac
        node.touch()
    return None


_ROUTE_ERRNO = {"prohibit": "Permission denied", "unreachable": "No route to host",
                "blackhole": "Invalid argument"}
_RULE_ERRNO = {"prohibit": "Permission denied", "unreachable": "Network is unreachable",
               "blackhole": "Invalid argument"}
NO_ENTRY = "No such device or address"


def siocdarp(net: Network, node: Node, ip: int, ifname: str | None = None) -> str | None:
    """``SIOCDARP`` (``arp -d``): delete ``ip``'s entry on ``ifname``, or, without one, on
    the device of ``ip_route_output(ip, scope link)``. None when deleted, else the errno's
    text: :data:`NO_ENTRY` (``arp`` prints ``No ARP entry for HOST``) or the route
    lookup's error (``arp`` prints ``SIOCDARP(dontpub): TEXT``). Measured on Mininet
    (Linux 6.18, net-tools 2.10)."""
    if ifname is None:
        from netarena_gym.routing.commands.ip_common import SCOPE_VALUE
        from netarena_gym.routing.commands.ip_route_mod import scoped_lpm
        from netarena_gym.routing.state import LOCAL
        found: str | None = None
        for rule in node.rules:
            if not rule.matches(0, ip, "lo", None):
                continue
            if rule.action != "table":
                return _RULE_ERRNO.get(rule.action, "Invalid argument")
            if rule.table == LOCAL:
                if node.is_local(ip):
                    found = "lo"
                    break
                continue
            up = [r for r in node.tables.get(rule.table, ())  # a down device's routes are dead
                  if r.dev is None or r.dev not in node.interfaces or node.interfaces[r.dev].up]
            r = scoped_lpm(up, ip, None, SCOPE_VALUE["link"])
            if r is None or r.type == "throw":
                continue
            if r.type != "unicast":
                return _ROUTE_ERRNO.get(r.type, "Invalid argument")
            found = r.dev
            break
        if found is None:
            return "Network is unreachable"
        ifname = found
    return None if delete(net, node, ip, ifname) else NO_ENTRY
