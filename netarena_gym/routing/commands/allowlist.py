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
    if cmd.redirect is not None and redirect_target(cmd.redirect[1]) is None:
        return (f"writing to {cmd.redirect[1]} is not allowed (only /proc/sys/net/... and "
                "/dev/null)")
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
    if prog == "iptables" and any(a.startswith("--modprobe") for a in cmd.argv[1:]):
        return "iptables --modprobe is not allowed"
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
    if obj == "link" and rest and rest[0] in ("add", "a", "delete", "del", "d"):
        return "creating or deleting links is not allowed (the topology is fixed)"
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
