"""``ping`` (iputils 20221126) and ``traceroute`` (2.1.2) over the packet engine, as they
print on Linux 6.18 (Mininet).

``ping -t N`` sends that TTL (``From GW icmp_seq=1 Time to live exceeded``). ``connect()``
errors: ``ping: connect: TEXT`` (exit 2), except EACCES (a ``prohibit`` route or rule),
which iputils prints as ``ping: Do you want to ping broadcast? Then -b. If not, check your
local firewall rules``; traceroute prints its header, then ``connect: TEXT`` or ``send:
TEXT`` (exit 1). An ICMP error that never reaches the sender (see
:mod:`netarena_gym.routing.grader`) is silence: no ``From`` line, a ``* * *`` hop.
traceroute stops at the destination only when its answer (a port unreachable quoting the
probe, 28 bytes more and at most 576; with ``-I`` an echo reply) comes back; otherwise it
goes on probing to ``-m`` or until the command is killed. Left out: the kernel's ICMP rate
limits (the grader's docstring), the path MTU a sender learns from a ``Frag needed`` (the
kernel's route exceptions: real ``ping``'s later packets to that destination are
fragmented locally, so only the first prints the error), traceroute's options beyond
``-n -I -m -q -w -f`` and the packet length
(:mod:`~netarena_gym.routing.commands.traceroute_args`) and its pacing
(without ``-n`` an address prints as ``A (A)``: no name is looked up), ping's beyond
``-c -W -w -i -s -M -I -t -q`` (``-n -4 -v -D -O -U`` are accepted and change nothing;
:mod:`~netarena_gym.routing.commands.ping_args` reads the command line as iputils does).

A sender's own failed ARP (its gateway does not answer) is reported only once the kernel
gives up, after 3 s: ``ping`` with a shorter ``-W``/``-w`` and ``traceroute`` with a
shorter ``-w`` see silence. A packet the sender cannot send (``-M do`` past the device's
MTU, or more than 65,507 data bytes) prints ``ping: local error: message too long,
mtu=N`` per packet after the header and counts as ``+N errors`` (neither under ``-q``); past 65,527 data bytes the
kernel takes the send and nothing leaves. ``-t 0`` is refused by ``setsockopt``
(``cannot set unicast time-to-live``, exit 2). Under 16 data bytes a reply has no send
time in it: no ``time=`` and no ``rtt`` line.

The packets resolve neighbours as they go: the ARP exchanges land in the dynamic
neighbour cache (:func:`netarena_gym.routing.neigh.recording`). Timing is simulated: a
ping that would run past the command timeout (no ``-c``, or a long wait for replies that
never come) is cut off like ``timeout(1)`` would cut it, and reported with the TIMEOUT
outcome. Printed times are deterministic (the differential harness
normalises them)."""
from __future__ import annotations

import dataclasses
import math

from netarena_gym.core.ipv4 import AddressError, int_to_ip, ip_to_int
from netarena_gym.shell.parser import ERROR, INVALID, OK, TIMEOUT, CommandResult
from netarena_gym.routing.commands import CommandContext, register
from netarena_gym.routing import neigh
from netarena_gym.routing.commands.ping_args import PingArgs, parse_ping
from netarena_gym.routing.commands.traceroute_args import parse_traceroute
from netarena_gym.routing.grader import (ICMP_ERROR_MAX, PingOutcome, echo, sender_route,
                                         walk)


def _ping_stderr(line: str) -> bool:
    """iputils prints every complaint through ``error()``, as ``ping: ...``, on stderr; the
    header, replies, ICMP errors received and statistics go to stdout."""
    return line.startswith("ping: ")


def _stderr_unless_ok(text: str, status: int, kind: str) -> CommandResult:
    """A command-line parse's answer: on stderr when it failed (the usage, a bad value);
    ``-V``/``--help`` (exit 0) print on stdout."""
    return (CommandResult.stderr(text, status, kind) if status != 0
            else CommandResult(text, status, kind))


def timed_out(lines: list[str], timeout_s: float) -> CommandResult:
    lines = lines + [f"netarena: command timed out after {timeout_s:g} s (killed)"]
    return CommandResult("\n".join(lines) + "\n", 124, TIMEOUT)


# ICMP payloads past what one IP datagram holds: up to this many data bytes connect()'s
# socket refuses each send with EMSGSIZE (a local error per packet, "+N errors"); above
# it the kernel takes the send and nothing leaves (Linux 6.18: silent loss)
IP_MAX_DATA = 65507
EMSGSIZE_MAX_DATA = 65527


@register("ping")
def ping(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    opts, text, status = parse_ping(argv)
    if opts is None:
        return _stderr_unless_ok(text, status, INVALID if status == 2 else ERROR)
    res = _ping(ctx, opts)
    return CommandResult.by_line(res.output, res.status, res.kind, _ping_stderr)


def _ping(ctx: CommandContext, opts: PingArgs) -> CommandResult:
    pre = "".join(f"{w}\n" for w in opts.warnings)
    hosts = []
    for host in opts.hosts:
        try:
            hosts.append(ip_to_int(host))
        except AddressError:
            return CommandResult(f"{pre}ping: {host}: Name or service not known\n", 2, ERROR)
    dst = hosts[-1]
    src = oif = None
    if opts.iface is not None:
        if opts.iface in ctx.node.interfaces:
            oif = opts.iface  # SO_BINDTODEVICE; iputils learns the source from the route
        else:
            try:
                src = ip_to_int(opts.iface)
            except AddressError:
                return CommandResult(f"{pre}ping: SO_BINDTODEVICE {opts.iface}: No such device\n",
                                     2, ERROR)
            if src not in ctx.node.local_ips():
                return CommandResult(f"{pre}ping: bind: Cannot assign requested address\n",
                                     2, ERROR)
    res, chosen, error = sender_route(ctx.node, hosts[0], src, oif)  # connect() to the first hop
    if oif is not None and res.kind == "unicast" and chosen is None:
        error, chosen = None, 0  # no address on the node: the socket keeps 0.0.0.0
    if error is not None:
        return CommandResult(f"{pre}ping: {_CONNECT_TEXT.get(error, error)}\n", 2, ERROR)
    if oif is not None:
        src = hosts[0] if chosen is None else chosen  # a local destination is its own source
        if src not in {a.ip for a in ctx.node.interfaces[oif].addresses}:
            pre += f"ping: Warning: source address might be selected on device other than: {oif}\n"
    if len(hosts) > 1:  # the source route's IP_OPTIONS
        return CommandResult(f"{pre}ping: record route: Operation not permitted\n", 2, ERROR)
    if opts.ttl == 0:  # setsockopt(IP_TTL, 0)
        return CommandResult(f"{pre}ping: cannot set unicast time-to-live: Invalid argument\n",
                             2, ERROR)
    if opts.size > IP_MAX_DATA:  # no datagram is built
        if opts.size > EMSGSIZE_MAX_DATA:
            o = PingOutcome(False, None, error="timeout")
        else:
            mtu = ctx.node.interfaces["lo" if res.kind == "local" else res.dev].mtu
            o = PingOutcome(False, None, local_error=f"local error: message too long, "
                                                     f"mtu={min(mtu, 65535)}")
    elif src == 0:  # a source of 0.0.0.0 is a martian to whoever receives it
        o = PingOutcome(False, 0, error="timeout")
    else:
        with neigh.recording(ctx.net):
            o = echo(ctx.net, ctx.node, dst, size=opts.size + 28, src=src, ttl=opts.ttl,
                     dont_fragment=opts.pmtu in ("do", "probe"), oif=oif)
    # connect() was checked above: a local error left is a send's (EMSGSIZE), per packet
    # iputils names the source it bound to (and the device) when -I gave one
    bound = "" if src is None else f"from {int_to_ip(src)} {oif or ''}: "
    report = _ping_report(ctx, opts, o, bound)
    return CommandResult(pre + report.output, report.status, report.kind) if pre else report


# iputils 20221126 ping4_run: connect() failing with EACCES (a prohibit route or rule) is
# taken for a broadcast address
_CONNECT_TEXT = {"connect: Permission denied":
                 "Do you want to ping broadcast? Then -b. If not, check your local firewall rules"}


def _lost(k: int, loss: float) -> bool:
    return math.floor((k + 1) * loss + 1e-9) > math.floor(k * loss + 1e-9)


# the sender's own ARP gives up after mcast_solicit (3) x retrans_time (1 s): only then does
# the kernel report EHOSTUNREACH (real: ``ping -c1 -W1`` to an absent neighbour prints no
# "Destination Host Unreachable" line, ``ping -c1`` does)
ARP_GIVE_UP_S = 3.0


def _own_arp_failure(node, error: str | None, reporter: int | None) -> bool:
    """Whether an error is the sender's own failed ARP (reported by itself), which the
    kernel reports only after :data:`ARP_GIVE_UP_S`."""
    return (error == "Destination Host Unreachable" and reporter is not None
            and reporter in node.local_ips())


TIMESTAMP_BYTES = 16  # iputils: data this long or longer starts with a struct timeval


def _ping_report(ctx: CommandContext, opts: PingArgs, o: PingOutcome,
                 bound: str = "") -> CommandResult:
    """The packets of a ping that got as far as sending: one outcome ``o`` for each;
    ``bound``: the header's ``from SOURCE DEVICE: `` part."""
    count, wait, deadline = opts.count, opts.wait, opts.deadline
    interval = max(opts.interval, 0.002)
    target, size, quiet = opts.target, opts.size, opts.quiet
    if _own_arp_failure(ctx.node, o.error, o.reporter) and count is not None:
        span = (count - 1) * interval + wait
        if min(span, deadline if deadline is not None else span) < ARP_GIVE_UP_S:
            o = dataclasses.replace(o, error="timeout", reporter=None)
    lines = [f"PING {target} ({target}) {bound}{size}({size + 28}) bytes of data."]
    if count is None and deadline is not None:
        count = max(1, int(deadline / interval) + 1)
    infinite = count is None
    n = count if not infinite else int(ctx.timeout_s / interval) + 2
    timed = size >= TIMESTAMP_BYTES  # a reply carries the send time: its RTT is printed
    received = errors = 0
    elapsed = 0.0
    for k in range(n):
        elapsed = k * interval
        if elapsed > ctx.timeout_s:
            return timed_out(lines, ctx.timeout_s)
        if o.ok and o.rtt_ms < wait * 1000 and not _lost(k, o.loss):
            received += 1
            if not quiet:
                lines.append(f"{size + 8} bytes from {target}: icmp_seq={k + 1} ttl={o.ttl}"
                             + (f" time={o.rtt_ms:.3f} ms" if timed else ""))
        elif o.local_error:  # the send failed (EMSGSIZE); -q leaves it out of the count too
            if not quiet:
                errors += 1
                lines.append(f"ping: {o.local_error}")
        elif o.error and o.error != "timeout" and o.reporter is not None:
            errors += 1
            if not quiet:
                lines.append(f"From {int_to_ip(o.reporter)} icmp_seq={k + 1} {o.error}")
                if o.send_refused:  # the error was the sender's own OUTPUT REJECT
                    lines.append("ping: sendmsg: Operation not permitted")
    if infinite:
        return timed_out(lines, ctx.timeout_s)
    if received == n:
        total = elapsed + o.rtt_ms / 1000.0
    elif received + errors == n or o.local_error:  # every packet answered: no lingering
        total = elapsed
    else:
        total = elapsed + wait
    if deadline is not None:
        total = min(total, deadline)
    if total > ctx.timeout_s:
        return timed_out(lines, ctx.timeout_s)
    loss_pct = int(round(100.0 * (n - received) / n)) if n else 0
    err_txt = f"+{errors} errors, " if errors else ""
    lines += ["", f"--- {target} ping statistics ---",
              f"{n} packets transmitted, {received} received, {err_txt}{loss_pct}% packet loss, "
              f"time {int(elapsed * 1000)}ms"]
    if received and timed:
        r = o.rtt_ms
        lines.append(f"rtt min/avg/max/mdev = {r:.3f}/{r:.3f}/{r:.3f}/0.000 ms")
    else:
        lines.append("")
    return CommandResult("\n".join(lines) + "\n", 0 if received else 1, OK)


_TR_FLAGS = {"Destination Host Unreachable": " !H", "Destination Net Unreachable": " !N",
             "Packet filtered": " !X", "Destination Port Unreachable": ""}


@register("traceroute")
def traceroute(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    with neigh.recording(ctx.net):
        return _traceroute(ctx, argv)


def _resolve(host: str) -> str | None:
    try:
        ip_to_int(host)
    except AddressError:
        return f"{host}: Name or service not known"
    return None


def _traceroute(ctx: CommandContext, argv: list[str]) -> CommandResult:
    opts, text, status = parse_traceroute(argv, _resolve)
    if opts is None:  # all on stderr, even what exits 0 (the usage, the version)
        return CommandResult.stderr(text, status, INVALID if "Usage:" in text else ERROR)
    target, max_hops, queries, wait, icmp = (opts.host, opts.max_hops, opts.queries,
                                             opts.wait, opts.icmp)
    numeric, size = opts.numeric, opts.packetlen
    dst = ip_to_int(target)
    lines = [f"traceroute to {target} ({target}), {max_hops} hops max, {size} byte packets"]
    proto = "icmp" if icmp else "udp"
    itype = "echo-request" if icmp else None
    oif, src = opts.device, None if opts.source is None else ip_to_int(opts.source)
    socket_error = None  # the socket's options, then bind(), then (ICMP) connect()
    if oif is not None and oif not in ctx.node.interfaces:
        socket_error = "setsockopt SO_BINDTODEVICE: No such device"
    elif src is not None and src not in ctx.node.local_ips():
        socket_error = "bind: Cannot assign requested address"
    elif icmp:
        socket_error = sender_route(ctx.node, dst, src, oif)[2]
    if socket_error is not None:  # the ICMP method makes its one socket before the header,
        return _after_header([] if icmp else lines, socket_error)  # UDP one per probe
    unanswered = 0
    for ttl in range(opts.first, max_hops + 1):
        trip = walk(ctx.net, ctx.node, dst, src, size=size, proto=proto, icmp_type=itype,
                    ttl=ttl, record=True, oif=oif)
        if trip.local_error or trip.refused:  # connect() and send() fail per probe
            return _after_header(lines, trip.local_error or "send: Operation not permitted")
        addr, flag, done, late = None, "", False, 0.0
        if trip.ok:  # the answer: a port unreachable quoting the probe, or an echo reply
            back = walk(ctx.net, trip.node, _origin_src(ctx, dst, oif) if src is None else src, dst,
                        size=size if icmp else min(size + 28, ICMP_ERROR_MAX),
                        icmp_type="echo-reply" if icmp else
                        "destination-unreachable", detail=False)
            if back.ok and back.node is ctx.node:  # lost: the next TTL is probed, as real
                addr, done = dst, True
        elif trip.error and trip.error != "timeout" and trip.reporter is not None:
            # the sender's own ARP failure arrives only once its ARP gives up
            own_arp = _own_arp_failure(ctx.node, trip.error, trip.reporter)
            if not own_arp or wait >= ARP_GIVE_UP_S:
                addr = trip.reporter
                if own_arp:
                    late = ARP_GIVE_UP_S * 1000.0
                if trip.error != "Time to live exceeded":
                    flag, done = _TR_FLAGS.get(trip.error, " !X"), True
        if addr is None:
            unanswered += queries
            lines.append(f"{ttl:2d}  " + " ".join(["*"] * queries))
        else:
            a = int_to_ip(addr)
            name = a if numeric else f"{a} ({a})"
            t = late + 0.04 + 0.02 * ttl + trip.delay_ms
            lines.append(f"{ttl:2d}  {name}  " + "  ".join(f"{t:.3f} ms{flag}" for _ in range(queries)))
        if math.ceil(unanswered / 16) * wait > ctx.timeout_s:
            return timed_out(lines, ctx.timeout_s)
        if done:
            break
    return _traceroute_streams(lines, "", 0, OK)


def _after_header(lines: list[str], error: str) -> CommandResult:
    """traceroute's socket failing after ``lines`` were printed (none: before the header):
    its ``error()`` starts a line of its own, exit 1."""
    return _traceroute_streams(lines, error, 1, ERROR)


def _traceroute_streams(lines: list[str], error: str, status: int, kind: str) -> CommandResult:
    """traceroute 2.1.2 prints its header and hops on stdout, each line's newline when the
    next starts; its ``error()`` prints a newline, then the message, on stderr."""
    text = "\n".join(lines)
    if not error:
        return CommandResult(text + "\n", status, kind)
    return CommandResult.joined([(text, False), (f"\n{error}\n", True)], status, kind)


def _origin_src(ctx: CommandContext, dst: int, oif: str | None = None) -> int:
    """The source address traceroute's probes to ``dst`` carry (a local destination's own
    address, as the local route's ``src`` is; ``oif``: the device the socket is bound to)."""
    res, src, _ = sender_route(ctx.node, dst, None, oif)
    if src is None:
        return dst if res.kind == "local" else 0
    return src
