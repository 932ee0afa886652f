"""Go's JSON syntax errors and string quoting, as the programs behind ``kubectl`` word them.

Mirrors the scanner of Go's ``encoding/json`` (Go 1.15, which builds kube-apiserver
1.20.2): :func:`syntax_error` gives the ``SyntaxError`` text of the first invalid byte
(``invalid character '}' after array element``), ``unexpected end of JSON input`` for a
value cut short when the whole input is decoded (``json.Unmarshal``, which also refuses
anything after the value: ``after top-level value``), and ``unexpected EOF`` when a
``json.Decoder`` reads one value from a stream (the API server decodes a strategic merge
patch that way, so whatever follows the first value is never read). Python's ``json``
accepts what Go refuses (``NaN``, ``Infinity``) and words its errors otherwise, so a
document is checked here before Python parses it. :func:`go_quote` is ``strconv.Quote``
(``%q``). Left out: the errors of decoding a valid document into Go types (the simulator also
refuses patches nested deeper than
:data:`~netarena_gym.k8s.commands.kubectl_manifests.MAX_DEPTH`, far below Go's 10,000).
"""
from __future__ import annotations

import unicodedata

__all__ = ["syntax_error", "go_quote", "quote_char", "first_value_end"]

_SPACE = b" \t\r\n"
_DIGITS = b"0123456789"
_HEX = b"0123456789abcdefABCDEF"
_ESCAPES = b'bfnrt\\/"'
_LITERALS = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}
_SHORT = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


def _printable(ch: str) -> bool:
    """``strconv.IsPrint``: letters, marks, numbers, punctuation, symbols and the ASCII
    space."""
    return ch == " " or unicodedata.category(ch)[0] in "LMNPS"


def go_quote(s: str) -> str:
    """``strconv.Quote(s)`` without its surrounding double quotes (what ``%q`` prints
    between them)."""
    out = []
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif o in _SHORT:
            out.append(_SHORT[o])
        elif 0xD800 <= o <= 0xDFFF:  # not valid UTF-8: Go quotes the bad byte
            out.append("\\ufffd")
        elif _printable(ch):
            out.append(ch)
        elif o < 0x80:
            out.append(f"\\x{o:02x}")
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    return "".join(out)


def quote_char(c: int) -> str:
    """``encoding/json``'s ``quoteChar`` of one byte: ``'x'``, ``'\\''``, ``'"'``, or
    the byte read as a rune (a byte of a multi-byte character reads as Latin-1)."""
    if c == 0x27:
        return "'\\''"
    if c == 0x22:
        return "'\"'"
    return "'" + go_quote(chr(c)) + "'"


class _Error(Exception):
    def __init__(self, c: int, context: str):
        super().__init__(f"invalid character {quote_char(c)} {context}")


class _EOF(Exception):
    pass


def _skip(b: bytes, i: int) -> int:
    n = len(b)
    while i < n and b[i] in _SPACE:
        i += 1
    return i


MAX_NESTING = 10_000  # encoding/json's maxNestingDepth


def _value(b: bytes, i: int) -> int:
    """Scan one value starting at ``b[i]`` (no leading space); the index after it. Nested
    objects and arrays are kept on a stack of their own, not Python's."""
    n = len(b)
    stack: list[int] = []  # 0x7D: in an object, 0x5D: in an array
    while True:
        # a value starts at b[i]
        if i >= n:
            raise _EOF
        c = b[i]
        if c == 0x7B or c == 0x5B:  # { or [
            if len(stack) >= MAX_NESTING:
                raise _Error(c, "exceeded max depth")
            close = c + 2
            i = _skip(b, i + 1)
            if i >= n:
                raise _EOF
            if b[i] == close:
                i += 1
            else:
                stack.append(close)
                if close == 0x7D:
                    i = _key(b, i)
                continue
        elif c == 0x22:
            i = _string(b, i)
        elif c == 0x2D or c in _DIGITS:
            i = _number(b, i)
        elif c in _LITERALS:
            lit = _LITERALS[c]
            for k in range(1, len(lit)):
                if i + k >= n:
                    raise _EOF
                if b[i + k] != lit[k]:
                    raise _Error(b[i + k], f"in literal {lit.decode()} (expecting '{chr(lit[k])}')")
            i += len(lit)
        else:
            raise _Error(c, "looking for beginning of value")
        # a value ended: what its container allows next
        while stack:
            i = _skip(b, i)
            if i >= n:
                raise _EOF
            close = stack[-1]
            if b[i] == close:
                stack.pop()
                i += 1
                continue
            if b[i] != 0x2C:
                raise _Error(b[i], "after object key:value pair" if close == 0x7D
                             else "after array element")
            i = _skip(b, i + 1)
            if close == 0x7D:
                i = _key(b, i)
            break
        else:
            return i


def _key(b: bytes, i: int) -> int:
    """An object's key and its colon, from ``b[i]``; the index of its value (spaces
    skipped)."""
    n = len(b)
    if i >= n:
        raise _EOF
    if b[i] != 0x22:
        raise _Error(b[i], "looking for beginning of object key string")
    i = _skip(b, _string(b, i))
    if i >= n:
        raise _EOF
    if b[i] != 0x3A:
        raise _Error(b[i], "after object key")
    return _skip(b, i + 1)


def _string(b: bytes, i: int) -> int:
    n = len(b)
    i += 1
    while True:
        if i >= n:
            raise _EOF
        c = b[i]
        if c == 0x22:
            return i + 1
        if c < 0x20:
            raise _Error(c, "in string literal")
        if c == 0x5C:
            i += 1
            if i >= n:
                raise _EOF
            if b[i] == 0x75:  # \u
                for k in range(1, 5):
                    if i + k >= n:
                        raise _EOF
                    if b[i + k] not in _HEX:
                        raise _Error(b[i + k], "in \\u hexadecimal character escape")
                i += 4
            elif b[i] not in _ESCAPES:
                raise _Error(b[i], "in string escape code")
        i += 1


def _digits(b: bytes, i: int) -> int:
    n = len(b)
    while i < n and b[i] in _DIGITS:
        i += 1
    return i


def _expect_digit(b: bytes, i: int, context: str) -> None:
    if i >= len(b):
        raise _EOF
    if b[i] not in _DIGITS:
        raise _Error(b[i], context)


def _number(b: bytes, i: int) -> int:
    """A number: its end (where the value ends, whatever byte follows)."""
    n = len(b)
    if b[i] == 0x2D:
        i += 1
        _expect_digit(b, i, "in numeric literal")
    i = i + 1 if b[i] == 0x30 else _digits(b, i)
    if i < n and b[i] == 0x2E:
        _expect_digit(b, i + 1, "after decimal point in numeric literal")
        i = _digits(b, i + 1)
    if i < n and b[i] in b"eE":
        i += 1
        if i < n and b[i] in b"+-":
            i += 1
        _expect_digit(b, i, "in exponent of numeric literal")
        i = _digits(b, i)
    return i


def first_value_end(text: str) -> int:
    """Where (in characters) the first value of a valid ``text`` ends, as a
    ``json.Decoder`` stops reading after it."""
    b = text.encode("utf-8", "surrogatepass")
    return len(b[:_value(b, _skip(b, 0))].decode("utf-8", "surrogatepass"))


def syntax_error(text: str, stream: bool = False) -> str | None:
    """Go's error text for ``text`` as JSON, or None when it is valid. ``stream``: read
    one value as ``json.Decoder.Decode`` does (the rest is not looked at; an input cut
    short is ``unexpected EOF``, an empty one ``EOF``); else the whole input as
    ``json.Unmarshal`` reads it."""
    b = text.encode("utf-8", "surrogatepass")
    i = _skip(b, 0)
    if stream and i >= len(b):
        return "EOF"
    try:
        end = _value(b, i)
    except _Error as e:
        return str(e)
    except _EOF:
        return "unexpected EOF" if stream else "unexpected end of JSON input"
    if not stream:
        end = _skip(b, end)
        if end < len(b):
            return str(_Error(b[end], "after top-level value"))
    return None
