"""Read-only text filters for pipelines: ``grep``, ``head``, ``tail``, ``wc``, ``sort``, ``uniq``.

Pure functions of ``(argv, stdin, opener)`` returning a :class:`CommandResult` with GNU
coreutils/grep 3.8 output, messages and exit statuses (grep exits 1 when nothing matched, 2 on
errors). ``opener(path) -> (text, None) | (None, reason)`` resolves file operands; without one
every file is missing. Task-independent: the routing and Kubernetes shells both use them.

Regular expressions: POSIX basic (default) and extended (``-E``) syntax, with the GNU
extensions (``\\+ \\? \\|`` in BRE, ``\\< \\> \\b \\w \\s``, back-references), are translated
to Python :mod:`re`, with grep's messages for malformed ones. Python picks the leftmost
alternative rather than the longest match, which only shows with ``-o``. Sorting compares
bytes as in the C locale.
"""
from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable

from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult

__all__ = [
    "FILTERS",
    "Opener",
    "RegexError",
    "grep",
    "head",
    "sort",
    "tail",
    "translate_regex",
    "uniq",
    "wc",
]

Opener = Callable[[str], "tuple[str | None, str | None]"]
_STDIN = "(standard input)"
_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z",
            "lower": "a-z", "space": " \\t\\n\\r\\f\\v", "blank": " \\t", "xdigit": "0-9A-Fa-f",
            "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"), "print": "\\x20-\\x7e",
            "graph": "\\x21-\\x7e", "cntrl": "\\x00-\\x1f\\x7f"}
_ESCAPE_CLASSES = {"w": r"\w", "W": r"\W", "s": r"\s", "S": r"\S", "b": r"\b", "B": r"\B",
                   "<": r"\b(?=\w)", ">": r"\b(?<=\w)", "`": r"\A", "'": r"\Z"}
_INTERVAL = re.compile(r"(\d*)(,?)(\d*)")


class RegexError(ValueError):
    """A pattern grep refuses; the message is grep's (without the ``grep: `` prefix)."""


def _lines(text: str) -> list[str]:
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return parts


# ------------------------------------------------------------------ regex translation
def _bracket(pat: str, i: int) -> tuple[str, int]:
    """Translate the bracket expression opening at ``pat[i] == '['``; returns (re, next i)."""
    n, j = len(pat), i + 1
    neg = j < n and pat[j] == "^"
    j += neg
    items: list[str] = []
    first, start = True, j
    while True:
        if j >= n:
            raise RegexError("Invalid regular expression" if i == n - 1 else
                             "Unmatched [, [^, [:, [., or [=")
        c = pat[j]
        if c == "]" and not first:
            break
        first = False
        if c == "[" and j + 1 < n and pat[j + 1] in ":=.":
            kind, end = pat[j + 1], pat.find(pat[j + 1] + "]", j + 2)
            if end < 0:
                raise RegexError("Unmatched [, [^, [:, [., or [=")
            name = pat[j + 2:end]
            if kind == ":":
                if name not in _CLASSES:
                    raise RegexError("Invalid character class name")
                items.append(_CLASSES[name])
            else:
                items.append(re.escape(name))
            j = end + 2
            continue
        if j + 2 < n and pat[j + 1] == "-" and pat[j + 2] != "]":
            lo, hi = c, pat[j + 2]
            if ord(lo) > ord(hi):
                raise RegexError("Invalid range end")
            items.append(f"{re.escape(lo)}-{re.escape(hi)}")
            j += 3
            continue
        items.append(re.escape(c))
        j += 1
    body = pat[start:j]
    if len(body) > 1 and body[0] == ":" and body[-1] == ":" and not neg:
        raise RegexError(f"character class syntax is [[:space:]], not [{body}]")
    return ("[^" if neg else "[") + "".join(items) + "]", j + 1


class _Builder:
    """Atoms of one alternation level; a quantifier applies to the last atom."""

    def __init__(self):
        self.parts: list[str] = []
        self.quantifiable = False
        self.quantified = False

    def atom(self, text: str, quantifiable: bool = True) -> None:
        self.parts.append(text)
        self.quantifiable, self.quantified = quantifiable, False

    def quantify(self, q: str) -> None:
        if self.quantified:
            self.parts[-1] = f"(?:{self.parts[-1]})"
        self.parts[-1] += q
        self.quantified = True

    def bar(self) -> None:
        self.parts.append("|")
        self.quantifiable = self.quantified = False


def translate_regex(pat: str, extended: bool, group_offset: int = 0) -> tuple[str, int, str]:
    """POSIX BRE (``extended=False``) or ERE -> Python regex: (regex, groups, warnings)."""
    stack: list[tuple[_Builder, int]] = []
    b, groups, closed, warn = _Builder(), 0, set(), ""
    i, n = 0, len(pat)
    while i < n:
        c, esc = pat[i], pat[i] == "\\"
        i += 1
        if esc:
            if i >= n:
                raise RegexError("Trailing backslash")
            c, i = pat[i], i + 1
        special = esc != extended  # BRE needs a backslash for ( ) | { + ?, ERE must not have one
        if c == "(" and special:
            groups += 1
            stack.append((b, groups))
            b = _Builder()
        elif c == ")" and special and stack:
            inner = "".join(b.parts)
            b, num = stack.pop()
            closed.add(num)
            b.atom(f"({inner})")
        elif c == ")" and special and not extended:
            raise RegexError("Unmatched ) or \\)")
        elif c == "|" and special:
            b.bar()
        elif (c == "*" and not esc) or (c in "+?" and special):
            if b.quantifiable:
                b.quantify(c)
            elif not extended:
                b.atom(re.escape(c))  # POSIX BRE: a leading * is literal
            elif c in "*+" and not b.parts and not stack:
                warn += f"grep: warning: {c} at start of expression\n"  # and repeats nothing
        elif c == "{" and special:
            i = _interval(pat, i, extended, b)
        elif c == "[" and not esc:
            cls, i = _bracket(pat, i - 1)
            b.atom(cls)
        elif c == "." and not esc:
            b.atom(".")
        elif c == "^" and not esc and (extended or not b.parts or b.parts[-1] == "|"):
            b.atom("^", False)
        elif c == "$" and not esc and (extended or i == n or pat.startswith(("\\)", "\\|"), i)):
            b.atom("$", False)
        elif esc and c in "123456789":
            if int(c) not in closed:
                raise RegexError("Invalid back reference")
            b.atom(f"\\{int(c) + group_offset}")
        elif esc and c in _ESCAPE_CLASSES:
            b.atom(_ESCAPE_CLASSES[c], c in "wWsS")
        else:
            b.atom(re.escape(c))
    if stack:
        raise RegexError("Unmatched ( or \\(")
    return "".join(b.parts), groups, warn


def _interval(pat: str, i: int, extended: bool, b: _Builder) -> int:
    """An interval ``{m,n}`` starting after the brace at ``i``; returns the next index."""
    m = _INTERVAL.match(pat, i)
    close = "}" if extended else "\\}"
    if not pat.startswith(close, m.end()) or not (m.group(1) or m.group(3)):
        if extended:  # GNU ERE: a brace that starts no valid interval is literal
            b.atom(re.escape("{"))
            return i
        raise RegexError("Unmatched \\{" if close not in pat[i:] else "Invalid content of \\{\\}")
    lo, comma, hi = m.group(1) or "0", m.group(2), m.group(3)
    if hi and int(lo) > int(hi):
        raise RegexError("Invalid content of \\{\\}")
    if int(lo) > 32767 or (hi and int(hi) > 32767):
        raise RegexError("Regular expression too big")
    end = m.end() + len(close)
    if b.quantifiable:
        b.quantify(f"{{{lo}{comma}{hi}}}")
    else:
        b.atom(re.escape(pat[i - (1 if extended else 2):end]))
    return end


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
              "before-context": "B", "context": "C", "color": "", "colour": "", "null": "Z"}
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


def _compile_grep(patterns: list[str], mode: str, icase: bool, word: bool,
                  line: bool) -> tuple[re.Pattern, str]:
    alts, warn, offset = [], "", 0
    for p in patterns:
        if mode == "F":
            alts.append(re.escape(p))
        elif mode == "P":
            alts.append(p)
        else:
            rx, groups, w = translate_regex(p, mode == "E", offset)
            alts.append(rx)
            offset += groups
            warn += w
    body = "|".join(f"(?:{a})" for a in alts)
    if word:
        body = rf"(?<!\w)(?:{body})(?!\w)"
    if line:
        body = rf"^(?:{body})$"
    try:
        with warnings.catch_warnings():  # -P patterns may trip Python's FutureWarnings
            warnings.simplefilter("ignore")
            return re.compile(body, re.IGNORECASE if icase else 0), warn
    except (re.error, RecursionError, OverflowError) as e:
        raise RegexError("Invalid regular expression") from e


def grep(argv: list[str], stdin: str, opener: Opener | None = None) -> CommandResult:
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
        elif o == "f":
            text, why = opener(v) if opener else (None, "No such file or directory")
            if text is None:
                return CommandResult(f"grep: {v}: {why}\n", 2, ERROR)
            f["patterns"] = (f["patterns"] or []) + _lines(text)
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
        elif o and o not in "ivwxcnoqsHhlLaZyIrz":
            return CommandResult(f"grep: invalid option -- '{o}'\n" + _GREP_USAGE, 2, INVALID)
        elif o:
            flags.add("i" if o == "y" else o)
    if f["patterns"] is None:
        if not operands:
            return CommandResult(_GREP_USAGE, 2, INVALID)
        f["patterns"] = operands.pop(0).split("\n")
    try:
        rx, warn = _compile_grep(f["patterns"], f["mode"], "i" in flags, "w" in flags,
                                 "x" in flags)
    except RegexError as e:
        return CommandResult(f"grep: {e}\n", 2, INVALID)
    files = operands or ["-"]
    show_name = ("H" in flags or len(files) > 1) and "h" not in flags
    out, matched, error = [warn] if warn else [], False, False
    for name in files:
        text, why = (stdin, None) if name == "-" else (
            opener(name) if opener else (None, "No such file or directory"))
        label = _STDIN if name == "-" else name
        if text is None:
            error = True
            if "s" not in flags:
                out.append(f"grep: {name}: {why}\n")
            continue
        hit = _grep_text(rx, _lines(text), label if show_name else None, flags, f, out)
        matched = matched or hit
        if hit and "q" in flags:
            return CommandResult("", 0)
    status = 2 if error and not (matched and "q" in flags) else (0 if matched else 1)
    return CommandResult("" if "q" in flags else "".join(out), status,
                         ERROR if status == 2 else OK)


def _grep_text(rx: re.Pattern, lines: list[str], label: str | None, flags: set, f: dict,
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
                out.extend(pre(i, ":") + m.group() + "\n"
                           for m in rx.finditer(lines[i]) if m.group())
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
def _read_inputs(prog: str, operands: list[str], stdin: str, opener: Opener | None):
    """Yields (label, text or None, error line or None) per operand; stdin reads once."""
    for name in operands or ["-"]:
        if name == "-":
            yield _STDIN, stdin, None
            stdin = ""
            continue
        text, why = opener(name) if opener else (None, "No such file or directory")
        if text is None:
            yield name, None, f"{prog}: cannot open '{name}' for reading: {why}\n"
        else:
            yield name, text, None


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


def _head_tail(prog: str, argv: list[str], stdin: str, opener: Opener | None) -> CommandResult:
    long_map = {"lines": "n", "bytes": "c", "quiet": "q", "silent": "q", "verbose": "v",
                "follow": "f", "retry": ""}
    try:
        # legacy ``tail +N`` / ``head -N`` forms
        if prog == "tail" and len(argv) > 1 and re.fullmatch(r"\+\d+", argv[1]):
            argv = [argv[0], "-n", argv[1]] + argv[2:]
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
    out, status = [], 0
    files = operands or ["-"]
    show = headers if headers is not None else len(files) > 1
    for k, (label, text, err) in enumerate(_read_inputs(prog, files, stdin, opener)):
        if err:
            out.append(err)
            status = 1
            continue
        if show:
            name = "standard input" if label == _STDIN else label
            out.append(("\n" if k else "") + f"==> {name} <==\n")
        out.append(_slice(prog, text, count, sign, unit))
    return CommandResult("".join(out), status, ERROR if status else OK)


def _slice(prog: str, text: str, count: int, sign: str, unit: str) -> str:
    items = text.splitlines(keepends=True) if unit == "lines" else list(text)
    if prog == "head":
        part = items[:max(len(items) - count, 0)] if sign == "-" else items[:count]
    elif sign == "+":
        part = items[max(count - 1, 0):]
    else:
        part = items[len(items) - count:] if count else []
    return "".join(part)


def head(argv: list[str], stdin: str, opener: Opener | None = None) -> CommandResult:
    return _head_tail("head", argv, stdin, opener)


def tail(argv: list[str], stdin: str, opener: Opener | None = None) -> CommandResult:
    return _head_tail("tail", argv, stdin, opener)


# --------------------------------------------------------------------------------- wc
def wc(argv: list[str], stdin: str, opener: Opener | None = None) -> CommandResult:
    long_map = {"lines": "l", "words": "w", "bytes": "c", "chars": "m",
                "max-line-length": "L"}
    try:
        opts, operands = _grep_opts("wc", argv, set(), long_map)
    except _Usage as e:
        return e.result
    want = []
    for o, _ in opts:
        if o not in "lwcmL":
            return CommandResult(f"wc: invalid option -- '{o}'\n"
                                 "Try 'wc --help' for more information.\n", 1, INVALID)
        want.append(o)
    cols = [c for c in "lwmcL" if c in want] or ["l", "w", "c"]
    rows, status, total = [], 0, {c: 0 for c in cols}
    out_err = []
    for label, text, err in _read_inputs("wc", operands, stdin, opener):
        if err:
            out_err.append(err.replace("cannot open '", "").replace("' for reading", ""))
            status = 1
            continue
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
    elif "-" in operands or not operands:
        width = 7
    elif all(o.startswith("/proc/") for o in operands):
        width = 1
    else:
        width = len(str(max((sum(r[0]) for r in rows), default=0)))
    lines = [" ".join(f"{v:>{width}d}" for v in vals) + (f" {name}" if name else "") + "\n"
             for vals, name in rows]
    return CommandResult("".join(out_err + lines), status, ERROR if status else OK)


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


def sort(argv: list[str], stdin: str, opener: Opener | None = None) -> CommandResult:
    long_map = {"reverse": "r", "numeric-sort": "n", "unique": "u", "ignore-case": "f",
                "key": "k", "field-separator": "t", "ignore-leading-blanks": "b",
                "stable": "s", "general-numeric-sort": "g"}
    try:
        opts, operands = _grep_opts("sort", argv, {"k", "t", "o", "S", "T"}, long_map)
    except _Usage as e:
        return e.result
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
        elif o in ("o", "S", "T") or o == "z":
            continue
        elif o in "rnufbsg":
            g.add("n" if o == "g" else o)
        else:
            return CommandResult(f"sort: invalid option -- '{o}'\n"
                                 "Try 'sort --help' for more information.\n", 2, INVALID)
    lines, errs = [], []
    for label, text, err in _read_inputs("sort", operands, stdin, opener):
        if err:
            errs.append(f"sort: cannot read: {label}: {err.rsplit(': ', 1)[1]}")
        else:
            lines.extend(_lines(text))
    if errs:
        return CommandResult(errs[0], 2, ERROR)
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
def uniq(argv: list[str], stdin: str, opener: Opener | None = None) -> CommandResult:
    long_map = {"count": "c", "repeated": "d", "unique": "u", "ignore-case": "i"}
    try:
        opts, operands = _grep_opts("uniq", argv, set(), long_map)
    except _Usage as e:
        return e.result
    fl = set()
    for o, _ in opts:
        if o == "z":
            continue
        if o not in "cdui":
            return CommandResult(f"uniq: invalid option -- '{o}'\n"
                                 "Try 'uniq --help' for more information.\n", 1, INVALID)
        fl.add(o)
    _, text, err = next(_read_inputs("uniq", operands[:1], stdin, opener))
    if err:
        return CommandResult(err.replace("cannot open '", "").replace("' for reading", ""),
                             1, ERROR)
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


FILTERS: dict[str, Callable[..., CommandResult]] = {
    "grep": grep, "head": head, "tail": tail, "wc": wc, "sort": sort, "uniq": uniq}
