"""Parse what diagnostic commands print into a structured view of a router, and derive
the network's intent from the interface labels. Used by the expert and by the discrete
interface's features: both see only command outputs, never the simulator's state, so
they behave the same on every backend.

Without labels (compat, or ``interface_labels=False``) the intent of a single-router
network follows the addressing plan that upstream uses and :mod:`~netarena_gym.routing.topology`
documents: ``r0-eth{k}`` serves subnet ``k`` as ``192.168.k.1/24``. Several routers
without labels leave the intent unknown (the expert then repairs only what it can see is
wrong: filters, rules, links, qdiscs).

The inspection command :data:`INSPECT` prints interfaces, routes, rules, filters, qdiscs and
the forwarding switch in one go; :func:`parse_inspection` accepts any mix of those outputs.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

INSPECT = "ip -d addr show; ip route show; ip rule show; iptables -S; tc qdisc show; sysctl net.ipv4.ip_forward"

_LINK = re.compile(r"^\d+: ([^:@\s]+)(?:@\S+)?: <([^>]*)> mtu (\d+)(?: qdisc (\S+))?")
_INET = re.compile(r"^\s+inet (\d+\.\d+\.\d+\.\d+)/(\d+)")
_ALIAS = re.compile(r"^\s+alias (.*)$")
_RULE = re.compile(r"^(\d+):\s+(.*)$")
_QDISC = re.compile(r"^qdisc (\S+) (\S+) dev (\S+) (root|parent \S+)(.*)$")
_SYSCTL = re.compile(r"^net\.ipv4\.ip_forward = (-?\d+)")
_ROUTE_TYPES = ("blackhole", "prohibit", "unreachable", "throw", "unicast")
_ALIAS_INTENT = re.compile(r"^(LAN|TRANSIT) (\S+) (\d+\.\d+\.\d+\.\d+)/(\d+)$")
_PLAN_IFACE = re.compile(r"^r0-eth(\d+)$")


@dataclass
class IfaceView:
    name: str
    up: bool
    mtu: int
    promisc: bool
    qdisc: str | None
    alias: str | None = None
    addrs: list[tuple[str, int]] = field(default_factory=list)

    @property
    def intent(self) -> tuple[str, str, str, int] | None:
        """(role, peer, address, prefix length) from the label, e.g. ('LAN', 's3', ...)."""
        if not self.alias:
            return None
        m = _ALIAS_INTENT.match(self.alias.strip())
        if not m:
            return None
        return m.group(1), m.group(2), m.group(3), int(m.group(4))


@dataclass
class RouteView:
    type: str
    prefix: str  # "default" or "a.b.c.d/n" (host routes get /32)
    dev: str | None
    via: str | None
    metric: int
    proto: str | None
    src: str | None
    line: str


@dataclass
class RouterView:
    ifaces: dict[str, IfaceView] = field(default_factory=dict)
    routes: list[RouteView] = field(default_factory=list)
    rules: list[tuple[int, str]] = field(default_factory=list)
    policies: dict[str, str] = field(default_factory=dict)
    filter_rules: list[str] = field(default_factory=list)  # "-A CHAIN ..." lines
    user_chains: list[str] = field(default_factory=list)
    qdiscs: dict[str, tuple[str, str]] = field(default_factory=dict)  # dev -> (kind, rest)
    ip_forward: bool | None = None
    sections: set[str] = field(default_factory=set)


def _route(line: str) -> RouteView | None:
    toks = line.split()
    if not toks:
        return None
    rtype = "unicast"
    if toks[0] in _ROUTE_TYPES:
        rtype = toks.pop(0)
    if not toks:
        return None
    dst = toks[0]
    if dst != "default":
        if not re.match(r"^\d+\.\d+\.\d+\.\d+(/\d+)?$", dst):
            return None
        if "/" not in dst:
            dst += "/32"
    kv = {}
    i = 1
    while i < len(toks):
        k = toks[i]
        if k in ("via", "dev", "metric", "proto", "scope", "src", "table"):
            if i + 1 < len(toks):
                kv[k] = toks[i + 1]
            i += 2
        else:
            i += 1
    if "table" in kv and kv["table"] != "main":
        return None
    try:
        metric = int(kv.get("metric", 0))
    except ValueError:
        metric = 0
    return RouteView(rtype, dst, kv.get("dev"), kv.get("via"), metric, kv.get("proto"),
                     kv.get("src"), line.strip())


def parse_inspection(text: str, view: RouterView | None = None) -> RouterView:
    v = view if view is not None else RouterView()
    cur: IfaceView | None = None
    for raw in text.splitlines():
        if not raw.strip():
            continue
        m = _LINK.match(raw)
        if m:
            flags = m.group(2).split(",")
            cur = IfaceView(m.group(1), "UP" in flags, int(m.group(3)), "PROMISC" in flags,
                            m.group(4))
            v.ifaces[cur.name] = cur
            v.sections.add("addr")
            continue
        if raw.startswith((" ", "\t")) and cur is not None:
            mi = _INET.match(raw)
            if mi:
                cur.addrs.append((mi.group(1), int(mi.group(2))))
                continue
            ma = _ALIAS.match(raw)
            if ma:
                cur.alias = ma.group(1).strip()
            continue
        cur = None
        mr = _RULE.match(raw)
        if mr and ("from " in mr.group(2) or "to " in mr.group(2) or "not " in mr.group(2)):
            v.rules.append((int(mr.group(1)), mr.group(2).strip()))
            v.sections.add("rule")
            continue
        if raw.startswith("-P "):
            parts = raw.split()
            if len(parts) >= 3:
                v.policies[parts[1]] = parts[2]
            v.sections.add("iptables")
            continue
        if raw.startswith("-A "):
            v.filter_rules.append(raw.strip())
            continue
        if raw.startswith("-N "):
            v.user_chains.append(raw.split()[1])
            continue
        mq = _QDISC.match(raw)
        if mq:
            v.qdiscs[mq.group(3)] = (mq.group(1), mq.group(5).strip())
            v.sections.add("tc")
            continue
        ms = _SYSCTL.match(raw)
        if ms:
            v.ip_forward = ms.group(1) != "0"
            v.sections.add("sysctl")
            continue
        rv = _route(raw)
        if rv is not None:
            v.routes.append(rv)
            v.sections.add("route")
    return v


DEFAULT_RULES = [(0, "from all lookup local"), (32766, "from all lookup main"),
                 (32767, "from all lookup default")]


@dataclass(frozen=True)
class Intent:
    """What the whole network should look like, derived from router interface labels."""
    addrs: dict[tuple[str, str], tuple[str, int]]  # (router, iface) -> (address, plen)
    routes: dict[str, dict[str, tuple[str, str | None]]]  # router -> prefix -> (dev, via)


def _net_str(ip: str, plen: int) -> str:
    a, b, c, d = (int(x) for x in ip.split("."))
    v = (a << 24 | b << 16 | c << 8 | d) & ((0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF)
    return f"{v >> 24 & 255}.{v >> 16 & 255}.{v >> 8 & 255}.{v & 255}/{plen}"


def _plan_intent(ifname: str) -> tuple[str, str, str, int] | None:
    """The single-router addressing plan: ``r0-eth{k}`` is ``LAN s{k} 192.168.k.1/24``."""
    m = _PLAN_IFACE.match(ifname)
    if m is None or not 1 <= int(m.group(1)) <= 254:
        return None
    k = int(m.group(1))
    return "LAN", f"s{k}", f"192.168.{k}.1", 24


def derive_intent(views: dict[str, RouterView]) -> Intent:
    """Intended addresses from labels; intended routes by walking the router tree that
    the TRANSIT labels describe (connected nets direct, others via the first hop)."""
    addrs: dict[tuple[str, str], tuple[str, int]] = {}
    nets: dict[str, list[tuple[str, str]]] = {}  # router -> [(net, iface)]
    links: dict[str, list[tuple[str, str, str]]] = {}  # router -> [(peer, iface, net)]
    plan = set(views) == {"r0"} and not any(
        itf.intent for v in views.values() for itf in v.ifaces.values())
    for r, v in views.items():
        nets[r], links[r] = [], []
        for name, itf in v.ifaces.items():
            it = itf.intent if not plan else _plan_intent(name)
            if it is None:
                continue
            role, peer, ip, plen = it
            addrs[(r, name)] = (ip, plen)
            net = _net_str(ip, plen)
            nets[r].append((net, name))
            if role == "TRANSIT":
                links[r].append((peer, name, net))
    peer_addr = {}
    for r in views:
        for peer, itf, net in links[r]:
            peer_addr[(r, peer)] = (itf, net)
    routes: dict[str, dict[str, tuple[str, str | None]]] = {}
    for r in views:
        table = {net: (itf, None) for net, itf in nets[r]}
        # BFS over the router graph; the first hop decides the next-hop address
        first: dict[str, tuple[str, str]] = {}
        frontier = []
        for peer, itf, net in links[r]:
            back = peer_addr.get((peer, r))
            if back is None or (peer, back[0]) not in addrs:
                continue
            first[peer] = (itf, addrs[(peer, back[0])][0])
            frontier.append(peer)
        seen = {r, *first}
        while frontier:
            cur = frontier.pop(0)
            for peer, _, _ in links.get(cur, []):
                if peer not in seen and peer in views:
                    seen.add(peer)
                    first[peer] = first[cur]
                    frontier.append(peer)
        for other, (itf, gw) in first.items():
            for net, _ in nets.get(other, []):
                table.setdefault(net, (itf, gw))
        routes[r] = table
    return Intent(addrs, routes)
