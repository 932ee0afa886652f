"""A small reader and writer for the protocol-buffers text format, as MALT files use it.

A message is a list of ``(field, value)`` pairs in file order (repeated fields repeat); a
value is a nested message (a list), a quoted string (``str``), an enum identifier
(:class:`Ident`, a ``str`` subclass so it is written back unquoted), an ``int`` or a
``float``. Comments (``#``) and the optional ``:``, ``;``, ``,`` separators are accepted.
"""
from __future__ import annotations

import re

_TOKEN = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<str>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<punct>[{}\[\]<>:;,])
  | (?P<word>[A-Za-z0-9_.+\-]+)
""", re.X)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a",
            "b": "\b", "f": "\f", "v": "\v", "?": "?"}
_INT = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)[fF]?$")


class TextProtoError(ValueError):
    pass


class Ident(str):
    """An enum identifier (written without quotes)."""


Message = list  # list[tuple[str, "Value"]]


def _unquote(tok: str) -> str:
    body = tok[1:-1]
    if "\\" not in body:
        return body
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n in _ESCAPES:
            out.append(_ESCAPES[n])
            i += 2
        elif n in "xX":
            m = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2:])
            out.append(chr(int(m.group(0), 16)))
            i += 2 + len(m.group(0))
        elif n.isdigit():
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            out.append(chr(int(m.group(0), 8)))
            i += 1 + len(m.group(0))
        else:
            raise TextProtoError(f"unknown escape \\{n}")
    return "".join(out)


def _scalar(word: str):
    if _INT.match(word):
        return int(word, 0) if not re.match(r"[+-]?0[0-7]+$", word) else int(word, 8)
    if _FLOAT.match(word):
        return float(word.rstrip("fF"))
    low = word.lower()
    if low in ("inf", "infinity", "-inf", "-infinity", "nan"):
        return float(low.replace("infinity", "inf"))
    return Ident(word)


def parse(text: str) -> Message:
    """Parse a text-format message into nested ``(field, value)`` lists."""
    toks: list[tuple[str, str]] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            line = text.count("\n", 0, pos) + 1
            raise TextProtoError(f"line {line}: unexpected character {text[pos]!r}")
        pos = m.end()
        kind = m.lastgroup
        if kind != "ws":
            toks.append((kind, m.group(kind)))
    stack: list[Message] = [[]]
    closers: list[str] = []
    i, nt = 0, len(toks)
    while i < nt:
        kind, tok = toks[i]
        if kind == "punct" and tok in "}>":
            if not closers or closers[-1] != tok:
                raise TextProtoError(f"unbalanced {tok!r}")
            closers.pop()
            stack.pop()
            i += 1
            continue
        if kind == "punct" and tok in ";,":
            i += 1
            continue
        if kind != "word":
            raise TextProtoError(f"expected a field name, got {tok!r}")
        name = tok
        i += 1
        if i < nt and toks[i] == ("punct", ":"):
            i += 1
        if i >= nt:
            raise TextProtoError(f"field {name!r} has no value")
        kind, tok = toks[i]
        if kind == "punct" and tok in "{<":
            child: Message = []
            stack[-1].append((name, child))
            stack.append(child)
            closers.append("}" if tok == "{" else ">")
            i += 1
        elif kind == "str":
            parts = [_unquote(tok)]
            i += 1
            while i < nt and toks[i][0] == "str":  # adjacent literals concatenate
                parts.append(_unquote(toks[i][1]))
                i += 1
            stack[-1].append((name, "".join(parts)))
        elif kind == "word":
            stack[-1].append((name, _scalar(tok)))
            i += 1
        elif kind == "punct" and tok == "[":
            i += 1
            while i < nt and toks[i] != ("punct", "]"):
                k2, t2 = toks[i]
                if k2 == "str":
                    stack[-1].append((name, _unquote(t2)))
                elif k2 == "word":
                    stack[-1].append((name, _scalar(t2)))
                elif t2 != ",":
                    raise TextProtoError(f"bad list element {t2!r}")
                i += 1
            i += 1
        else:
            raise TextProtoError(f"field {name!r}: unexpected {tok!r}")
    if closers:
        raise TextProtoError("unexpected end of input: unclosed message")
    return stack[0]


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _value_text(v) -> str:
    if isinstance(v, Ident):
        return str(v)
    if isinstance(v, str):
        return _quote(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if v == v and abs(v) != float("inf") else str(v)
    raise TextProtoError(f"cannot write a {type(v).__name__}")


def dump(msg: Message, indent: int = 0) -> str:
    """Write a message in the layout MALT files use (two-space indentation)."""
    out: list[str] = []
    _dump(msg, indent, out)
    return "".join(out)


def _dump(msg: Message, indent: int, out: list[str]) -> None:
    pad = "  " * indent
    for name, v in msg:
        if isinstance(v, list):
            out.append(f"{pad}{name} {{\n")
            _dump(v, indent + 1, out)
            out.append(f"{pad}}}\n")
        else:
            out.append(f"{pad}{name}: {_value_text(v)}\n")


def field(msg: Message, name: str, default=None):
    """The first value of ``name`` in ``msg``."""
    for k, v in msg:
        if k == name:
            return v
    return default
