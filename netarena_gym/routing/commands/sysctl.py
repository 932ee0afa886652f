"""``sysctl`` (procps-ng 4.0.2) and the ``/proc/sys`` files behind it.

The keys a node has are those of ``Node.sysctl``, ``net.ipv4.conf.all.forwarding``, which
is the same setting as ``net.ipv4.ip_forward`` (writing either changes both, as on Linux), and
the per-device keys ``net.ipv4.conf.{all,default,DEV}.*`` of :mod:`.sysctl_conf` (``-a``
lists these, not the hundreds of other keys of a real ``/proc/sys``).
Values are parsed like the kernel's ``proc_dointvec``: an optional ``-``, then decimal, ``0x``
hex or ``0`` octal digits that fit an int, then whitespace or the end (``1 2`` sets 1; ``+1``,
``08``, ``abc`` and the empty string are ``Invalid argument``). ``icmp_echo_ignore_all`` only
takes 0 or 1. Like every ``forwarding`` key, ``ip_forward`` stores any integer, and a non-zero
one is on: after ``sysctl -w net.ipv4.ip_forward=5`` (or ``-3``) reads show ``5``, and every
device's ``forwarding`` with it (checked on Linux 6.18).

``sysctl -p`` reads Debian 12's stock ``/etc/sysctl.conf``, which has only comments: it prints
nothing. Other files cannot be opened. Exit statuses and messages are procps 4.0.2's (an
unknown key exits 1, not 255 as procps 3 did).
"""
from __future__ import annotations

import re

from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult
from netarena_gym.shell.regex import RegexError, compile_ere
from netarena_gym.routing.commands import CommandContext, register
from netarena_gym.routing.commands import sysctl_conf as conf

__all__ = [
    "ALIASES",
    "node_keys",
    "parse_int",
    "proc_status",
    "read_proc",
    "sysctl_cmd",
    "write_proc",
]

ALIASES = {"net.ipv4.conf.all.forwarding": "net.ipv4.ip_forward"}
_MINMAX = {"net.ipv4.icmp_echo_ignore_all": (0, 1)}
_INT = re.compile(r"[ \t\n]*(-?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)(?=[ \t\n]|$)")
_CONF_FILES = ("/etc/sysctl.conf", "/etc/sysctl.d/99-sysctl.conf")
_USAGE = """
Usage:
 sysctl [options] [variable[=value] ...]

Options:
  -a, --all            display all variables
  -A                   alias of -a
  -X                   alias of -a
      --deprecated     include deprecated parameters to listing
      --dry-run        Print the key and values but do not write
  -b, --binary         print value without new line
  -e, --ignore         ignore unknown variables errors
  -N, --names          print variable names without values
  -n, --values         print only values of the given variable(s)
  -p, --load[=<file>]  read values from file
  -f                   alias of -p
      --system         read values from all system directories
  -r, --pattern <expression>
                       select setting that match expression
  -q, --quiet          do not echo variable set
  -w, --write          enable writing a value to variable
  -o                   does nothing
  -x                   does nothing
  -d                   alias of -h

 -h, --help     display this help and exit
 -V, --version  output version information and exit

For more details see sysctl(8).
"""
_NO_VARS = "sysctl: no variables specified\nTry `sysctl --help' for more information.\n"
_LONG = {"all": "a", "binary": "b", "ignore": "e", "names": "N", "values": "n", "load": "p",
         "pattern": "r", "quiet": "q", "write": "w", "help": "h", "version": "V",
         "dry-run": "D", "deprecated": "P"}


# ------------------------------------------------------------------------- keys
def node_keys(node) -> list[str]:
    """Every key the node has, in ``sysctl -a`` order."""
    keys = set(node.sysctl) | {a for a, target in ALIASES.items() if target in node.sysctl}
    keys.update(conf.conf_keys(node))
    return sorted(keys, key=lambda k: k.split("."))


def _value(node, key: str) -> str | None:
    v = node.sysctl.get(ALIASES.get(key, key))
    if v is None:
        dev_name = conf.split_conf_key(node, key)
        if dev_name is not None:
            v = conf.conf_value(node, *dev_name)
    return v


def _status(node, key: str) -> str | None:
    """"file", "dir", "notdir" (a file stands where a directory is expected) or None."""
    if _value(node, key) is not None:
        return "file"
    keys = node_keys(node)
    if any(k.startswith(key + ".") for k in keys):
        return "dir"
    parts = key.split(".")
    if any(".".join(parts[:i]) in keys for i in range(1, len(parts))):
        return "notdir"
    return None


def _path_to_key(path: str) -> str | None:
    if not path.startswith("/proc/sys/"):
        return None
    return path[len("/proc/sys/"):].strip("/").replace(".", "\0").replace("/", ".")


def _display(key: str) -> str:
    return key.replace("\0", "/")


def parse_int(text: str) -> int | None:
    """The kernel's parse of one integer written to a ``/proc/sys`` file."""
    m = _INT.match(text)
    if m is None:
        return None
    v = int(m.group(2), 0) if not re.fullmatch(r"0[0-7]+", m.group(2)) else int(m.group(2), 8)
    v = -v if m.group(1) else v
    return v if -2 ** 31 <= v < 2 ** 31 else None


_EINVAL, _READ_ONLY = "einval", "read-only"


def _store(node, key: str, text: str) -> str | None:
    """Write ``text`` to ``key`` as the kernel would: None, or why not (``_EINVAL``,
    ``_READ_ONLY``, or a ``netarena:`` line for a change the simulator does not model)."""
    key = ALIASES.get(key, key)
    dev_name = conf.split_conf_key(node, key)
    if dev_name is not None and dev_name[1] in conf.READ_ONLY:
        return _READ_ONLY
    v = parse_int(text)
    if v is None:
        return _EINVAL
    lo, hi = _MINMAX.get(key, (-2 ** 31, 2 ** 31))
    if not lo <= v <= hi:
        return _EINVAL
    if (dev_name is not None and dev_name[1] in conf.UNMODELLED
            and str(v) != conf.conf_value(node, *dev_name)):
        return (f"netarena: changing {key.replace(chr(0), '/')} is not supported by the "
                "simulator\n")
    node.set_sysctl(key, str(v))  # touches the node only when the value changes
    return None


# ----------------------------------------------------------------- /proc/sys files
def _why(status: str | None) -> str:
    return {"dir": "Is a directory", "notdir": "Not a directory"}.get(
        status, "No such file or directory")


def read_proc(node, path: str) -> str | None:
    """Contents of a ``/proc/sys/...`` file (``"1\\n"``), None if there is no such file."""
    key = _path_to_key(path)
    value = None if key is None else _value(node, key)
    return None if value is None else value + "\n"


def proc_status(node, path: str) -> str | None:
    """What ``path`` is under ``/proc/sys``: "file", "dir", "notdir" or None (missing)."""
    key = _path_to_key(path)
    if key == "":
        return "dir"
    return None if key is None else _status(node, key)


def write_proc(node, path: str, data: str, prog: str = "echo") -> CommandResult:
    """``prog ... > /proc/sys/...``: bash's messages for a missing file or directory, the
    writer's ``write error`` for a value the kernel refuses."""
    status = proc_status(node, path)
    if status != "file":
        return CommandResult(f"bash: {path}: {_why(status)}\n", 1, ERROR)
    why = None if data == "" else _store(node, _path_to_key(path), data)
    if why is None:
        return CommandResult("")
    if why == _READ_ONLY:
        return CommandResult(f"bash: {path}: Permission denied\n", 1, ERROR)
    if why != _EINVAL:
        return CommandResult(why, 1, INVALID)
    who = f"bash: {prog}" if prog in ("echo", "printf") else prog
    return CommandResult(f"{who}: write error: Invalid argument\n", 1, ERROR)


# ------------------------------------------------------------------------ sysctl
def _split_key(arg: str) -> tuple[str, str]:
    """procps: a key whose first separator is ``/`` uses ``/`` as separator (``.`` then stays
    inside a component); returns (dotted key for lookups, key as printed)."""
    s, d = arg.find("/"), arg.find(".")
    if s >= 0 and (d < 0 or s < d):
        key = arg.replace(".", "\0").replace("/", ".")
        return key, key.replace("\0", "/")
    return arg, arg


def _parse_opts(argv: list[str]) -> tuple[set, list[str], str | None]:
    flags: set[str] = set()
    args: list[str] = []
    pattern = None
    i = 1
    while i < len(argv):
        a = argv[i]
        i += 1
        if a.startswith("--") and len(a) > 2:
            name, eq, val = a[2:].partition("=")
            hits = [k for k in _LONG if k.startswith(name)]
            if name not in _LONG and len(hits) != 1:
                raise _Usage(f"sysctl: unrecognized option '{a}'\n")
            opt = _LONG.get(name) or _LONG[hits[0]]
            if opt == "r":
                if not eq and i >= len(argv):
                    raise _Usage(f"sysctl: option '{a}' requires an argument\n")
                pattern, i = (val, i) if eq else (argv[i], i + 1)
            elif opt == "p" and eq:
                args.append(val)
            flags.add(opt)
        elif a.startswith("-") and len(a) > 1:
            for j, c in enumerate(a[1:], 1):
                if c == "r":
                    rest = a[j + 1:]
                    if not rest and i >= len(argv):
                        raise _Usage("sysctl: option requires an argument -- 'r'\n")
                    pattern, i = (rest, i) if rest else (argv[i], i + 1)
                    flags.add("r")
                    break
                if c == "p" and a[j + 1:]:
                    flags.add("p")
                    args.append(a[j + 1:])
                    break
                if c not in "bneNwfpqoxaAXVdh":
                    raise _Usage(f"sysctl: invalid option -- '{c}'\n")
                flags.add({"f": "p", "A": "a", "X": "a", "d": "h"}.get(c, c))
        else:
            args.append(a)
    return flags, args, pattern


class _Usage(Exception):
    pass


def _show(node, key: str, shown: str, flags: set, out: list[str]) -> bool:
    """Print one key (or every key under a directory); False if it does not exist."""
    status = _status(node, key)
    if status == "dir":
        for k in node_keys(node):
            if k.startswith(key + "."):
                _show(node, k, k, flags, out)
        return True
    if status != "file":
        return False
    value = _value(node, key)
    if "N" in flags:
        out.append(shown + "\n")
    elif "n" in flags or "b" in flags:
        out.append(value + ("" if "b" in flags else "\n"))
    else:
        out.append(f"{shown} = {value}\n")
    return True


def _missing(key: str, status: str | None) -> str:
    path = key.replace(".", "/").replace("\0", ".")
    return f"sysctl: cannot stat /proc/sys/{path}: {_why(status if status == 'notdir' else None)}\n"


def _write_arg(node, arg: str, flags: set, out: list[str]) -> bool:
    raw_key, _, value = arg.partition("=")
    key, shown = _split_key(raw_key.strip())
    value = value.strip()
    status = _status(node, key)
    if status not in ("file", "dir"):
        if "e" in flags:
            return True
        out.append(_missing(key, status))
        return False
    why = "dir" if status == "dir" else _store(node, key, value)
    if why is not None:
        if why.startswith("netarena:"):
            out.append(why)
            return False
        out.append(f'sysctl: setting key "{shown}": Invalid argument\n')
        return why in ("dir", _READ_ONLY)  # procps exits 0 for these
    if "q" not in flags:
        out.append(value + "\n" if "n" in flags else f"{shown} = {value}\n")
    return True


def _load(args: list[str]) -> CommandResult:
    bad = [f for f in (args or [_CONF_FILES[0]]) if f not in _CONF_FILES]
    if not bad:
        return CommandResult("")
    text = "".join(f'sysctl: cannot open "{f}": No such file or directory\n' for f in bad)
    return CommandResult(text, 1, ERROR)


@register("sysctl")
def sysctl_cmd(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    """procps prints values on stdout, and its complaints (``sysctl: ...``, the usage
    after a bad command line) on stderr."""
    res = _sysctl(ctx, argv)
    if res.kind == INVALID:
        return res.as_stderr()
    return CommandResult.by_line(res.output, res.status, res.kind,
                                 lambda ln: ln.startswith("sysctl: "))


def _sysctl(ctx: CommandContext, argv: list[str]) -> CommandResult:
    node = ctx.node
    try:
        flags, args, pattern = _parse_opts(argv)
    except _Usage as e:
        return CommandResult(str(e) + _USAGE, 0, INVALID)
    if "h" in flags:
        return CommandResult(_USAGE)  # on stdout, from its leading empty line
    if "V" in flags:
        return CommandResult("sysctl from procps-ng 4.0.2\n")
    if "p" in flags:
        return _load(args)
    out: list[str] = []
    if "a" in flags:
        try:  # RE2: linear time whatever the agent's pattern
            rx = compile_ere(pattern) if pattern else None
        except RegexError:
            return CommandResult(f"sysctl: invalid regex: {pattern}\n", 1, INVALID)
        for k in node_keys(node):
            if rx is None or rx.search(k):
                _show(node, k, k, flags, out)
        return CommandResult("".join(out))
    if not args:
        if flags:
            return CommandResult(_NO_VARS, 1, INVALID)
        return CommandResult(_USAGE, 1, INVALID)
    ok = True
    for arg in args:
        if "=" in arg:
            ok = _write_arg(node, arg, flags, out) and ok
        elif "w" in flags:
            out.append("sysctl: command line(0): invalid syntax, continuing...\n")
            ok = False
        else:
            key, shown = _split_key(arg)
            if not _show(node, key, shown, flags, out) and "e" not in flags:
                out.append(_missing(key, _status(node, key)))
                ok = False
    refused = [ln for ln in out if ln.startswith("netarena:")]
    if refused:  # a change the simulator does not model: said first
        return CommandResult("".join(refused + [ln for ln in out if ln not in refused]), 1,
                             INVALID)
    return CommandResult("".join(out), 0 if ok else 1, OK if ok else ERROR)
