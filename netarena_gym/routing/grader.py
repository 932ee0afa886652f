"""The packet engine: walks an ICMP echo and its reply hop by hop through the decisions
Linux makes (policy routing, forwarding switch, filter chains, MTU, ARP, netem), and
derives the all-pairs ``ping -c1 -W<t>`` matrix from it.

The matrix is cached by the content of every node's configuration, so steps that change
nothing, or that return the network to a state seen before, cost a dictionary lookup.

Forwarding follows ``ip_route_input`` then ``ip_forward`` (Linux 6.18): the route's type
and ``forwarding`` first, then the TTL and a DF packet's MTU, then the FORWARD chain, then
the neighbour. ``ip_error`` answers a route failure by its errno: an ``unreachable`` route
``Destination Host Unreachable``, no route or an ``unreachable`` rule ``Destination Net
Unreachable``, ``prohibit`` ``Packet filtered``, ``blackhole`` nothing; and nothing at all
when the input device does not forward (``ip_forward=0``). In detail mode (``ping``, ``traceroute``) an ICMP error a node sends is
walked back to the packet's source as the kernel's ``icmp_send`` sends it (its own
packet: route lookup with rules, OUTPUT chain, no DF, forwarded hop by hop, the sender's
INPUT); one that does not arrive (a ``prohibit`` rule on the router, an OUTPUT drop) leaves
the sender a timeout. The probe matrix (``detail=False``) skips that: it reads only
whether the echo came back. A sender's own route error is the errno ``connect()`` gets:
``Network is unreachable`` (no route, an ``unreachable`` rule), ``No route to host`` (an
``unreachable`` route), ``Permission denied`` (``prohibit``), ``Invalid argument``
(``blackhole``).

Left out: ICMP rate limits (``icmp_send``'s per-destination ``icmp_ratelimit`` and
``icmp_msgs_per_sec``; ``ip_error``'s ``route.error_cost``/``error_burst`` for route
errors): real routers answer only about one error per second per source after a burst, so
a real ``ping`` right after a probe round may print no ``From`` line where the simulator
prints one; errors about the echo reply (they go to the responder); ``learned``
neighbours on an error's way back (``neigh_event_ns``: it resolves afresh).

A walk is the sender's part (:func:`launch`) then the hop-by-hop rest (:func:`carry`);
the probe matrix's walks on larger networks jump along memoised chains of plain hops
between the two (:mod:`netarena_gym.routing.forward_memo`). The matrix itself,
:class:`ReachabilityOracle`, is in :mod:`netarena_gym.routing.grader_oracle` (re-exported
here).
"""
from __future__ import annotations

from dataclasses import dataclass

from netarena_gym.routing.commands.iptables import verdict
from netarena_gym.routing.state import Lookup, Network, Node

PING_PACKET = 84  # IP bytes of a default ping: 56 data + 8 ICMP + 20 IP
MAX_TTL = 64
NO_DF = frozenset({"echo-reply", "destination-unreachable", "time-exceeded"})
HOP_MS = 0.02
BASE_MS = 0.04


class Trip:
    """One direction of a probe. ``ok``: delivered to the destination's stack.

    ``error`` names the failure as ping reports it (``None`` when ok, ``"timeout"`` when the
    packet vanished silently); ``reporter`` is the address an ICMP error came from;
    ``local_error`` is set when the sender's own stack refused (printed as ``ping: ...``);
    ``src`` is the source address the packet carried; ``hops`` is filled when recording;
    ``at``: ``(node, size, local)`` of the node that sent an ICMP error, the size of the
    packet it was about and whether the packet was addressed to that node; ``refused``:
    the sender's OUTPUT chain dropped or rejected the packet (:func:`refused`)."""
    __slots__ = ("ok", "node", "error", "reporter", "local_error", "delay_ms", "loss", "ttl",
                 "hops", "src", "last", "at", "refused")

    def __init__(self, node: Node, ttl: int, record: bool):
        self.ok = False
        self.node = node
        self.error = self.reporter = self.local_error = self.src = None
        self.delay_ms = 0.0
        self.loss = 0.0
        self.ttl = ttl
        self.hops = [] if record else None
        self.last = None  # (sender, its device, the address it resolved) of the last hop
        self.at = None
        self.refused = False  # the sender's OUTPUT chain dropped it: send() failed (EPERM)


_REJECT_TEXT = {
    None: "Destination Port Unreachable",
    "icmp-port-unreachable": "Destination Port Unreachable",
    "icmp-host-unreachable": "Destination Host Unreachable",
    "icmp-net-unreachable": "Destination Net Unreachable",
    "icmp-proto-unreachable": "Destination Protocol Unreachable",
    "icmp-admin-prohibited": "Packet filtered",
    "icmp-net-prohibited": "Packet filtered",
    "icmp-host-prohibited": "Packet filtered",
    "tcp-reset": "Destination Port Unreachable",
}


def _filter(node: Node, chain: str, src: int, dst: int, proto: str, in_if, out_if,
            icmp_type: str | None) -> tuple[str, str | None]:
    ipt = node.iptables
    if not ipt.chains[chain] and ipt.policies[chain] == "ACCEPT":
        return "ACCEPT", None
    return verdict(ipt, chain, src, dst, proto, in_if, out_if, icmp_type)


def _reply_source(node: Node, toward: int) -> int | None:
    """Source address a node uses for ICMP errors it sends toward ``toward``."""
    res = node.lookup(toward, 0, "lo")
    if res.kind != "unicast":
        return node.select_source(None, toward)
    if res.route is not None and res.route.src is not None:
        return res.route.src
    return node.select_source(res.dev, res.gateway if res.gateway is not None else toward)


def _no_source(node: Node, toward: int) -> None:
    return None


def _egress(trip: Trip, node: Node, dev: str) -> None:
    q = node.interfaces[dev].qdisc
    if q is not None and q.kind == "netem":
        trip.delay_ms += q.delay_ms
        keep = (1.0 - trip.loss) * (1.0 - q.loss_pct / 100.0) * (1.0 - q.corrupt_pct / 100.0)
        trip.loss = 1.0 - keep


def walk(net: Network, origin: Node, dst: int, src: int | None = None, *,
         size: int = PING_PACKET, dont_fragment: bool = False, proto: str = "icmp",
         icmp_type: str = "echo-request", ttl: int = MAX_TTL, record: bool = False,
         detail: bool = True, learned: tuple | None = None, log: list | None = None,
         oif: str | None = None) -> Trip:
    """Send one packet from ``origin`` (locally generated) to ``dst``. With
    ``detail=False`` (the probe matrix) failures skip working out who reports them.
    ``learned``: ``(device, address, (node, interface))``, a neighbour ``origin`` learnt
    from the ARP request of the packet it answers (:func:`learned_from`). ``log`` (when
    given) gets ``(node name, device)`` of every neighbour resolution, in order. ``oif``:
    the sending socket's device (:func:`sender_lookup`)."""
    reply_source = _reply_source if detail else _no_source
    trip = Trip(origin, ttl, record)
    first = launch(net, trip, origin, dst, src, size, dont_fragment, proto, icmp_type,
                   record, learned, log, oif)
    if first is None:
        return trip
    node, in_if, src, size = first
    carry(net, trip, node, in_if, dst, src, size, proto, icmp_type, record, reply_source, log)
    if detail and trip.at is not None and trip.reporter is not None:
        _error_back(net, trip, src)
    return trip


ICMP_ERROR_MAX = 576  # icmp_send: an error quotes as much of the packet as fits in 576 bytes


def _error_back(net: Network, trip: Trip, src: int) -> None:
    """Walk the ICMP error that ``trip.at`` sent back to the packet's source ``src``, as
    Linux's ``icmp_send`` does: the node's own packet (its route lookup with rules, source
    address 0 unless the packet was addressed to it, the OUTPUT chain), forwarded hop by
    hop, then the sender's INPUT chain. No DF; no error about an error. If it does not
    reach the sender, the sender saw nothing: ``timeout``."""
    node, size, local = trip.at
    itype = "time-exceeded" if trip.error == "Time to live exceeded" else "destination-unreachable"
    back = walk(net, node, src, trip.reporter if local else None,
                size=min(size + 28, ICMP_ERROR_MAX), icmp_type=itype, detail=False)
    if back.ok and back.node is trip.node:
        trip.reporter = back.src
    else:
        trip.error, trip.reporter = "timeout", None


def route_source(node: Node, res, dst: int, src: int | None) -> tuple[int | None, str | None]:
    """``(source address, error)`` of ``connect()`` on ``node`` to ``dst`` whose own route
    lookup gave ``res`` (not ``local``): the error (None: none) is the errno of the route
    or rule (EHOSTUNREACH: a route), or ENETUNREACH when no source address can be picked;
    the source is ``src``, else the route's, else the one chosen for the route."""
    kind = res.kind
    if kind != "unicast":
        return src, ("connect: No route to host" if kind == "unreachable"
                     and res.route is not None else
                     {"unreachable": "connect: Network is unreachable",
                      "prohibit": "connect: Permission denied",
                      "blackhole": "connect: Invalid argument"}[kind])
    if src is None:
        route = res.route
        if route is not None and route.src is not None:
            return route.src, None
        gw = res.gateway
        src = node.select_source(res.dev, gw if gw is not None else dst)
        if src is None:
            return None, "connect: Network is unreachable"
    return src, None


def sender_lookup(node: Node, dst: int, src: int | None, oif: str | None = None) -> Lookup:
    """The sender's own route lookup (``ip_route_output``). With ``oif`` (a socket bound to
    a device, ``ping -I <interface>``) only routes out of it count, and a destination that
    none of them takes is assumed to be on that link (Linux: "routing tables are wrong"); a
    device that is down reaches nothing."""
    if oif is not None:
        itf = node.interfaces.get(oif)
        if itf is None or not itf.up:
            return Lookup("unreachable")
    res = node.lookup(dst, src or 0, "lo", oif)
    if oif is not None and res.kind not in ("unicast", "local"):
        return Lookup("unicast", dev=oif)
    return res


def sender_route(node: Node, dst: int, src: int | None, oif: str | None = None) -> tuple:
    """``(lookup result, source address, error)`` of ``connect()`` on ``node`` to
    ``dst`` (:func:`route_source`; a local destination has no error and keeps ``src``);
    ``oif``: see :func:`sender_lookup`."""
    res = sender_lookup(node, dst, src, oif)
    if res.kind == "local":
        return res, src, None
    src, error = route_source(node, res, dst, src)
    return res, src, error


def refused(trip: Trip, node: Node, verdict: str, how: str | None, src: int,
            proto: str) -> None:
    """The sender's OUTPUT chain dropped or rejected its packet (Linux 6.18, iputils
    20221126, as Mininet shows): ``send()`` fails with EPERM, which a UDP or TCP socket
    reports (``send: Operation not permitted``; traceroute stops on it whatever the probe).
    Ping's raw ICMP socket first reads its error queue: a REJECT sends the sender an ICMP
    error (from ``src`` to ``src``, through its own OUTPUT and INPUT chains on ``lo``,
    where the same rule may drop it, as REJECT answers no ICMP error); if it arrives ping
    prints it, then ``ping: sendmsg: Operation not permitted``; else the packet is just
    lost, as after a DROP."""
    trip.refused = True
    if proto != "icmp":
        trip.local_error = "send: Operation not permitted"
        return
    trip.error = "timeout"
    if verdict == "REJECT" and all(
            _filter(node, chain, src, src, "icmp", i, o, "destination-unreachable")[0] == "ACCEPT"
            for chain, i, o in (("OUTPUT", None, "lo"), ("INPUT", "lo", None))):
        trip.error, trip.reporter = _REJECT_TEXT.get(how, "Packet filtered"), src


def launch(net: Network, trip: Trip, origin: Node, dst: int, src: int | None, size: int,
           dont_fragment: bool, proto: str, icmp_type: str, record: bool,
           learned: tuple | None, log: list | None, oif: str | None = None) -> tuple | None:
    """The sender's part of :func:`walk`: its own lookup, filters and first neighbour
    resolution. Returns ``(node, in_if, src, size)`` of the first arrival, or None when
    the trip ended at the sender (``trip`` says how). ``oif``: see :func:`sender_lookup`."""
    node = origin
    res = node.lookup(dst, src or 0, "lo") if oif is None else sender_lookup(node, dst, src, oif)
    if res.kind == "local":
        s = src if src is not None else dst
        trip.src = s
        v, how = _filter(node, "OUTPUT", s, dst, proto, None, "lo", icmp_type)
        if v != "ACCEPT":
            refused(trip, node, v, how, s, proto)
            return None
        v, how = _filter(node, "INPUT", s, dst, proto, "lo", None, icmp_type)
        if v != "ACCEPT":
            trip.error = "timeout" if v == "DROP" else _REJECT_TEXT.get(how, "Packet filtered")
            trip.reporter = dst if v == "REJECT" else None
            return None
        trip.ok = True
        if record:
            trip.hops.append((node, dst))
        return None
    if src is None or res.kind != "unicast":
        src, error = route_source(node, res, dst, src)
        if error is not None:
            trip.local_error = error
            return None
    dev, gw = res.dev, res.gateway
    trip.src = src
    v, how = _filter(node, "OUTPUT", src, dst, proto, None, dev, icmp_type)
    if v != "ACCEPT":
        refused(trip, node, v, how, src, proto)
        return None
    itf = node.interfaces[dev]
    if size > itf.mtu:
        if dont_fragment:
            trip.local_error = f"local error: message too long, mtu={itf.mtu}"
            return None
        size = itf.mtu  # fragmented locally; the largest fragment is what must fit
    if itf.qdisc is not None:
        _egress(trip, node, dev)
    nh = gw if gw is not None else dst
    if log is not None:
        log.append((node.name, dev))
    hop = net.neighbor(node, dev, nh)
    if learned is not None and learned[0] == dev and learned[1] == nh:
        hop = learned[2]
    if hop is None:
        trip.error, trip.reporter = "Destination Host Unreachable", src
        return None
    trip.last = (node, dev, nh)
    return hop[0], hop[1], src, size


def carry(net: Network, trip: Trip, node: Node, in_if: str, dst: int, src: int, size: int,
          proto: str, icmp_type: str, record: bool, reply_source, log: list | None,
          stop=None) -> tuple | None:
    """The rest of :func:`walk`: the packet arrives at ``node`` on ``in_if`` and is
    delivered, forwarded or dropped hop by hop until the trip ends (None). ``stop``: a
    test of nodes; when the packet is forwarded to one that passes, ``(node, in_if,
    size)`` of that arrival is returned instead (``trip`` holds the rest)."""
    while True:
        trip.delay_ms += HOP_MS
        if size > node.interfaces[in_if].mtu:  # veth drops frames above the receiver's MTU
            trip.error = "timeout"
            return None
        res = node.lookup(dst, src, in_if)
        if res.kind == "local":
            v, how = _filter(node, "INPUT", src, dst, proto, in_if, None, icmp_type)
            if v == "DROP":
                trip.error = "timeout"
                return None
            if v == "REJECT":
                trip.error, trip.reporter = _REJECT_TEXT.get(how, "Packet filtered"), dst
                trip.at = (node, size, True)
                return None
            if icmp_type == "echo-request" and node.sysctl.get("net.ipv4.icmp_echo_ignore_all") == "1":
                trip.error = "timeout"
                return None
            trip.ok, trip.node = True, node
            if trip.last is not None:
                trip.last += (in_if,)
            if record:
                trip.hops.append((node, dst))
            return None
        # forwarding path
        if record:
            trip.hops.append((node, reply_source(node, src)))
        if not node.forwards_on(in_if):  # ip_error sends nothing when in_if does not forward
            trip.error = "timeout"
            return None
        if res.kind != "unicast":  # ip_error: the route's or rule's errno
            if res.kind == "blackhole":
                trip.error = "timeout"
            else:
                trip.error = ("Packet filtered" if res.kind == "prohibit" else
                              "Destination Host Unreachable" if res.route is not None else
                              "Destination Net Unreachable")
                trip.reporter = reply_source(node, src)
                trip.at = (node, size, False)
            return None
        dev, gw = res.dev, res.gateway
        # ip_forward: the TTL and the DF packet's MTU are checked before the FORWARD hook
        trip.ttl -= 1
        if trip.ttl <= 0:
            trip.error, trip.reporter = "Time to live exceeded", reply_source(node, src)
            trip.at = (node, size, False)
            return None
        out = node.interfaces[dev]
        if size > out.mtu and icmp_type in NO_DF:
            size = out.mtu  # the kernel's echo replies and errors carry no DF: fragmented here
        elif size > out.mtu:
            trip.error = f"Frag needed and DF set (mtu = {out.mtu})"
            trip.reporter = reply_source(node, src)
            trip.at = (node, size, False)
            return None
        v, how = _filter(node, "FORWARD", src, dst, proto, in_if, dev, icmp_type)
        if v == "DROP":
            trip.error = "timeout"
            return None
        if v == "REJECT":
            trip.error, trip.reporter = _REJECT_TEXT.get(how, "Packet filtered"), reply_source(node, src)
            trip.at = (node, size, False)
            return None
        if out.qdisc is not None:
            _egress(trip, node, dev)
        nh = gw if gw is not None else dst
        if log is not None:
            log.append((node.name, dev))
        hop = net.neighbor(node, dev, nh)
        if hop is None:
            trip.error, trip.reporter = "Destination Host Unreachable", reply_source(node, src)
            trip.at = (node, size, False)
            return None
        trip.last = (node, dev, nh)
        node, in_if = hop
        if stop is not None and stop(node):
            return node, in_if, size


@dataclass(slots=True)
class PingOutcome:
    """Result of one echo exchange (``ping -c1``)."""
    ok: bool
    src: int | None
    rtt_ms: float = 0.0
    loss: float = 0.0
    ttl: int = MAX_TTL
    error: str | None = None  # ICMP error text or "timeout"
    reporter: int | None = None
    local_error: str | None = None
    send_refused: bool = False  # sendmsg() failed after the error was read (:func:`refused`)


def echo(net: Network, origin: Node, dst: int, *, size: int = PING_PACKET,
         dont_fragment: bool = False, src: int | None = None, ttl: int = MAX_TTL,
         oif: str | None = None) -> PingOutcome:
    """One ICMP echo request from ``origin`` (``ttl``: its IP TTL, ``ping -t``; ``oif``: the
    device its socket is bound to) and, if it arrives, the reply back (errors about the
    reply go to the responder: not seen)."""
    req = walk(net, origin, dst, src, size=size, dont_fragment=dont_fragment, ttl=ttl, oif=oif)
    if req.local_error:
        return PingOutcome(False, None, local_error=req.local_error)
    s = req.src
    if not req.ok:
        return PingOutcome(False, s, error=req.error, reporter=req.reporter,
                           send_refused=req.refused)
    responder = req.node
    if responder is origin:
        return PingOutcome(True, s, rtt_ms=BASE_MS, ttl=MAX_TTL)
    rep = walk(net, responder, s, dst, size=size, icmp_type="echo-reply",
               learned=learned_from(req), detail=False)
    if not rep.ok or rep.node is not origin:  # delivered elsewhere: a duplicate address
        return PingOutcome(False, s, error=rep.error or "timeout", reporter=None)
    loss = 1.0 - (1.0 - req.loss) * (1.0 - rep.loss)
    return PingOutcome(True, s, rtt_ms=BASE_MS + req.delay_ms + rep.delay_ms, loss=loss,
                       ttl=rep.ttl)


def learned_from(req: Trip) -> tuple | None:
    """What the node a packet was delivered to learnt from the ARP request of its last
    hop (``neigh_event_ns``): the sender's address on that segment is the sender. The
    answer goes back through that entry, not through a fresh resolution, which matters
    when another node on the segment also owns the address (a duplicate: real Mininet
    keeps the two hosts talking)."""
    last = req.last
    if last is None or len(last) < 4:
        return None
    sender, dev, nh, in_if = last
    if sender.interfaces[dev].noarp or (dev, nh) in sender.static_neigh:
        return None  # no ARP request was sent
    sip = sender.select_source(dev, nh)
    if sip is None or (in_if, sip) in req.node.static_neigh:
        return None  # ARP does not override a permanent entry
    return in_if, sip, (sender, dev)


def pair_ok(net: Network, a: Node, dst: int, timeout_s: float) -> bool:
    """Would ``ping -c1 -W<timeout_s>`` from ``a`` to ``dst`` succeed? Any netem loss or
    corruption on the path counts as failure: the oracle asks for reliable reachability."""
    return probe(net, a, dst, timeout_s)[0]


def probe(net: Network, a: Node, dst: int, timeout_s: float,
          log: list | None = None) -> tuple[bool, int | None]:
    """:func:`pair_ok` and the source address the request carried (None: none was sent):
    every route lookup of the exchange is for ``dst`` or for that address. ``log``: see
    :func:`walk`."""
    req = walk(net, a, dst, detail=False, log=log)
    if not req.ok:
        return False, req.src
    if req.node is a:
        return True, req.src
    rep = walk(net, req.node, req.src, dst, icmp_type="echo-reply", detail=False,
               learned=learned_from(req), log=log)
    return (rep.ok and rep.node is a and req.loss == 0.0 and rep.loss == 0.0
            and BASE_MS + req.delay_ms + rep.delay_ms < timeout_s * 1000.0), req.src


# the probe matrix, re-exported: callers import it from this module
from netarena_gym.routing.grader_oracle import ReachabilityOracle  # noqa: E402,F401
