"""The routing task's operator allow-list, shared by the simulator and the real backend.

An agent may run, on routers and hosts only, the tools an operator uses to diagnose and
repair IP forwarding: ``ip`` (address, link, route, rule, neighbour), ``ifconfig``,
``route``, ``arp``, ``sysctl``, ``iptables``/``iptables-save``, ``tc qdisc``, ``ping``,
``traceroute``, ``cat`` of ``/proc/sys/net``/``/proc/net`` files, ``echo`` (also into
``/proc/sys/net/...``), and read-only text filters after a pipe (``grep``, ``head``,
``tail``, ``wc``, ``sort``, ``uniq``). Everything else is refused (known programs such as
``rm``, ``kill``, shells, ``ip netns``) or, for names no system has, answered with bash's
``command not found``. Nothing refused ever reaches a real node.
"""
from __future__ import annotations

from netarena_gym.shell.parser import CommandLine, SimpleCommand

OPERATOR_COMMANDS = frozenset({
    "ip", "ifconfig", "route", "arp", "sysctl", "iptables", "iptables-save", "tc",
    "ping", "traceroute", "cat", "echo"})
TEXT_FILTERS = frozenset({"grep", "head", "tail", "wc", "sort", "uniq"})
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
_IP_REFUSED_OPTIONS = {"-n", "-netns", "--netns", "-b", "-batch", "--batch", "-force",
                       "-all", "--all"}
_CAT_PREFIXES = ("/proc/sys/net/", "/proc/net/")
_CAT_FILES = {"/etc/hostname"}
WRITABLE_PREFIX = "/proc/sys/net/"


def refusal(cmd: SimpleCommand, position: int) -> str | None:
    """Why this simple command is refused, or None when it may run.
    ``position`` is its index in the pipeline (filters only after a pipe)."""
    prog = cmd.argv[0]
    if cmd.redirect is not None:
        path = cmd.redirect[1]
        if path != "/dev/null" and not path.startswith(WRITABLE_PREFIX):
            return f"writing to {path} is not allowed (only /proc/sys/net/... and /dev/null)"
    if prog in TEXT_FILTERS:
        if position == 0:
            return f"{prog} may only read the output of another command through a pipe"
        return None
    if prog not in OPERATOR_COMMANDS:
        if prog in KNOWN_PROGRAMS or prog.startswith("kill") or "/" in prog:
            return f"'{prog}' is not an operator command for this task"
        return None  # not a program at all: bash says "command not found"
    if prog == "ip":
        return _ip_refusal(cmd.argv)
    if prog == "tc":
        args = [a for a in cmd.argv[1:] if not a.startswith("-") or a in ("-b", "-batch")]
        if any(a in ("-b", "-batch") for a in cmd.argv[1:]):
            return "tc -batch reads files and is not allowed"
        if args and args[0] not in ("qdisc", "q", "qd", "qdi"):
            return f"tc {args[0]} is not allowed (only tc qdisc)"
        return None
    if prog == "cat":
        for a in cmd.argv[1:]:
            if a.startswith("-"):
                continue
            if not (a.startswith(_CAT_PREFIXES) or a in _CAT_FILES) or ".." in a:
                return f"reading {a} is not allowed (only /proc/sys/net, /proc/net, /etc/hostname)"
        return None
    if prog == "sysctl":
        for a in cmd.argv[1:]:
            if a in ("-p", "--load", "--system", "-f"):
                return f"sysctl {a} loads configuration files and is not allowed"
        return None
    if prog == "ping" and any(a in ("-f",) for a in cmd.argv[1:]):
        return "flood ping is not allowed"
    if prog == "iptables" and any(a.startswith("--modprobe") for a in cmd.argv[1:]):
        return "iptables --modprobe is not allowed"
    return None


def _ip_refusal(argv: list[str]) -> str | None:
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] in _IP_REFUSED_OPTIONS:
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
    for _, pipe in cl.items:
        for pos, cmd in enumerate(pipe.commands):
            why = refusal(cmd, pos)
            if why:
                return why
    return None


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
