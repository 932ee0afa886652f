"""``cat``, ``echo`` and output redirection onto the few files a router node exposes.

Readable: ``/proc/sys/...`` (the node's sysctls, see :mod:`.sysctl`), ``/proc/net/route``
(the kernel's table of the main routing table: little-endian hex, rows padded to 127
columns, ordered like the FIB trie walk), ``/proc/net/arp`` (the neighbour cache as
``arp_seq_show`` prints it: flags 0x2 complete, 0x4 permanent; an unresolved entry has
flags 0x0 and a zero address) and ``/etc/hostname``. Everything else does not
exist. The shell's allow-list has refused sensitive paths before these handlers run.

:func:`write_redirect` is what the command executor calls for ``cmd > PATH`` and
``cmd >> PATH``: ``/proc/sys/...`` is written like the kernel does, ``/dev/null`` swallows,
``/dev/stdout`` passes the data through, and any other path is ``Permission denied``.
:func:`read_path` resolves ``.``, ``..`` and repeated slashes first. The text filters read
only their pipe (:mod:`netarena_gym.shell.filters`).
"""
from __future__ import annotations

from netarena_gym.core.ipv4 import int_to_ip, mask_of
from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult
from netarena_gym.routing import neigh
from netarena_gym.routing.commands import CommandContext, register
from netarena_gym.routing.commands.sysctl import proc_status, read_proc, write_proc
from netarena_gym.routing.commands.tool_help import CAT_HELP, CAT_VERSION
from netarena_gym.routing.state import MAIN

__all__ = ["cat_cmd", "echo_cmd", "proc_net_arp", "proc_net_route", "read_path",
           "write_redirect"]

_RTF_UP, _RTF_GATEWAY, _RTF_HOST, _RTF_REJECT = 0x1, 0x2, 0x4, 0x200
_ROUTE_HEADER = ("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\t"
                 "Window\tIRTT")
_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
            "t": "\t", "v": "\v", "\\": "\\"}


def _le(v: int) -> str:
    """An IPv4 address as the kernel prints a ``__be32`` with ``%08X`` on little-endian."""
    return f"{int.from_bytes(v.to_bytes(4, 'big'), 'little'):08X}"


def proc_net_route(node) -> str:
    lines = [_ROUTE_HEADER]
    routes = [r for r in node.tables.get(MAIN, ()) if r.type not in ("broadcast", "multicast")]
    routes.sort(key=lambda r: (r.dst, -r.plen, r.metric))
    for r in routes:
        flags = _RTF_UP | (_RTF_GATEWAY if r.gateway else 0) | (_RTF_HOST if r.plen == 32 else 0)
        if r.type in ("unreachable", "prohibit"):
            flags |= _RTF_REJECT
        dev = r.dev or "*"
        lines.append(f"{dev}\t{_le(r.dst)}\t{_le(r.gateway or 0)}\t{flags:04X}\t0\t0\t"
                     f"{r.metric}\t{_le(mask_of(r.plen))}\t0\t0\t0")
    return "".join(f"{line:<127s}\n" for line in lines)


_ARP_HEADER = "IP address       HW type     Flags       HW address            Mask     Device\n"


def proc_net_arp(ctx: CommandContext) -> str:
    rows = [_ARP_HEADER]
    for e in neigh.entries(ctx.net, ctx.node):
        flags = 0 if e.mac is None else (0x6 if e.state == "PERMANENT" else 0x2)
        mac = e.mac or "00:00:00:00:00:00"
        rows.append(f"{int_to_ip(e.ip):<16s} 0x{1:<10x}0x{flags:<10x}{mac:<17s}     "
                    f"{'*':<8s} {e.dev}\n")
    return "".join(rows)


def read_path(ctx: CommandContext, path: str) -> tuple[str | None, str | None]:
    """(contents, None) or (None, reason) for a file a command reads (``.``, ``..`` and
    repeated slashes resolved first, as the kernel does)."""
    from netarena_gym.routing.commands.allowlist import resolve_path
    path = resolve_path(path)
    node = ctx.node
    if path == "/proc/sys" or path.startswith("/proc/sys/"):
        text = read_proc(node, path)
        if text is not None:
            return text, None
        status = proc_status(node, path) if path.startswith("/proc/sys/") else "dir"
        return None, {"dir": "Is a directory", "notdir": "Not a directory"}.get(
            status, "No such file or directory")
    if path == "/proc/net/route":
        return proc_net_route(node), None
    if path == "/proc/net/arp":
        return proc_net_arp(ctx), None
    if path == "/etc/hostname":
        return node.name + "\n", None
    if path in ("/", "/etc", "/proc", "/proc/net", "/tmp", "/root"):
        return None, "Is a directory"
    return None, "No such file or directory"


def write_redirect(ctx: CommandContext, path: str, data: str | None, append: bool,
                   prog: str = "echo") -> CommandResult:
    """Where ``prog ... > path`` (or ``>>``) puts ``data`` (None: bash's open of ``path``
    before ``prog`` runs, which writes nothing; an empty write changes nothing either)."""
    if path == "/dev/null":
        return CommandResult("")
    if path == "/dev/stdout":
        return CommandResult(data or "")
    if path in ("/dev/stderr", "/dev/tty"):  # past the pipe, to the terminal
        return CommandResult.stderr(data or "", 0, OK)
    if path.startswith("/proc/sys/"):
        res = write_proc(ctx.node, path, data or "", prog)
        return res.as_stderr() if res.status != 0 else res
    return CommandResult.stderr(f"bash: {path}: Permission denied\n", 1, ERROR)


def _cat_format(text: str, number: bool, ends: bool, tabs: bool, line_no: int) -> tuple[str, int]:
    if not (number or ends or tabs):
        return text, line_no
    out = []
    for line in text.splitlines(keepends=True):
        body, nl = (line[:-1], "\n") if line.endswith("\n") else (line, "")
        if tabs:
            body = body.replace("\t", "^I")
        if ends and nl:
            body += "$"
        if number:
            line_no += 1
            body = f"{line_no:6d}\t{body}"
        out.append(body + nl)
    return "".join(out), line_no


@register("cat")
def cat_cmd(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    number = ends = tabs = False
    paths: list[str] = []
    only_paths = False
    for a in argv[1:]:
        if only_paths or not a.startswith("-") or a == "-":
            paths.append(a)
        elif a == "--":
            only_paths = True
        elif a in ("--number", "--show-ends", "--show-tabs", "--show-all"):
            number |= a == "--number"
            ends |= a in ("--show-ends", "--show-all")
            tabs |= a in ("--show-tabs", "--show-all")
        elif a in ("--help", "--version"):
            return CommandResult(CAT_HELP if a == "--help" else CAT_VERSION)
        elif a.startswith("--"):
            return CommandResult.stderr(f"cat: unrecognized option '{a}'\n"
                                 "Try 'cat --help' for more information.\n", 1, INVALID)
        else:
            for c in a[1:]:
                if c not in "nETAu":
                    return CommandResult.stderr(f"cat: invalid option -- '{c}'\n"
                                         "Try 'cat --help' for more information.\n", 1, INVALID)
                number |= c == "n"
                ends |= c in "EA"
                tabs |= c in "TA"
    out: list[tuple[str, bool]] = []  # (text, on stderr)
    status, line_no = 0, 0
    for p in paths or ["-"]:
        text, why = (stdin, None) if p == "-" else read_path(ctx, p)
        if text is None:
            out.append((f"cat: {p}: {why}\n", True))
            status = 1
            continue
        text, line_no = _cat_format(text, number, ends, tabs, line_no)
        out.append((text, False))
    return CommandResult.joined(out, status, ERROR if status else OK)


def _unescape(text: str) -> tuple[str, bool]:
    """bash ``echo -e`` escapes; the flag is False after ``\\c`` (stop output here)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = text[i + 1]
        i += 2
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
        elif e == "c":
            return "".join(out), False
        elif e == "0" or e == "x":
            digits = "01234567" if e == "0" else "0123456789abcdefABCDEF"
            j = i
            while j < n and j - i < (3 if e == "0" else 2) and text[j] in digits:
                j += 1
            if e == "x" and j == i:
                out.append("\\x")
            else:
                out.append(chr(int(text[i:j] or "0", 8 if e == "0" else 16)))
            i = j
        else:
            out.append("\\" + e)
    return "".join(out), True


@register("echo")
def echo_cmd(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    newline, escapes = True, False
    args = argv[1:]
    while args and len(args[0]) > 1 and args[0][0] == "-" and set(args[0][1:]) <= set("neE"):
        for c in args[0][1:]:
            newline = newline and c != "n"
            escapes = (escapes or c == "e") and c != "E"
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text, more = _unescape(text)
        newline = newline and more
    return CommandResult(text + ("\n" if newline else ""))
