"""``ip address``: show, add/change/replace/del and flush IPv4 addresses.

The model keeps an address as ``(ip, plen)``. What iproute2 shows beyond that -- the
broadcast address (``ip addr add`` sets none unless ``brd`` is given, while Mininet's
``ifconfig`` always sets one), a label and an explicit scope -- is kept as
:class:`AddrMeta` next to the node, keyed by the identity of the model's ``Address``
object, so that an address re-created by anything else shows the defaults again.
"""
from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from netarena_gym.core.ipv4 import in_prefix, int_to_ip, mask_of
from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult
from netarena_gym.routing.commands.ip_common import (
    ArgReader, IpExit, IpOpts, duparg, duparg2, get_addr, get_prefix, get_u32, invarg,
    kernel_error, matches, no_such_device_dump, nodev, scope_a2n, unsupported)
from netarena_gym.routing.commands.ip_link import (
    link_name, link_record, operstate, ordered_interfaces, stats_lines)
from netarena_gym.routing.state import Address, Interface, Node

_META_ATTR = "_ip_addr_meta"
_NO_BRD = -1  # AddrMeta.brd value: no broadcast address configured

# address flags iproute2 knows: (readonly, ipv6-only)
_IFA_FLAGS = {
    "secondary": (True, False), "temporary": (True, False), "nodad": (False, True),
    "optimistic": (False, True), "dadfailed": (True, True), "home": (False, True),
    "deprecated": (True, True), "tentative": (True, True), "permanent": (True, True),
    "mngtmpaddr": (False, True), "noprefixroute": (False, False), "autojoin": (False, False),
    "stable-privacy": (True, True),
}


# ------------------------------------------------------------------- address metadata
@dataclass(slots=True)
class AddrMeta:
    addr: Address
    brd: int = _NO_BRD
    label: str | None = None
    scope: str | None = None


def addr_meta(node: Node, addr: Address) -> AddrMeta | None:
    metas = node.__dict__.get(_META_ATTR)
    if metas:
        for m in metas:
            if m.addr is addr:
                return m
    return None


def set_addr_meta(node: Node, meta: AddrMeta | None, addr: Address | None = None) -> None:
    """Record ``meta`` (or forget what is known about ``addr`` when ``meta`` is None);
    entries of addresses no longer configured are dropped on the way."""
    live = {id(a) for itf in node.interfaces.values() for a in itf.addresses}
    target = meta.addr if meta is not None else addr
    metas = [m for m in node.__dict__.get(_META_ATTR, ()) if id(m.addr) in live
             and m.addr is not target]
    if meta is not None:
        metas.append(meta)
    node.__dict__[_META_ATTR] = metas


def broadcast_of(node: Node, itf: Interface, addr: Address) -> int | None:
    """The broadcast address the kernel holds for ``addr`` (None: not set)."""
    meta = addr_meta(node, addr)
    if meta is not None:
        return None if meta.brd == _NO_BRD else meta.brd
    if itf.loopback:
        return None
    return addr.broadcast


def scope_of(node: Node, addr: Address) -> str:
    meta = addr_meta(node, addr)
    if meta is not None and meta.scope is not None:
        return meta.scope
    return "host" if (addr.ip >> 24) == 127 else "global"


def label_of(node: Node, itf: Interface, addr: Address) -> str:
    meta = addr_meta(node, addr)
    return meta.label if meta is not None and meta.label else itf.name


def kernel_order(itf: Interface) -> list[tuple[Address, bool]]:
    """Addresses in the kernel's list order -- primaries, then secondaries -- each with its
    secondary flag."""
    prim, sec = [], []
    for a in itf.addresses:
        if itf.is_secondary(a):
            sec.append((a, True))
        else:
            prim.append((a, False))
    return prim + sec


# ------------------------------------------------------------------------------- show
@dataclass(slots=True)
class _AddrFilter:
    dev: str | None = None
    up: bool = False
    pfx: tuple[int, int] | None = None
    scope: str | None = None
    secondary: bool | None = None
    label: str | None = None

    def active(self) -> bool:
        return (self.pfx is not None or self.scope is not None or self.secondary is not None
                or self.label is not None)


def _parse_filter(args: ArgReader, opts: IpOpts) -> _AddrFilter:
    f = _AddrFilter()
    while args:
        a = args.take()
        if a == "to":
            v = args.next()
            net, plen, _ = get_prefix(v, opts.family)
            f.pfx = (net, plen)
        elif a == "scope":
            v = args.next()
            s = scope_a2n(v)
            if s is None and v != "all":
                raise invarg('invalid "scope"\n', v)
            f.scope = s
        elif a == "up":
            f.up = True
        elif a in ("secondary", "temporary"):
            f.secondary = True
        elif a == "primary":
            f.secondary = False
        elif a in ("permanent", "-dynamic", "-tentative", "-deprecated", "-dadfailed",
                   "dynamic", "tentative", "deprecated", "dadfailed", "nodad", "home",
                   "mngtmpaddr", "noprefixroute", "autojoin"):
            pass
        elif a == "label":
            f.label = args.next()
        elif a in ("group", "master", "vrf", "type"):
            args.next()
        else:
            if a == "dev":
                a = args.next()
            elif matches(a, "help"):
                raise IpExit("Usage: ip address [ show [ dev IFNAME ] ...]\n", 255, INVALID)
            if f.dev is not None:
                raise duparg2("dev", a)
            f.dev = a
    return f


def _addr_selected(node: Node, itf: Interface, a: Address, sec: bool, f: _AddrFilter) -> bool:
    if f.pfx is not None and not in_prefix(a.ip, f.pfx[0], f.pfx[1]):
        return False
    if f.scope is not None and scope_of(node, a) != f.scope:
        return False
    if f.secondary is not None and sec != f.secondary:
        return False
    if f.label is not None and not fnmatchcase(label_of(node, itf, a), f.label):
        return False
    return True


def _inet_lines(node: Node, itf: Interface, a: Address, sec: bool) -> tuple[str, str]:
    brd = broadcast_of(node, itf, a)
    brd_s = f"brd {int_to_ip(brd)} " if brd is not None else ""
    sec_s = "secondary " if sec else ""
    return (f"    inet {int_to_ip(a.ip)}/{a.plen} {brd_s}scope {scope_of(node, a)} "
            f"{sec_s}{label_of(node, itf, a)}",
            "       valid_lft forever preferred_lft forever")


def show_addresses(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    f = _parse_filter(args, opts)
    if f.dev is not None:
        itf = node.interfaces.get(f.dev)
        if itf is None:
            raise no_such_device_dump(f.dev)
        itfs = [itf]
    else:
        itfs = ordered_interfaces(node)
    filtering = f.active() or opts.family is not None
    out: list[str] = []
    for itf in itfs:
        if f.up and not itf.up:
            continue
        addrs = [(a, s) for a, s in kernel_order(itf) if _addr_selected(node, itf, a, s, f)]
        if filtering and not addrs and (itf.addresses or opts.family is not None):
            continue
        if opts.brief:
            out.append(f"{link_name(itf):<16} {operstate(itf, node):<14} "
                       + "".join(f"{int_to_ip(a.ip)}/{a.plen} " for a, _ in addrs))
            continue
        if opts.oneline:
            for a, s in addrs:
                l1, l2 = _inet_lines(node, itf, a, s)
                out.append(f"{itf.ifindex}: {itf.name}{l1}\\{l2}")
            continue
        block = link_record(itf, opts, do_link=False, node=node)
        for a, s in addrs:
            block.extend(_inet_lines(node, itf, a, s))
        if opts.stats:
            block.extend(stats_lines())
        out.append("\n".join(block))
    return CommandResult("".join(line + "\n" for line in out), 0, OK)


# ----------------------------------------------------------------------------- modify
@dataclass(slots=True)
class _AddrReq:
    local: tuple[int, int, bool] | None = None
    local_arg: str = ""
    dev: str | None = None
    label: str | None = None
    brd: int | str | None = None  # "+" | "-" | address
    scope: str | None = None
    warnings: str = ""


def _parse_modify(args: ArgReader, opts: IpOpts) -> _AddrReq:
    r = _AddrReq()
    while args:
        a = args.take()
        if a in ("peer", "remote"):
            raise unsupported("peer addresses")
        if matches(a, "broadcast") or a == "brd":
            v = args.next()
            if r.brd is not None:
                raise duparg("broadcast", v)
            r.brd = v if v in ("+", "-") else get_addr(v, opts.family)
        elif a == "anycast":
            get_addr(args.next(), opts.family)
        elif a == "scope":
            v = args.next()
            s = scope_a2n(v)
            if s is None:
                raise invarg("invalid scope value.", v)
            r.scope = s
        elif a == "dev":
            r.dev = args.next()
        elif a == "label":
            r.label = args.next()
        elif matches(a, "metric") or matches(a, "priority") or matches(a, "preference"):
            v = args.next()
            if get_u32(v) is None:
                raise invarg('"metric" value is invalid\n', v)
            if get_u32(v):
                raise unsupported("address metrics")
        elif matches(a, "valid_lft") or matches(a, "preferred_lft"):
            v = args.next()
            if v != "forever":
                if get_u32(v) is None:
                    raise invarg(f"{a} value", v)
                raise unsupported("address lifetimes")
        elif a in _IFA_FLAGS:
            readonly, v6only = _IFA_FLAGS[a]
            if readonly:
                r.warnings += f"Warning: {a} option is not mutable from userspace\n"
            elif v6only:
                r.warnings += f"Warning: {a} option can be set only for IPv6 addresses\n"
            elif a == "noprefixroute":
                raise unsupported("noprefixroute")
        else:
            if a == "local":
                a = args.next()
            if matches(a, "help"):
                raise IpExit("Usage: ip address {add|change|replace} IFADDR dev IFNAME\n",
                             255, INVALID)
            if r.local is not None:
                raise duparg2("local", a)
            r.local = get_prefix(a, opts.family)
            r.local_arg = a
    if r.dev is None:
        raise IpExit('Not enough information: "dev" argument is required.\n', 1, INVALID)
    if r.label is not None and not (r.label == r.dev or r.label.startswith(r.dev + ":")):
        raise IpExit(f'"label" ({r.label}) must match "dev" ({r.dev}) or be prefixed by '
                     f'"dev" with a colon.\n', 1, INVALID)
    return r


def _resolve_brd(brd, ip: int, plen: int) -> int:
    if brd is None:
        return _NO_BRD
    if isinstance(brd, int):
        return brd
    if plen > 30:
        return _NO_BRD
    host = ~mask_of(plen) & 0xFFFFFFFF
    return (ip | host) if brd == "+" else (ip & ~host & 0xFFFFFFFF)


def _add(node: Node, r: _AddrReq, replace: bool) -> CommandResult:
    if r.local is None:
        raise kernel_error("Invalid argument")
    ip, plen, _ = r.local
    err = node.add_address(r.dev, ip, plen)
    if err is not None:
        if not replace:
            raise IpExit(r.warnings + err + "\n", 2, ERROR)
        return CommandResult(r.warnings, 0, OK)
    addr = node.find_address(r.dev, ip, plen)
    set_addr_meta(node, AddrMeta(addr, _resolve_brd(r.brd, ip, plen), r.label, r.scope))
    return CommandResult(r.warnings, 0, OK)


def _delete(node: Node, r: _AddrReq) -> CommandResult:
    if r.local is None:
        raise kernel_error("Invalid argument")
    ip, plen, given = r.local
    out = r.warnings
    if not given:
        out += ("Warning: Executing wildcard deletion to stay compatible with old scripts.\n"
                f"         Explicitly specify the prefix length ({r.local_arg}/32) to avoid "
                "this warning.\n"
                "         This special behaviour is likely to disappear in further releases,\n"
                "         fix your scripts!\n")
    err = node.del_address(r.dev, ip, plen if given else None)
    if err is not None:
        raise IpExit(out + err + "\n", 2, ERROR)
    set_addr_meta(node, None)
    return CommandResult(out, 0, OK)


def _modify(node: Node, opts: IpOpts, args: ArgReader, action: str) -> CommandResult:
    r = _parse_modify(args, opts)
    if r.dev not in node.interfaces:
        raise nodev(r.dev)
    if action == "del":
        return _delete(node, r)
    return _add(node, r, replace=action != "add")


# ------------------------------------------------------------------------------ flush
def _flush(node: Node, opts: IpOpts, args: ArgReader) -> CommandResult:
    if not args:
        raise IpExit("Flush requires arguments.\n", 1, INVALID)
    f = _parse_filter(args, opts)
    if f.dev is not None and f.dev not in node.interfaces:
        raise no_such_device_dump(f.dev)
    itfs = [node.interfaces[f.dev]] if f.dev is not None else ordered_interfaces(node)
    for itf in itfs:
        if f.up and not itf.up:
            continue
        if not f.active():
            node.flush_addresses(itf.name)
            continue
        for a, s in kernel_order(itf):
            if any(x is a for x in itf.addresses) and _addr_selected(node, itf, a, s, f):
                node.del_address(itf.name, a.ip, a.plen)
    set_addr_meta(node, None)
    return CommandResult("", 0, OK)


def do_ipaddr(node: Node, opts: IpOpts, argv: list[str]) -> CommandResult:
    args = ArgReader(argv)
    if not args:
        return show_addresses(node, opts, args)
    cmd = args.take()
    if matches(cmd, "add"):
        return _modify(node, opts, args, "add")
    if matches(cmd, "change") or cmd == "chg" or matches(cmd, "replace"):
        return _modify(node, opts, args, "replace")
    if matches(cmd, "delete"):
        return _modify(node, opts, args, "del")
    if matches(cmd, "list") or matches(cmd, "show") or matches(cmd, "lst"):
        return show_addresses(node, opts, args)
    if matches(cmd, "flush"):
        return _flush(node, opts, args)
    if matches(cmd, "save") or matches(cmd, "showdump") or matches(cmd, "restore"):
        raise unsupported(f'"ip address {cmd}"')
    if matches(cmd, "help"):
        raise IpExit("Usage: ip address {add|change|replace} IFADDR dev IFNAME\n", 255,
                     INVALID)
    raise IpExit(f'Command "{cmd}" is unknown, try "ip address help".\n', 255, INVALID)
