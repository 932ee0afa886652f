"""``ifconfig`` (net-tools 2.10): display interfaces and set them through the old ioctls.

Arguments after the interface name are processed in order, each one an ioctl as
net-tools issues them. An address is ``SIOCSIFADDR``: it replaces the interface's first
address with a classful prefix (and a computed broadcast) and brings the interface up;
a ``/len`` suffix or ``netmask`` then applies ``SIOCSIFNETMASK`` to that first address.
Addresses are read by ``inet_aton(3)`` (``10.1`` is 10.0.0.1, ``1500`` is 0.0.5.220: a
forgotten ``mtu`` sets an address, as on Linux), and ``/len`` as net-tools' ``INET_getnetmask``
reads it: ``strtoul`` (``0x18`` and ``030`` are 24), then the mask ``~(0xffffffff >> len)``
with x86's 5-bit shift count, so ``/33`` is ``/1``, ``/32``, ``/64`` and ``/`` are ``/0`` and
``/-1`` is ``/31`` (each checked with net-tools 2.10 on Linux 6.18).
On a device the node lacks every ioctl fails with ENODEV and ifconfig goes on (``SIOCSIFMTU:
No such device``; a flag change, which an address and ``broadcast`` also make, ``IF: ERROR
while getting interface flags: No such device``); a failed flag change exits 255, any other
failure 1.
"""
from __future__ import annotations

import re

from netarena_gym.core.ipv4 import int_to_ip, mask_of
from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult
from netarena_gym.routing.commands import CommandContext, register
from netarena_gym.routing.commands.ip_addr import (
    AddrMeta, addr_meta, broadcast_of, kernel_order, label_of, set_addr_meta)
from netarena_gym.routing.commands.legacy import resolve
from netarena_gym.routing.commands.tool_help import (IFCONFIG_HELP_ERR, IFCONFIG_HELP_OUT,
                                                     IFCONFIG_USAGE, IFCONFIG_VERSION)
from netarena_gym.routing.state import Address, Interface, Node, natural_key

__all__ = ["ifconfig_command", "format_interface"]

_IFF_NAMES = ((0x1, "UP"), (0x2, "BROADCAST"), (0x8, "LOOPBACK"), (0x40, "RUNNING"),
              (0x80, "NOARP"), (0x100, "PROMISC"), (0x1000, "MULTICAST"))
_HELP = "ifconfig: `--help' gives usage information.\n"
_USAGE = IFCONFIG_USAGE  # after a command-line error: all of it on stderr, exit 3


# ------------------------------------------------------------------------------ display
def _flags(itf: Interface) -> int:
    f = 0x8 if itf.loopback else 0x1002
    if itf.up:
        f |= 0x41 if itf.carrier else 0x1
    if itf.promisc:
        f |= 0x100
    if itf.noarp:
        f |= 0x80
    return f


def first_address(node: Node, itf: Interface) -> Address | None:
    """The address the ``SIOCGIF*``/``SIOCSIF*`` ioctls act on: the first one (in the
    kernel's order) whose label is the interface name."""
    for a, _ in kernel_order(itf):
        if label_of(node, itf, a) == itf.name:
            return a
    return None


def format_interface(node: Node, itf: Interface) -> str:
    flags = _flags(itf)
    names = ",".join(n for bit, n in _IFF_NAMES if flags & bit)
    lines = [f"{itf.name}: flags={flags}<{names}>  mtu {itf.mtu}"]
    a = first_address(node, itf)
    if a is not None:
        line = f"        inet {int_to_ip(a.ip)}  netmask {int_to_ip(mask_of(a.plen))}"
        if not itf.loopback:
            brd = broadcast_of(node, itf, a)
            line += f"  broadcast {int_to_ip(brd or 0)}"
        lines.append(line)
    if itf.loopback:
        lines.append("        loop  txqueuelen 1000  (Local Loopback)")
    else:
        lines.append(f"        ether {itf.mac}  txqueuelen 1000  (Ethernet)")
    lines += ["        RX packets 0  bytes 0 (0.0 B)",
              "        RX errors 0  dropped 0  overruns 0  frame 0",
              "        TX packets 0  bytes 0 (0.0 B)",
              "        TX errors 0  dropped 0 overruns 0  carrier 0  collisions 0", ""]
    return "\n".join(lines) + "\n"


def _show(node: Node, show_all: bool, name: str | None) -> CommandResult:
    if name is not None:
        itf = node.interfaces.get(name)
        if itf is None:
            return CommandResult(
                f"{name}: error fetching interface information: Device not found\n", 1, ERROR)
        return CommandResult(format_interface(node, itf), 0, OK)
    itfs = sorted(node.interfaces.values(), key=lambda i: natural_key(i.name))
    return CommandResult("".join(format_interface(node, i) for i in itfs
                                 if show_all or i.up), 0, OK)


# ------------------------------------------------------------------------------ setting
def _classful_len(ip: int) -> int | None:
    """``inet_abc_len``: the classful prefix of an address (None: multicast). Since Linux
    5.3 only 0.0.0.0 is "zeronet": 0.1.2.3 is class A."""
    if ip == 0 or ip == 0xFFFFFFFF:
        return 0
    top = ip >> 28
    if top < 8:
        return 8
    if top < 12:
        return 16
    if top < 14:
        return 24
    if top == 14:
        return None
    return 32


def _set_address(node: Node, itf: Interface, ip: int) -> str | None:
    """``SIOCSIFADDR``; returns an errno text on failure."""
    plen = _classful_len(ip)
    if plen is None:
        return "Invalid argument"
    old = first_address(node, itf)
    if old is not None:
        if old.ip == ip:
            return None
        node.del_address(itf.name, old.ip, old.plen)
    if ip == 0:
        return None
    if node.add_address(itf.name, ip, plen) is not None:
        return "File exists"
    set_addr_meta(node, None)
    return None


def _set_netmask(node: Node, itf: Interface, mask: int) -> str | None:
    """``SIOCSIFNETMASK`` on the first address. As ``devinet_ioctl`` does, the broadcast is
    made again for the new mask only when it was the old mask's and the new prefix is
    shorter than 31; otherwise it stays (``/8`` to ``/31`` keeps ``brd X.255.255.255``, an
    address that had none, such as a ``/31``, still has none). Label and scope stay."""
    inv = ~mask & 0xFFFFFFFF
    if inv & (inv + 1):
        return "Invalid argument"
    a = first_address(node, itf)
    if a is None:
        return "Cannot assign requested address"
    plen = 32 - inv.bit_length()
    if plen == a.plen:
        return None
    meta = addr_meta(node, a)
    brd = broadcast_of(node, itf, a)
    remade = (not itf.loopback and plen < 31
              and brd == a.ip | (~mask_of(a.plen) & 0xFFFFFFFF))  # IFF_BROADCAST devices
    node.del_address(itf.name, a.ip, a.plen)
    node.add_address(itf.name, a.ip, plen)
    new = node.find_address(itf.name, a.ip, plen)
    if remade:
        brd = new.broadcast
    label, scope = (meta.label, meta.scope) if meta is not None else (None, None)
    if brd == (None if itf.loopback else new.broadcast) and label is None and scope is None:
        set_addr_meta(node, None, new)  # what a new address shows anyway
    elif brd is None:
        set_addr_meta(node, AddrMeta(new, label=label, scope=scope))
    else:
        set_addr_meta(node, AddrMeta(new, brd, label, scope))
    return None


def _set_broadcast(node: Node, itf: Interface, brd: int) -> str | None:
    a = first_address(node, itf)
    if a is None:
        return "Cannot assign requested address"
    if a.broadcast == brd:
        set_addr_meta(node, None, a)
    else:
        set_addr_meta(node, AddrMeta(a, brd))
    return None


def _mtu(node: Node, itf: Interface, value: str) -> str | None:
    try:
        mtu = int(value)
    except ValueError:
        mtu = 0  # atoi
    if (not itf.loopback and not 68 <= mtu <= 65535) or mtu < 0:
        return "Invalid argument"
    node.set_link(itf.name, mtu=mtu)
    return None


_STRTOUL = re.compile(r"[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


def prefix_mask(text: str) -> int | None:
    """net-tools' ``INET_getnetmask`` on the text after ``/``: the netmask, or None where
    ``strtoul`` leaves characters over (ifconfig then prints its usage)."""
    if text == "":
        return 0  # strtoul converts nothing and stops at the end: /0
    m = _STRTOUL.fullmatch(text)
    if m is None:
        return None
    v = int(m.group(2), 16 if m.group(2)[1:2] in ("x", "X") else 8 if m.group(2)[:1] == "0"
            else 10)
    if v >= 2 ** 64:
        v = 2 ** 64 - 1  # ERANGE: ULONG_MAX, whatever the sign
    elif m.group(1) == "-":
        v = -v
    return ~(0xFFFFFFFF >> (v & 31)) & 0xFFFFFFFF  # int prefix; x86 shifts by count & 31


NO_DEVICE = "No such device"  # ENODEV: every ioctl on a device the node lacks
# the words ifconfig turns into set_flag/clr_flag (SIOCGIFFLAGS, then SIOCSIFFLAGS)
_FLAG_WORDS = frozenset({"up", "down", "promisc", "-promisc", "arp", "-arp", "multicast",
                         "-multicast", "allmulti", "-allmulti", "trailers", "-trailers",
                         "dynamic", "-dynamic", "-broadcast"})


def _configure(node: Node, name: str, args: list[str]) -> CommandResult:
    itf = node.interfaces.get(name)
    out: list[str] = []
    err = False
    flags_failed = False  # set_flag/clr_flag return -1: ifconfig then exits 255, else 1
    no_flags = f"{name}: ERROR while getting interface flags: No such device\n"
    pending_mask: int | None = None
    i = 0
    if args and args[0] == "inet":
        i = 1
    while i < len(args):
        a = args[i]
        i += 1
        if itf is None and a in _FLAG_WORDS:  # every ioctl of a missing device: ENODEV
            out.append(no_flags)
            flags_failed = True
        elif a in ("up", "down"):
            node.set_link(name, up=a == "up")
        elif a in ("promisc", "-promisc"):
            node.set_link(name, promisc=a == "promisc")
        elif a in ("arp", "-arp"):
            node.set_link(name, noarp=a == "-arp")
        elif a in _FLAG_WORDS:
            pass
        elif a in ("mtu", "netmask", "broadcast", "txqueuelen", "metric"):
            if i >= len(args):
                if a == "broadcast":  # alone: set_flag(IFF_BROADCAST)
                    if itf is None:
                        out.append(no_flags)
                        flags_failed = True
                    continue
                return CommandResult(_USAGE, 3, INVALID)
            value = args[i]
            i += 1
            if a == "mtu":
                e = _mtu(node, itf, value) if itf is not None else NO_DEVICE
                tag = "SIOCSIFMTU"
            elif a in ("txqueuelen", "metric"):
                continue
            else:
                ip = resolve(value)
                if ip is None:
                    out.append(f"{value}: Unknown host\n")
                    err = True
                    continue
                if itf is None:
                    e, tag = NO_DEVICE, ("SIOCSIFNETMASK" if a == "netmask" else "SIOCSIFBRDADDR")
                elif a == "netmask":
                    e, tag = _set_netmask(node, itf, ip), "SIOCSIFNETMASK"
                else:
                    e, tag = _set_broadcast(node, itf, ip), "SIOCSIFBRDADDR"
            if e is not None:
                out.append(f"{tag}: {e}\n")
                err = True
            if a == "broadcast" and itf is None:  # then set_flag(IFF_BROADCAST)
                out.append(no_flags)
                flags_failed = True
        elif a in ("add", "del", "hw", "pointopoint", "dstaddr", "tunnel", "name", "media"):
            return CommandResult(f"netarena: ifconfig {a} is not supported by the simulator\n",
                                 1, INVALID)
        else:
            host, slash, length = a.partition("/")
            if slash:  # INET_getnetmask comes first: a bad length is a usage error
                mask = prefix_mask(length)
                if mask is None:
                    return CommandResult(_USAGE, 3, INVALID)
                pending_mask = mask
            ip = resolve(host)
            if ip is None:
                out.append(f"{host}: Unknown host\n{_HELP}")
                return CommandResult("".join(out), 1, INVALID)
            e = _set_address(node, itf, ip) if itf is not None else NO_DEVICE
            if e is not None:
                out.append(f"SIOCSIFADDR: {e}\n")
                err = True
            if itf is None:  # then the interface is brought up: its flags fail too
                out.append(no_flags)
                flags_failed = True
            else:
                node.set_link(name, up=True)
    if pending_mask is not None:
        e = _set_netmask(node, itf, pending_mask) if itf is not None else NO_DEVICE
        if e is not None:
            out.append(f"SIOCSIFNETMASK: {e}\n")
            err = True
    if flags_failed:
        return CommandResult("".join(out), 255, ERROR)
    return CommandResult("".join(out), 1 if err else 0, ERROR if err else OK)


@register("ifconfig")
def ifconfig_command(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    args = argv[1:]
    show_all = False
    while args and args[0].startswith("-"):
        opt = args.pop(0)
        if opt == "-a":
            show_all = True
        elif opt == "-v":
            pass
        elif opt in ("-V", "-version", "--version"):
            return CommandResult(IFCONFIG_VERSION, 0, OK)
        elif opt in ("-?", "-h", "-help", "--help"):  # the lists on stderr, read first
            return CommandResult.joined([(IFCONFIG_HELP_ERR, True), (IFCONFIG_HELP_OUT, False)],
                                        0, INVALID)
        elif opt == "-s":
            return CommandResult("netarena: ifconfig -s is not supported by the simulator\n",
                                 1, INVALID)
        else:
            return CommandResult(f"ifconfig: option `{opt}' not recognised.\n{_HELP}", 1,
                                 INVALID)
    if not args:
        return _show(ctx.node, show_all, None)
    if len(args) == 1:
        return _show(ctx.node, show_all, args[0])
    return _configure(ctx.node, args[0], args[1:])
