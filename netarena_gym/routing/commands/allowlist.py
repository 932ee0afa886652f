"""The routing task's operator allow-list, shared by the simulator and the real backend.

An agent may run, on routers and hosts only, the tools an operator uses to diagnose and
repair IP forwarding: ``ip`` (address, link, route, rule, neighbour), ``ifconfig``,
``route``, ``arp``, ``sysctl``, ``iptables``/``iptables-save``, ``tc qdisc``, ``ping``,
``traceroute``, ``cat`` of ``/proc/sys/net``/``/proc/net`` files, ``echo`` (also into
``/proc/sys/net/...``), and read-only text filters after a pipe (``grep``, ``head``,
``tail``, ``wc``, ``sort``, ``uniq``). Everything else is refused (known programs such as
``rm``, ``kill``, shells, ``ip netns``) or, for names no system has, answered with bash's
``command not found``. Nothing refused ever reaches a real node.

Paths are resolved before they are checked (``.``, ``..`` and repeated slashes,
:func:`resolve_path`): a redirect may only write ``/proc/sys/net/...`` (or ``/dev/null``),
``cat`` may only read ``/proc/sys/net``, ``/proc/net`` and ``/etc/hostname``. ``sysctl`` may
only name ``net.*`` keys (per network namespace) and never loads files: ``-p``, ``-f``,
``--load``, ``--system`` are refused in every spelling (``-p/x``, ``-qp``, ``--lo=x``), as are
``-a``/``-A``/``-X`` (they list host-wide keys). ``ip``/``tc`` options that read files or
switch namespaces (``-batch``, ``-netns``, ``-all``, ``-force``, ``tc -conf``) are refused in
every prefix spelling iproute2 accepts. The filters' own refusals (file operands, ``sort
-o``) come from :func:`netarena_gym.shell.policy.filter_position_refusal`.

The topology is fixed: ``ip link`` may show links and set what the simulator models (``up``,
``down``, ``mtu``, ``promisc``, ``arp``, ``alias``) and nothing else. ``add``, ``delete``,
``replace`` and ``property`` (alternative names) are refused in every spelling iproute2
accepts (any prefix, its first match in iproute2's own order: ``ad``, ``de``, ``dele``,
``rep``...), and so is every other ``ip link set``/``change`` keyword (``name`` renames,
``address``, ``type``, ``master``, ``txqueuelen``, ``multicast``...: a real node would keep
them across episodes, and the simulator does not model them). ``iptables`` may change only
the ``filter`` table, the one the simulator models: another ``-t`` table (``raw``,
``mangle``, ``nat``, ``security``) may only be listed (``-L``/``-S``, which show it empty on
both backends), in every spelling of the option (``-tnat``, ``-nt nat``, ``--table=nat``,
``--ta nat``); ``--modprobe``/``-M`` (a program iptables would run) is refused in every
spelling.
"""
from __future__ import annotations

import posixpath

from netarena_gym.shell import policy
from netarena_gym.shell.filters import FILTER_NAMES
from netarena_gym.shell.parser import CommandLine, SimpleCommand

OPERATOR_COMMANDS = frozenset({
    "ip", "ifconfig", "route", "arp", "sysctl", "iptables", "iptables-save", "tc",
    "ping", "traceroute", "cat", "echo"})
TEXT_FILTERS = FILTER_NAMES
ALLOWED = OPERATOR_COMMANDS | TEXT_FILTERS

# Programs that exist on a Linux box but are outside the operator's task. Refused, counted
# (the whole kill family too: any program whose name starts with "kill").
KNOWN_PROGRAMS = frozenset({
    "rm", "mv", "cp", "dd", "ln", "chmod", "chown", "touch", "mkdir", "rmdir", "tee",
    "pkill", "reboot", "shutdown", "halt", "poweroff", "init",
    "systemctl", "service", "sudo", "su", "bash", "sh", "dash", "zsh", "ksh", "csh",
    "python", "python3", "perl", "ruby", "node", "nc", "ncat", "netcat", "socat", "curl",
    "wget", "ssh", "scp", "telnet", "ftp", "tcpdump", "tshark", "ethtool", "nft", "ovs-vsctl",
    "ovs-ofctl", "mn", "vtysh", "brctl", "bridge", "ip6tables", "iptables-restore",
    "ip6tables-restore", "modprobe", "insmod", "rmmod", "mount", "umount", "chroot",
    "nsenter", "unshare", "crontab", "at", "nohup", "setsid", "timeout", "watch", "xargs",
    "env", "exec", "eval", "source", "export", "alias", "vi", "vim", "nano", "less", "more",
    "sed", "awk", "find", "ls", "ps", "top", "htop", "fping", "arping", "hping3", "nmap",
    "iperf", "iperf3", "dhclient", "nmcli", "netplan", "ifup", "ifdown", "hostname",
    "yes", "sleep", "true", "false", "test", "apt", "apt-get", "pip", "dpkg"})

IP_OBJECTS = {
    "address": ("a", "ad", "add", "addr", "addre", "addres", "address"),
    "link": ("l", "li", "lin", "link"),
    "route": ("r", "ro", "rou", "rout", "route"),
    "rule": ("ru", "rul", "rule"),
    "neigh": ("n", "ne", "nei", "neig", "neigh", "neighbor", "neighbour"),
}
_IP_OBJECT_OF = {abbr: obj for obj, abbrs in IP_OBJECTS.items() for abbr in abbrs}
# iproute2 takes any prefix of an option, the first match in its own order winning: the
# shortest prefix that means each refused option (``ip -f`` is -family, ``-fo`` -force)
_IP_REFUSED_OPTIONS = {"netns": 1, "batch": 1, "force": 2, "all": 1}
_TC_REFUSED_OPTIONS = {"netns": 1, "batch": 1, "force": 1, "conf": 1, "cf": 1}
_CAT_PREFIXES = ("/proc/sys/net/", "/proc/net/")
_CAT_FILES = {"/etc/hostname"}
WRITABLE_PREFIX = "/proc/sys/net/"


def resolve_path(path: str) -> str:
    """``path`` with ``.``, ``..`` and repeated slashes resolved (relative paths are taken
    from ``/``, the nodes' working directory). Lexical: the allowed trees have no symlinks,
    and the real backend opens the result with ``O_NOFOLLOW`` in a read-only mount
    namespace."""
    return "/" + posixpath.normpath("/" + path).lstrip("/")


def redirect_target(path: str) -> str | None:
    """The resolved file a ``>``/``>>`` may write, or None when it is refused."""
    real = resolve_path(path)
    if real == "/dev/null" or real.startswith(WRITABLE_PREFIX):
        return real
    return None


def _option_refused(arg: str, names) -> str | None:
    """The refused iproute2 option ``arg`` spells (``-b``, ``-ba``, ``--batch``...)."""
    if not arg.startswith("-") or arg in ("-", "--"):
        return None
    word = arg[2:] if arg.startswith("--") else arg[1:]
    return next((n for n, least in names.items()
                 if len(word) >= least and n.startswith(word)), None)


def _sysctl_refusal(argv: list[str]) -> str | None:
    i = 1
    while i < len(argv):
        a = argv[i]
        i += 1
        if a.startswith("--") and len(a) > 2:
            name = a[2:].partition("=")[0]
            if any(w.startswith(name) for w in ("load", "system")):
                return f"sysctl {a} loads configuration files and is not allowed"
            if "all".startswith(name):
                return "sysctl --all lists host-wide keys: name the net.* keys instead"
            if any(w.startswith(name) for w in ("pattern",)) and "=" not in a:
                i += 1
            continue
        if a.startswith("-") and len(a) > 1:
            for j, c in enumerate(a[1:], 1):
                if c in "pf":
                    return f"sysctl {a} loads configuration files and is not allowed"
                if c in "aAX":
                    return f"sysctl {a} lists host-wide keys: name the net.* keys instead"
                if c == "r":
                    i += 0 if a[j + 1:] else 1
                    break
            continue
        key = a.partition("=")[0].strip().replace("/", ".").lstrip(".")
        if not key.startswith("net."):
            return f"sysctl {key} is not allowed (only the node's own net.* keys)"
    return None


def refusal(cmd: SimpleCommand, position: int) -> str | None:
    """Why this simple command is refused, or None when it may run.
    ``position`` is its index in the pipeline (filters only after a pipe)."""
    prog = cmd.argv[0]
    for path in sorted(cmd.targets()):
        if redirect_target(path) is None:
            return f"writing to {path} is not allowed (only /proc/sys/net/... and /dev/null)"
    if prog in TEXT_FILTERS:
        return policy.filter_position_refusal(cmd, position, "another command")
    if prog not in OPERATOR_COMMANDS:
        if prog in KNOWN_PROGRAMS or prog.startswith("kill") or "/" in prog:
            return f"'{prog}' is not an operator command for this task"
        return None  # not a program at all: bash says "command not found"
    if prog == "ip":
        return _ip_refusal(cmd.argv)
    if prog == "tc":
        for a in cmd.argv[1:]:
            bad = _option_refused(a, _TC_REFUSED_OPTIONS)
            if bad:
                return f"tc {a} (-{bad}) reads files or switches namespaces and is not allowed"
        args = [a for a in cmd.argv[1:] if not a.startswith("-")]
        if args and args[0] not in ("qdisc", "q", "qd", "qdi"):
            return f"tc {args[0]} is not allowed (only tc qdisc)"
        if len(args) > 1 and not any(_matches(args[1], v) for v in ("show", "list", "ls")):
            hook = next((a for a in args[2:] if a in ("ingress", "clsact")), None)
            if hook:
                return (f"tc qdisc {args[1]} ... {hook} is not allowed (only root qdiscs; "
                        "tc filter is refused, so an ingress hook has no use)")
        return None
    if prog == "ifconfig":
        fixed = next((a for a in cmd.argv[1:] if a in _IFCONFIG_FIXED), None)
        if fixed:
            return (f"ifconfig {fixed} is not allowed: the links are fixed (only addresses, "
                    "netmask, broadcast, mtu, up, down, arp and promisc may be set)")
        return None
    if prog == "cat":
        for a in cmd.argv[1:]:
            if a.startswith("-"):
                continue
            real = resolve_path(a)
            if not (real.startswith(_CAT_PREFIXES) or real in _CAT_FILES) or ".." in a:
                return f"reading {a} is not allowed (only /proc/sys/net, /proc/net, /etc/hostname)"
        return None
    if prog == "sysctl":
        return _sysctl_refusal(cmd.argv)
    if prog == "ping" and any(a in ("-f",) for a in cmd.argv[1:]):
        return "flood ping is not allowed"
    if prog == "iptables":
        return _iptables_refusal(cmd.argv)
    return None


# iptables 1.8.9's short options that take an argument (getopt: the rest of the word, or the
# next word) or an optional one (the rest of the word): a cluster ends at the first
_IPT_ARG_SHORTS = frozenset("ACDRIMNEPopsdjitmcgLSFZXhwW")
# the long commands that change a table (``--de`` may be --delete or --delete-chain: both)
_IPT_WRITES = ("append", "check", "delete", "delete-chain", "flush", "insert", "new-chain",
               "policy", "rename-chain", "replace", "set-counters", "zero")


def _iptables_options(argv: list[str]):
    """(short letter or long name as written, value or None) for each option of an
    iptables argv, as getopt_long splits clusters (``-nvtnat``: n, v, t=nat). Conservative:
    a word after an option that takes an argument is still scanned as an option."""
    i = 1
    while i < len(argv):
        tok = argv[i]
        i += 1
        if tok.startswith("--") and len(tok) > 2:
            name, eq, val = tok[2:].partition("=")
            yield "--" + name, (val if eq else argv[i] if i < len(argv) else None)
        elif tok.startswith("-") and len(tok) > 1:
            for j, c in enumerate(tok[1:], 2):
                if c in _IPT_ARG_SHORTS:
                    rest = tok[j:] or None
                    yield c, (rest if rest or c not in "ACDRIMNEPopsdjitmcg" else
                              argv[i] if i < len(argv) else None)
                    break
                yield c, None


def _iptables_refusal(argv: list[str]) -> str | None:
    """``--modprobe``/``-M`` in any spelling; a table other than ``filter`` unless the
    command only lists it (``-L``/``-S``)."""
    tables, lists, writes = [], False, False
    for opt, val in _iptables_options(argv):
        name = opt[2:] if opt.startswith("--") else None
        if opt == "M" or (name is not None and len(name) >= 2 and "modprobe".startswith(name)):
            return "iptables --modprobe is not allowed"
        if opt == "t" or (name and "table".startswith(name)):
            tables.append(val or "")
        elif opt in ("L", "S") or (name and "list-rules".startswith(name)):
            lists = True
        elif opt in "ACDRIFZNXEP" and len(opt) == 1 or (
                name and any(w.startswith(name) for w in _IPT_WRITES)):
            writes = True
    other = next((t for t in tables if t != "filter"), None)
    if other is not None and (writes or not lists):
        return (f"iptables -t {other or '(none)'}: only the filter table may be changed (the "
                "simulator models no other; -L and -S list the others, empty)")
    return None


def _ip_refusal(argv: list[str]) -> str | None:
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        if _option_refused(argv[i], _IP_REFUSED_OPTIONS):
            return f"ip {argv[i]} is not allowed"
        i += 1
    if i >= len(argv):
        return None
    obj = _IP_OBJECT_OF.get(argv[i])
    if obj is None:
        if argv[i] in ("netns", "netn", "net"):
            return "ip netns is not allowed"
        if argv[i] in ("help",):
            return None
        return f"ip {argv[i]} is not allowed (objects: address, link, route, rule, neigh)"
    rest = argv[i + 1:]
    if "netns" in rest:
        return "moving interfaces between namespaces is not allowed"
    if obj == "link" and rest:
        return _ip_link_refusal(rest)
    return None


def _matches(word: str, keyword: str) -> bool:
    """iproute2's ``matches() == 0``: ``word`` is a non-empty prefix of ``keyword``."""
    return bool(word) and keyword.startswith(word)


# ``ip link`` commands in the order iproute2 6.1's do_iplink tries them (the first a word
# abbreviates wins: ``a`` is add, ``s`` set, ``sh`` show, ``l`` lst)
_LINK_VERBS = ("add", "set", "change", "replace", "delete", "show", "lst", "list", "xstats",
               "afstats", "property", "help")
# the keywords of iplink_parse (iproute2 6.1) in its order; True: any prefix matches
_LINK_WORDS = (
    ("up", False), ("down", False), ("name", False), ("index", False), ("link", True),
    ("address", True), ("broadcast", True), ("brd", False), ("txqueuelen", True),
    ("qlen", False), ("txqlen", True), ("mtu", False), ("xdpgeneric", False),
    ("xdpdrv", False), ("xdpoffload", False), ("xdp", False), ("netns", False),
    ("multicast", False), ("allmulticast", False), ("promisc", False), ("trailers", False),
    ("arp", False), ("carrier", False), ("vf", False), ("master", True), ("vrf", False),
    ("nomaster", True), ("dynamic", True), ("type", True), ("alias", True), ("group", False),
    ("mode", False), ("state", False), ("numtxqueues", True), ("numrxqueues", True),
    ("addrgenmode", True), ("link-netns", True), ("link-netnsid", True), ("protodown", False),
    ("protodown_reason", False), ("gso_max_size", False), ("gso_max_segs", False),
    ("gro_max_size", False), ("gso_ipv4_max_size", False), ("gro_ipv4_max_size", False),
    ("parentdev", False))
# what ``ip link set`` may change (the simulator's model): keyword -> words it takes
_LINK_SETTABLE = {"up": 0, "down": 0, "mtu": 1, "promisc": 1, "arp": 1, "alias": 1}
# ifconfig's settings (net-tools 2.10 compares whole words) that change a link beyond the
# simulator's model and the Mininet baseline (hardware address, queue length, flags):
# refused like the ``ip link set`` keywords above
_IFCONFIG_FIXED = frozenset({
    "hw", "txqueuelen", "metric", "multicast", "-multicast", "allmulti", "-allmulti",
    "trailers", "-trailers", "dynamic", "-dynamic", "-broadcast", "pointopoint",
    "-pointopoint", "dstaddr", "tunnel", "name", "media", "mem_start", "io_addr", "irq",
    "outfill", "keepalive"})


def _ip_link_refusal(rest: list[str]) -> str | None:
    verb = next((v for v in _LINK_VERBS if _matches(rest[0], v)), None)
    if verb in ("add", "replace", "delete"):
        return (f"ip link {rest[0]} ({verb}): creating or deleting links is not allowed (the "
                "topology is fixed)")
    if verb == "property":
        return f"ip link {rest[0]} (property): alternative link names are not allowed"
    if verb not in ("set", "change"):
        return None
    i = 1
    while i < len(rest):
        a = rest[i]
        i += 1
        word = next((w for w, prefix in _LINK_WORDS
                     if a == w or (prefix and _matches(a, w))), None)
        if word in _LINK_SETTABLE:
            i += _LINK_SETTABLE[word]
        elif word is not None:
            what = a if a == word else f"{a} ({word})"
            return (f"ip link {verb} ... {what} is not allowed: the topology is fixed (only "
                    "up, down, mtu, promisc, arp and alias may be set)")
        elif a == "dev":
            i += 1
    return None


def check_command_line(cl: CommandLine) -> str | None:
    """First refusal found in a parsed command line, or None."""
    return policy.check_command_line(cl, refusal)


def machine_refusal(machine: str, routers_and_hosts, switches) -> tuple[str, bool] | None:
    """(message, refused?) when ``machine`` may not run commands, else None."""
    if machine in routers_and_hosts:
        return None
    if machine in switches:
        return (f"{machine} is a switch; commands run on routers and hosts only", True)
    names = ", ".join(sorted(routers_and_hosts, key=_natural))
    return (f"unknown machine '{machine}' (machines: {names})", False)


def _natural(name: str):
    import re
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))
