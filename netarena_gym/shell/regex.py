"""GNU grep's regular expressions on a linear-time engine.

POSIX basic (BRE) and extended (ERE) syntax as GNU grep 3.8 reads them, with the GNU
extensions (``\\+ \\? \\|`` in BRE, ``\\< \\> \\b \\w \\s``), translated to RE2 syntax and
compiled with ``google-re2`` (matching time linear in the input, whatever the pattern;
POSIX leftmost-longest semantics, as grep). Malformed patterns raise :class:`RegexError` with
grep's message. Left out, because RE2 cannot express them: back-references (``\\1``, an
error, never a hang) and ``-P`` lookarounds; ``\\<``/``\\>`` are RE2's ``\\b``; repeat counts
stop at 1000 (grep's limit is 32767).
"""
from __future__ import annotations

import functools
import re

import re2

__all__ = ["RegexError", "compile_ere", "compile_grep", "matches", "translate_regex"]

_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z",
            "lower": "a-z", "space": " \\t\\n\\r\\f\\v", "blank": " \\t", "xdigit": "0-9A-Fa-f",
            "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"), "print": "\\x20-\\x7e",
            "graph": "\\x21-\\x7e", "cntrl": "\\x00-\\x1f\\x7f"}
_ESCAPE_CLASSES = {"w": r"\w", "W": r"\W", "s": r"\s", "S": r"\S", "b": r"\b", "B": r"\B",
                   "<": r"\b", ">": r"\b", "`": r"\A", "'": r"\z"}
_INTERVAL = re.compile(r"(\d*)(,?)(\d*)")


class RegexError(ValueError):
    """A pattern grep refuses; the message is grep's (without the ``grep: `` prefix)."""

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
    """POSIX BRE (``extended=False``) or ERE -> RE2 syntax: (regex, groups, warnings).
    ``group_offset`` is kept for callers that number groups across patterns."""
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
            raise RegexError(f"back-reference \\{c}: not supported (patterns run on the "
                             "linear-time RE2 engine)")
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
    if int(lo) > 1000 or (hi and int(hi) > 1000):  # RE2's limit (grep's is 32767)
        raise RegexError("Regular expression too big")
    end = m.end() + len(close)
    if b.quantifiable:
        b.quantify(f"{{{lo}{comma}{hi}}}")
    else:
        b.atom(re.escape(pat[i - (1 if extended else 2):end]))
    return end


_RE2_ERRORS = (re2.error, TypeError, ValueError, RecursionError, OverflowError)


@functools.lru_cache(maxsize=256)
def _re2(body: str, icase: bool) -> "re2._Regexp":
    opts = re2.Options()
    opts.longest_match = True  # POSIX leftmost-longest, as grep
    opts.case_sensitive = not icase
    opts.log_errors = False
    opts.max_mem = 32 << 20
    return re2.compile(body, opts)


def compile_grep(patterns: list[str], mode: str, icase: bool, word: bool,
                  line: bool) -> tuple["re2._Regexp", str]:
    """One RE2 program for all patterns; group 1 is the match (``-w`` adds context)."""
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
    body = "(" + "|".join(f"(?:{a})" for a in alts) + ")"
    if word:  # RE2 has no lookaround: a non-word character (or an end) on each side
        body = rf"(?:^|\W){body}(?:\W|$)"
    if line:
        body = rf"^{body}$"
    try:
        return _re2(body, icase), warn
    except _RE2_ERRORS as e:
        text = str(e.args[0] if e.args else e)
        text = text.removeprefix("b'").removesuffix("'")
        if "repetition" in text or "too large" in text or "pattern too" in text:
            raise RegexError("Regular expression too big") from e
        if mode == "P":
            raise RegexError(f"unsupported Perl pattern ({text})") from e
        raise RegexError("Invalid regular expression") from e


def matches(rx, line: str):
    """Every non-overlapping match of group 1 in ``line`` (``-o``)."""
    pos = 0
    while pos <= len(line):
        m = rx.search(line, pos)
        if m is None:
            return
        start, end = m.start(1), m.end(1)
        if end > start:
            yield line[start:end]
        pos = max(end, pos + 1) if end == start else end


def compile_ere(pattern: str):
    """One POSIX ERE on RE2 (``sysctl -r``'s ``regcomp(REG_EXTENDED)``); raises RegexError."""
    body, _, _ = translate_regex(pattern, True)
    try:
        return _re2(body, False)
    except _RE2_ERRORS as e:
        raise RegexError("Invalid regular expression") from e
