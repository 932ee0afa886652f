"""Read-only text filters for pipelines: ``grep``, ``head``, ``tail``, ``wc``, ``sort``, ``uniq``.

Pure functions of ``(argv, stdin)`` returning a :class:`CommandResult` with GNU
coreutils/grep 3.8 output, messages and exit statuses (grep exits 1 when nothing matched, 2 on
errors). Task-independent: the routing and Kubernetes shells both use them, in-process, on the
captured output of the command before the pipe (never on a real node).

They read their standard input only. File operands (other than ``-``), ``grep -f FILE``,
``grep -r/-R/-d/-D``, ``sort -o/-T`` and ``uniq``'s output operand are refused
(:func:`operand_refusal`, which the shells' allow-lists apply before anything runs).

Regular expressions run on RE2 in linear time (:mod:`netarena_gym.shell.regex`, which says
what that leaves out: back-references are an error). Sorting compares bytes as in the C
locale.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable

from netarena_gym.shell.parser import INVALID, CommandResult, refused
from netarena_gym.shell.regex import RegexError, compile_grep, matches, translate_regex

__all__ = [
    "FILTERS",
    "FILTER_NAMES",
    "RegexError",
    "operand_refusal",
    "run_filter",
    "grep",
    "head",
    "sort",
    "tail",
    "translate_regex",
    "uniq",
    "wc",
]

_STDIN = "(standard input)"
def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return parts


# ----------------------------------------------------------------------------- grep
_GREP_USAGE = ("Usage: grep [OPTION]... PATTERNS [FILE]...\n"
               "Try 'grep --help' for more information.\n")
_GREP_LONG = {"extended-regexp": "E", "fixed-strings": "F", "basic-regexp": "G",
              "perl-regexp": "P", "ignore-case": "i", "no-ignore-case": "I!",
              "invert-match": "v", "word-regexp": "w", "line-regexp": "x", "count": "c",
              "line-number": "n", "only-matching": "o", "quiet": "q", "silent": "q",
              "no-messages": "s", "with-filename": "H", "no-filename": "h",
              "files-with-matches": "l", "files-without-match": "L", "text": "a",
              "regexp": "e", "file": "f", "max-count": "m", "after-context": "A",
              "before-context": "B", "context": "C", "color": "", "colour": "", "null": "Z",
              "recursive": "r", "dereference-recursive": "R", "directories": "d",
              "devices": "D"}
_GREP_ARG = set("efmABCdD")


class _Usage(Exception):
    def __init__(self, text: str, status: int = 2):
        super().__init__(text)
        self.result = CommandResult(text, status, INVALID)


def _grep_opts(prog: str, argv: list[str], short_arg: set, long_map: dict) -> tuple[list, list]:
    """GNU getopt with argument permutation: ([(opt, value)], operands)."""
    opts, operands, i = [], [], 1
    while i < len(argv):
        a = argv[i]
        i += 1
        if a == "--":
            operands += argv[i:]
            break
        if a.startswith("--"):
            name, eq, val = a[2:].partition("=")
            hits = [k for k in long_map if k.startswith(name)]
            key = name if name in long_map else (hits[0] if len(hits) == 1 else None)
            if key is None:
                raise _Usage(f"{prog}: unrecognized option '{a}'\n" + _usage_for(prog))
            opt = long_map[key]
            if opt and opt in short_arg and not eq:
                if i >= len(argv):
                    raise _Usage(f"{prog}: option '--{key}' requires an argument\n"
                                 + _usage_for(prog))
                val, i = argv[i], i + 1
            opts.append((opt, val))
        elif a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                c = a[j]
                j += 1
                if c.isdigit() and prog in ("grep", "head", "tail"):
                    k = j
                    while k < len(a) and a[k].isdigit():
                        k += 1
                    opts.append(("NUM", a[j - 1:k]))
                    j = k
                elif c in short_arg:
                    val = a[j:]
                    if not val:
                        if i >= len(argv):
                            raise _Usage(f"{prog}: option requires an argument -- '{c}'\n"
                                         + _usage_for(prog))
                        val, i = argv[i], i + 1
                    opts.append((c, val))
                    break
                else:
                    opts.append((c, None))
        else:
            operands.append(a)
    return opts, operands


def _usage_for(prog: str) -> str:
    return _GREP_USAGE if prog == "grep" else f"Try '{prog} --help' for more information.\n"


_OPERAND = "reads only the output piped into it; file operands are not allowed"


def operand_refusal(argv: list[str]) -> str | None:
    """Why a filter's argv is refused (a file to read or write), or None. Usage errors are
    left to the filter, which reports them as the real tool does."""
    prog = "grep" if argv[0] in ("egrep", "fgrep") else argv[0]
    spec = _SPECS.get(prog)
    if spec is None:
        return None
    argv = _legacy_tail([prog] + list(argv[1:]))
    try:
        opts, operands = _grep_opts(prog, argv, *spec)
    except _Usage:
        return None
    names = {o for o, _ in opts}
    if prog == "grep":
        if names & {"r", "R", "d", "D"}:
            return "grep -r/-R/-d/-D read directories and are not allowed"
        if "f" in names:
            return "grep -f reads patterns from a file and is not allowed (use -e)"
        if "e" not in names and operands:
            operands = operands[1:]  # the pattern
    if prog == "sort" and names & {"o", "T"}:
        return "sort -o/-T write files and are not allowed"
    if prog == "uniq" and len(operands) > 1:
        return "uniq writes its output operand and is not allowed (uniq reads the pipe only)"
    files = [o for o in operands if o != "-"]
    if files:
        return f"{argv[0]} {_OPERAND} ({files[0]})"
    return None


def grep(argv: list[str], stdin: str) -> CommandResult:
    why = operand_refusal(argv)
    if why:
        return refused(why)
    try:
        opts, operands = _grep_opts("grep", argv, _GREP_ARG, _GREP_LONG)
    except _Usage as e:
        return e.result
    f = {"mode": "G", "patterns": None, "after": 0, "before": 0, "max": None, "ctx": False}
    flags: set[str] = set()
    for o, v in opts:
        if o in ("E", "F", "G", "P"):
            f["mode"] = o
        elif o == "e":
            f["patterns"] = (f["patterns"] or []) + v.split("\n")
        elif o in ("A", "B", "C", "NUM"):
            if not v.isdigit():
                return CommandResult(f"grep: {v}: invalid context length argument\n", 2, INVALID)
            f["ctx"] = True  # even -A0 separates groups with --
            if o in ("A", "C", "NUM"):
                f["after"] = int(v)
            if o in ("B", "C", "NUM"):
                f["before"] = int(v)
        elif o == "m":
            if not v.lstrip("-").isdigit():
                return CommandResult("grep: invalid max count\n", 2, INVALID)
            f["max"] = int(v)
        elif o == "I!":
            flags.discard("i")
        elif o and o not in "ivwxcnoqsHhlLaZyIz":
            return CommandResult(f"grep: invalid option -- '{o}'\n" + _GREP_USAGE, 2, INVALID)
        elif o:
            flags.add("i" if o == "y" else o)
    if f["patterns"] is None:
        if not operands:
            return CommandResult(_GREP_USAGE, 2, INVALID)
        f["patterns"] = operands.pop(0).split("\n")
    try:
        rx, warn = compile_grep(f["patterns"], f["mode"], "i" in flags, "w" in flags,
                                 "x" in flags)
    except RegexError as e:
        return CommandResult(f"grep: {e}\n", 2, INVALID)
    files = operands or ["-"]
    show_name = ("H" in flags or len(files) > 1) and "h" not in flags
    out, matched = [warn] if warn else [], False
    for label, text in _read_inputs(files, stdin):
        hit = _grep_text(rx, _lines(text), label if show_name else None, flags, f, out)
        matched = matched or hit
        if hit and "q" in flags:
            return CommandResult("", 0)
    return CommandResult("" if "q" in flags else "".join(out), 0 if matched else 1)


def _grep_text(rx, lines: list[str], label: str | None, flags: set, f: dict,
               out: list[str]) -> bool:
    invert = "v" in flags
    selected = [i for i, ln in enumerate(lines) if (rx.search(ln) is not None) != invert]
    if f["max"] is not None:
        selected = selected[:max(f["max"], 0)]
    if "c" in flags:
        out.append((f"{label}:" if label else "") + f"{len(selected)}\n")
        return bool(selected)
    if "l" in flags or "L" in flags:
        if bool(selected) == ("l" in flags):
            out.append((label or _STDIN) + "\n")
        return bool(selected)
    pre = (lambda i, sep: (f"{label}{sep}" if label else "")
           + (f"{i + 1}{sep}" if "n" in flags else ""))
    if "o" in flags:
        for i in selected:
            if not invert:
                out.extend(pre(i, ":") + m + "\n" for m in matches(rx, lines[i]))
        return bool(selected)
    shown, last = set(selected), -2
    for i in selected:
        lo, hi = max(0, i - f["before"]), min(len(lines) - 1, i + f["after"])
        for k in range(lo, hi + 1):
            if k <= last:
                continue
            if f["ctx"] and last >= 0 and k > last + 1:
                out.append("--\n")
            out.append(pre(k, ":" if k in shown else "-") + lines[k] + "\n")
            last = k
    return bool(selected)


# ------------------------------------------------------------------------ head / tail
def _read_inputs(operands: list[str], stdin: str):
    """Yields (label, text) per ``-`` operand (all that :func:`operand_refusal` lets
    through); standard input reads once, as a second ``-`` finds it at its end."""
    for _ in operands or ["-"]:
        yield _STDIN, stdin
        stdin = ""


def _count_arg(prog: str, value: str, what: str) -> tuple[int, str]:
    """(count, sign) for ``-n``/``-c`` values: sign is ``-`` (all but), ``+`` (from) or ``""``."""
    sign = value[0] if value[:1] in ("+", "-") else ""
    digits = value[len(sign):]
    mult = {"": 1, "b": 512, "k": 1024, "K": 1024, "kB": 1000, "M": 1024 ** 2, "MB": 10 ** 6,
            "G": 1024 ** 3, "GB": 10 ** 9}
    m = re.fullmatch(r"(\d+)([a-zA-Z]*)", digits)
    if not m or m.group(2) not in mult:
        raise _Usage(f"{prog}: invalid number of {what}: \u2018{value}\u2019\n", 1)
    return int(m.group(1)) * mult[m.group(2)], sign


_HEAD_LONG = {"lines": "n", "bytes": "c", "quiet": "q", "silent": "q", "verbose": "v",
              "follow": "f", "retry": ""}


def _legacy_tail(argv: list[str]) -> list[str]:
    """``tail +N`` is ``tail -n +N``."""
    if argv[0] == "tail" and len(argv) > 1 and re.fullmatch(r"\+\d+", argv[1]):
        return [argv[0], "-n", argv[1]] + argv[2:]
    return argv


def _head_tail(prog: str, argv: list[str], stdin: str) -> CommandResult:
    why = operand_refusal(argv)
    if why:
        return refused(why)
    long_map = _HEAD_LONG
    try:
        argv = _legacy_tail(argv)
        opts, operands = _grep_opts(prog, argv, {"n", "c"}, long_map)
        count, sign, unit, headers = 10, "", "lines", None
        for o, v in opts:
            if o in ("n", "c", "NUM"):
                unit = "bytes" if o == "c" else "lines"
                count, sign = _count_arg(prog, v, unit)
            elif o in ("q", "v"):
                headers = o == "v"
            elif o and o not in "fFsz":
                raise _Usage(f"{prog}: invalid option -- '{o}'\n" + _usage_for(prog), 1)
    except _Usage as e:
        return e.result
    out = []
    files = operands or ["-"]
    show = headers if headers is not None else len(files) > 1
    for k, (_, text) in enumerate(_read_inputs(files, stdin)):
        if show:
            out.append(("\n" if k else "") + "==> standard input <==\n")
        out.append(_slice(prog, text, count, sign, unit))
    return CommandResult("".join(out))


def _slice(prog: str, text: str, count: int, sign: str, unit: str) -> str:
    items = text.splitlines(keepends=True) if unit == "lines" else list(text)
    if prog == "head":
        part = items[:max(len(items) - count, 0)] if sign == "-" else items[:count]
    elif sign == "+":
        part = items[max(count - 1, 0):]
    else:
        part = items[len(items) - count:] if count else []
    return "".join(part)


def head(argv: list[str], stdin: str) -> CommandResult:
    return _head_tail("head", argv, stdin)


def tail(argv: list[str], stdin: str) -> CommandResult:
    return _head_tail("tail", argv, stdin)


def _checked_options(argv: list[str]):
    """(options, operands) of a filter's argv, or the result of a refusal or usage error."""
    why = operand_refusal(argv)
    if why:
        return refused(why)
    try:
        return _grep_opts(argv[0], argv, *_SPECS[argv[0]])
    except _Usage as e:
        return e.result


# --------------------------------------------------------------------------------- wc
_WC_LONG = {"lines": "l", "words": "w", "bytes": "c", "chars": "m", "max-line-length": "L"}


def wc(argv: list[str], stdin: str) -> CommandResult:
    parsed = _checked_options(argv)
    if isinstance(parsed, CommandResult):
        return parsed
    opts, operands = parsed
    want = []
    for o, _ in opts:
        if o not in "lwcmL":
            return CommandResult(f"wc: invalid option -- '{o}'\n"
                                 "Try 'wc --help' for more information.\n", 1, INVALID)
        want.append(o)
    cols = [c for c in "lwmcL" if c in want] or ["l", "w", "c"]
    rows, total = [], {c: 0 for c in cols}
    for label, text in _read_inputs(operands, stdin):
        counts = {"l": text.count("\n"), "w": len(text.split()), "c": len(text.encode()),
                  "m": len(text),
                  "L": max((len(x.expandtabs(8)) for x in text.split("\n")), default=0)}
        rows.append(([counts[c] for c in cols], "-" if label == _STDIN and operands else
                     ("" if label == _STDIN else label)))
        for c in cols:
            total[c] = max(total[c], counts[c]) if c == "L" else total[c] + counts[c]
    if len(operands) > 1:
        rows.append(([total[c] for c in cols], "total"))
    if len(cols) == 1 and len(rows) == 1:
        width = 1
    else:  # standard input: coreutils pads to 7
        width = 7
    lines = [" ".join(f"{v:>{width}d}" for v in vals) + (f" {name}" if name else "") + "\n"
             for vals, name in rows]
    return CommandResult("".join(lines))


# ------------------------------------------------------------------------------- sort
_NUM_PREFIX = re.compile(r"\s*(-?\d*\.?\d*)")


def _num(text: str) -> float:
    m = _NUM_PREFIX.match(text).group(1)
    try:
        return float(m) if m not in ("", "-", ".", "-.") else 0.0
    except ValueError:
        return 0.0


def _field_slice(line: str, sep: str | None, start: int, end: int | None, blanks: bool) -> str:
    if sep is None:
        spans = [m.span() for m in re.finditer(r"\s*\S+", line)]
    else:
        spans, pos = [], 0
        for part in line.split(sep):
            spans.append((pos, pos + len(part)))
            pos += len(part) + 1
    if start > len(spans):
        return ""
    a = spans[start - 1][0]
    b = spans[min(end, len(spans)) - 1][1] if end else len(line)
    text = line[a:b] if b >= a else ""
    return text.lstrip() if blanks else text


_SORT_LONG = {"reverse": "r", "numeric-sort": "n", "unique": "u", "ignore-case": "f",
              "key": "k", "field-separator": "t", "ignore-leading-blanks": "b",
              "stable": "s", "general-numeric-sort": "g", "output": "o",
              "temporary-directory": "T", "buffer-size": "S"}
_SORT_ARG = {"k", "t", "o", "S", "T"}


def sort(argv: list[str], stdin: str) -> CommandResult:
    parsed = _checked_options(argv)
    if isinstance(parsed, CommandResult):
        return parsed
    opts, operands = parsed
    g, keys, sep = set(), [], None
    for o, v in opts:
        if o == "k":
            m = re.fullmatch(r"(\d+)(?:\.\d+)?([bfnrg]*)(?:,(\d+)(?:\.\d+)?([bfnrg]*))?", v)
            if not m or int(m.group(1)) == 0:
                return CommandResult(f"sort: invalid number at field start: invalid count at "
                                     f"start of \u2018{v}\u2019\n", 2, INVALID)
            keys.append((int(m.group(1)), int(m.group(3)) if m.group(3) else None,
                         set((m.group(2) or "") + (m.group(4) or ""))))
        elif o == "t":
            if len(v) != 1:
                return CommandResult(f"sort: multi-character tab \u2018{v}\u2019\n", 2, INVALID)
            sep = v
        elif o in ("S", "z"):
            continue
        elif o in "rnufbsg":
            g.add("n" if o == "g" else o)
        else:
            return CommandResult(f"sort: invalid option -- '{o}'\n"
                                 "Try 'sort --help' for more information.\n", 2, INVALID)
    lines = []
    for _, text in _read_inputs(operands, stdin):
        lines.extend(_lines(text))
    specs = [(s, e, (m & set("bfnr")) or (g & set("bfnr"))) for s, e, m in keys] or \
        [(1, None, g & set("bfnr"))]
    whole = not keys

    def keyed(line: str, spec) -> object:
        s, e, mods = spec
        text = line if whole else _field_slice(line, sep, s, e, "b" in mods)
        if "f" in mods:
            text = text.upper()
        return _num(text) if "n" in mods else text.encode()

    def cmp(a: str, b: str) -> int:
        for spec in specs:
            x, y = keyed(a, spec), keyed(b, spec)
            if x != y:
                r = -1 if x < y else 1
                return -r if "r" in spec[2] else r
        if "u" in g or "s" in g:
            return 0
        r = (a.encode() > b.encode()) - (a.encode() < b.encode())
        return -r if "r" in g else r

    lines.sort(key=functools.cmp_to_key(cmp))
    if "u" in g:
        uniq_lines = []
        for ln in lines:
            if not uniq_lines or cmp(uniq_lines[-1], ln) != 0:
                uniq_lines.append(ln)
        lines = uniq_lines
    return CommandResult("".join(ln + "\n" for ln in lines))


# ------------------------------------------------------------------------------- uniq
_UNIQ_LONG = {"count": "c", "repeated": "d", "unique": "u", "ignore-case": "i"}


def uniq(argv: list[str], stdin: str) -> CommandResult:
    parsed = _checked_options(argv)
    if isinstance(parsed, CommandResult):
        return parsed
    opts, operands = parsed
    fl = set()
    for o, _ in opts:
        if o == "z":
            continue
        if o not in "cdui":
            return CommandResult(f"uniq: invalid option -- '{o}'\n"
                                 "Try 'uniq --help' for more information.\n", 1, INVALID)
        fl.add(o)
    text = stdin
    out, groups = [], []
    for ln in _lines(text):
        key = ln.lower() if "i" in fl else ln
        if groups and groups[-1][0] == key:
            groups[-1][2] += 1
        else:
            groups.append([key, ln, 1])
    for _, ln, n in groups:
        if ("d" in fl and n < 2) or ("u" in fl and n > 1):
            continue
        out.append(f"{n:7d} {ln}\n" if "c" in fl else ln + "\n")
    return CommandResult("".join(out))


FILTERS: dict[str, Callable[[list[str], str], CommandResult]] = {
    "grep": grep, "head": head, "tail": tail, "wc": wc, "sort": sort, "uniq": uniq}
FILTER_NAMES = frozenset(FILTERS) | {"egrep", "fgrep"}
_SPECS = {"grep": (_GREP_ARG, _GREP_LONG), "head": ({"n", "c"}, _HEAD_LONG),
          "tail": ({"n", "c"}, _HEAD_LONG), "wc": (set(), _WC_LONG),
          "sort": (_SORT_ARG, _SORT_LONG), "uniq": (set(), _UNIQ_LONG)}


def run_filter(argv: list[str], stdin: str) -> CommandResult:
    """Run any filter of :data:`FILTER_NAMES` (``egrep``/``fgrep`` are ``grep -E``/``-F``)."""
    if argv[0] in ("egrep", "fgrep"):
        argv = ["grep", "-E" if argv[0] == "egrep" else "-F"] + list(argv[1:])
    return FILTERS[argv[0]](list(argv), stdin)
