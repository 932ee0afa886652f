"""kubectl's JSONPath template dialect (``k8s.io/client-go/util/jsonpath``, as kubectl 1.32
runs it for ``-o jsonpath=`` and ``-o custom-columns=``, with missing keys allowed).

Templates are text with ``{...}`` actions: fields ``.a.b`` (``\\.`` escapes a dot in a key),
``.*``, recursive descent ``..name``, ``[n]``, ``[a:b:c]``, ``[*]``, ``['key']``, unions
``[a,b]``, filters ``[?(@.x=="y")]`` (``== != < > <= >=`` or existence), string literals
``{"\\n"}`` and ``{range ...}...{end}``. Results of one action print separated by spaces:
strings as they are, maps and lists as compact JSON (Go's ``json.Marshal``).

Plain JSONPath libraries (jsonpath-ng, ...) have neither ``range``/``end`` nor the output
rules, so this is a small interpreter. Left out: ``-o jsonpath-as-json`` and
``jsonpath-file``, and the long debugging dump kubectl appends to execution errors.
"""
from __future__ import annotations

import ast
import json
import re

_MISSING = object()


class JSONPathError(ValueError):
    pass


# --------------------------------------------------------------------------- parser
# nodes: ("text", s) | ("field", name) | ("wild",) | ("recursive",) | ("slice", a, b, c)
#        | ("filter", left, op, right) | ("union", [nodes...]) | ("range",) | ("end",)
#        | ("literal", value)
_SLICE = re.compile(r"^(-?\d*)(:-?\d*)?(:-?\d*)?$")
_FILTER = re.compile(r"^(.*?)\s*(==|<=|>=|!=|<|>)\s*(.*)$")


def parse(template: str) -> list:
    """[("text", s) | ("action", [nodes])] or raises JSONPathError (kubectl's words)."""
    out, i, n = [], 0, len(template)
    while i < n:
        j = template.find("{", i)
        if j < 0:
            out.append(("text", template[i:]))
            break
        if j > i:
            out.append(("text", template[i:j]))
        nodes, i = _action(template, j + 1)
        out.append(("action", nodes))
    return out


def _action(s: str, i: int) -> tuple[list, int]:
    nodes: list = []
    n = len(s)
    while True:
        if i >= n or s[i] == "\n":
            raise JSONPathError("unclosed action")
        c = s[i]
        if c == "}":
            return nodes, i + 1
        if s.startswith("range", i):
            nodes.append(("range",))
            i += 5
        elif s.startswith("end", i):
            nodes.append(("end",))
            i += 3
        elif c == " ":
            i += 1
        elif c in "@$":
            i += 1
        elif c == "[":
            if s.startswith("[?(", i):
                node, i = _filter(s, i + 3)
            else:
                node, i = _array(s, i)
            nodes.append(node)
        elif c in "\"'":
            j = i + 1
            while j < n and s[j] != c:
                j += 2 if s[j] == "\\" else 1
            if j >= n:
                raise JSONPathError("unterminated quoted string")
            try:
                text = ast.literal_eval('"' + s[i + 1:j].replace('"', '\\"') + '"') if c == '"' \
                    else s[i + 1:j]
            except (SyntaxError, ValueError):
                raise JSONPathError(f"invalid syntax {s[i:j + 1]}") from None
            nodes.append(("literal", text))
            i = j + 1
        elif c == ".":
            if s.startswith("..", i):
                nodes.append(("recursive",))
                i += 2
                if i < n and s[i] not in ".[":
                    i -= 1  # ..name: a field follows
                    node, i = _field(s, i)
                    nodes.append(node)
                continue
            node, i = _field(s, i)
            nodes.append(node)
        elif c in "+-" or c.isdigit():
            m = re.match(r"[+-]?\d+(\.\d+)?", s[i:])
            if not m:
                raise JSONPathError(f"unrecognized character in action: U+{ord(c):04X} '{c}'")
            v = m.group(0)
            nodes.append(("literal", float(v) if "." in v else int(v)))
            i += len(v)
        elif s.startswith("true", i) or s.startswith("false", i):
            v = s.startswith("true", i)
            nodes.append(("literal", v))
            i += 4 if v else 5
        elif c.isalnum() or c == "_":  # an identifier: parsed, but unknown when executed
            m = re.match(r"\w+", s[i:])
            nodes.append(("ident", m.group(0)))
            i += len(m.group(0))
        else:
            raise JSONPathError(f"unrecognized character in action: U+{ord(c):04X} '{c}'")


def _field(s: str, i: int) -> tuple[tuple, int]:
    i += 1  # the dot
    j, name = i, ""
    while j < len(s):
        c = s[j]
        if c == "\\" and j + 1 < len(s):
            name += s[j + 1]
            j += 2
            continue
        if c.isspace() or c in ".[]}(),=!<>":
            break
        name += c
        j += 1
    if name == "*":
        return ("wild",), j
    return ("field", name), j


def _array(s: str, i: int) -> tuple[tuple, int]:
    j = s.find("]", i)
    nl = s.find("\n", i)
    if j < 0 or 0 <= nl < j:
        raise JSONPathError("unterminated array")
    text = s[i + 1:j]
    if text == "*":
        text = ":"
    parts = text.split(",")
    if len(parts) > 1:
        return ("union", [_array("[" + p + "]", 0)[0] for p in parts]), j + 1
    m = re.match(r"^'([^']*)'$", text)
    if m:  # ['a.b'] is the path .a.b (client-go parses the key as an action)
        nodes, _ = _action("." + m.group(1) + "}", 0)
        return ("union", [("seq", nodes)]) if len(nodes) != 1 else nodes[0], j + 1
    m = _SLICE.match(text)
    if not m:
        raise JSONPathError(f"invalid array index {text}")
    vals = [m.group(1)] + [(g or ":")[1:] for g in m.groups()[1:]]
    nums = [int(v) if v not in ("", "-") else None for v in vals]
    return ("slice", nums[0], nums[1], nums[2], m.group(2) is not None), j + 1


def _filter(s: str, i: int) -> tuple[tuple, int]:
    j, quote = i, None
    while True:
        if j >= len(s) or s[j] == "\n":
            raise JSONPathError("unterminated filter")
        c = s[j]
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == ")":
            break
        j += 1
    text = s[i:j]
    if not s.startswith(")]", j):
        raise JSONPathError("unclosed array expect ]")
    m = _FILTER.match(text)
    if m is None:
        left, _ = _action(text + "}", 0)
        return ("filter", left, "exists", []), j + 2
    left, _ = _action(m.group(1) + "}", 0)
    right, _ = _action(m.group(3) + "}", 0)
    return ("filter", left, m.group(2), right), j + 2


# ------------------------------------------------------------------------ evaluator
def _walk(values: list, nodes: list, state: dict) -> list:
    for node in nodes:
        values = _step(values, node, state)
    return values


def _step(values: list, node: tuple, state: dict) -> list:
    kind = node[0]
    if kind == "range":
        state["begin"] += 1
        return values
    if kind == "end":
        state["end"] += 1
        return values
    if kind == "literal":
        return [node[1]]
    if kind == "field":
        out = []
        for v in values:
            if isinstance(v, dict) and node[1] in v:
                out.append(v[node[1]])
            elif isinstance(v, dict) and node[1] == "":
                out.append(v)
        return out
    if kind == "wild":
        out = []
        for v in values:
            if isinstance(v, dict):
                out += [v[k] for k in sorted(v)]
            elif isinstance(v, list):
                out += v
        return out
    if kind == "recursive":
        out = []
        stack = list(reversed(values))
        while stack:
            v = stack.pop()
            out.append(v)
            kids = [v[k] for k in sorted(v)] if isinstance(v, dict) else v if isinstance(v, list) else []
            stack.extend(reversed(kids))
        return out
    if kind == "slice":
        out = []
        for v in values:
            if not isinstance(v, list):
                raise JSONPathError(f"{_go_kind(v)} is not array or slice")
            start, stop, step, is_range = node[1], node[2], node[3], node[4]
            n = len(v)
            if not is_range:
                idx = start if start is not None else 0
                if idx < 0:
                    idx += n
                if not 0 <= idx < n:
                    raise JSONPathError(f"array index out of bounds: index {start}, length {n}")
                out.append(v[idx])
                continue
            out += v[slice(start, stop, step or None)]
        return out
    if kind == "ident":
        raise JSONPathError(f"unrecognized identifier {node[1]}")
    if kind == "seq":
        return _walk(values, node[1], state)
    if kind == "union":
        out = []
        for sub in node[1]:
            out += _step(values, sub, state)
        return out
    if kind == "filter":
        out = []
        for v in values:
            if not isinstance(v, list):
                raise JSONPathError(f"{go_value(v)} is not array or slice and cannot be filtered")
            for x in v:
                left = _walk([x], node[1], state)
                if node[2] == "exists":
                    if left:
                        out.append(x)
                    continue
                right = _walk([x], node[3], state)
                if left and right and _compare(left[0], node[2], right[0]):
                    out.append(x)
        return out
    raise AssertionError(node)


def _go_kind(v) -> str:
    """The reflect kind client-go names for a decoded JSON value."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int64"
    return {str: "string", float: "float64", dict: "map", list: "slice"}.get(type(v), "invalid")


def _compare(a, op: str, b) -> bool:
    """text/template's eq/ne/lt/le/gt/ge over two values of one kind (as the filter does)."""
    ka, kb = _go_kind(a), _go_kind(b)
    if ka != kb or ka in ("map", "slice", "invalid"):
        raise JSONPathError("incompatible types for comparison")
    if op in ("==", "!="):
        return (a == b) == (op == "==")
    if ka == "bool":
        raise JSONPathError("invalid type for comparison")
    return {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]


def find_results(template: list, data) -> list[list]:
    """Every action's results, ``range`` blocks expanded (client-go's FindResults)."""
    state = {"begin": 0, "end": 0}
    out, _ = _find(template, 0, data, state, 0)
    return out


def _find(nodes: list, i: int, data, state: dict, depth: int) -> tuple[list, int]:
    out = []
    while i < len(nodes):
        kind, body = nodes[i]
        if kind == "text":
            out.append([body])
            i += 1
            continue
        res = _walk([data], body, state)
        if state["end"] > 0 and depth == 0:
            raise JSONPathError("not in range, nothing to end")
        if state["end"] > 0:
            state["end"] -= 1
            return out, i + 1
        if state["begin"] > 0:
            state["begin"] -= 1
            end = i + 1
            if res:
                for v in res:
                    sub, end = _find(nodes, i + 1, v, state, depth + 1)
                    out += sub
            else:
                _, end = _find(nodes, i + 1, None, state, depth + 1)
            i = end
            continue
        out.append(res)
        i += 1
    return out, i


def go_json(v) -> str:
    """Go's json.Marshal of decoded JSON: sorted keys, compact, HTML characters escaped."""
    text = json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def go_quote(s: str) -> str:
    """Go's %q of a string (strconv.Quote), for the printable text of a template."""
    return json.dumps(s, ensure_ascii=False)


def to_text(v) -> str:
    if isinstance(v, (dict, list)):
        return go_json(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    return str(v)


def render(template: str, data) -> str:
    """The text kubectl prints for ``-o jsonpath=<template>`` over ``data``."""
    return render_parsed(parse(template), data)


def render_parsed(template: list, data) -> str:
    out = []
    for results in find_results(template, data):
        out.append(" ".join(to_text(v) for v in results))
    return "".join(out)


def go_value(v) -> str:
    """fmt's ``%v`` of decoded JSON (custom-columns cells)."""
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{go_value(v[k])}" for k in sorted(v)) + "]"
    if isinstance(v, list):
        return "[" + " ".join(go_value(x) for x in v) + "]"
    return "<nil>" if v is None else to_text(v)


def relaxed(expr: str) -> str:
    """kubectl's RelaxedJSONPathExpression: ``.a.b``, ``a.b`` or ``{.a.b}`` -> ``{.a.b}``."""
    m = re.match(r"^\{?(\.?)([^{}]*)\}?$", expr)
    if not m:
        raise JSONPathError("unexpected path string, expected a 'name1.name2' or '.name1.name2' "
                            "or '{name1.name2}' or '{.name1.name2}'")
    return "{." + m.group(2) + "}" if m.group(1) == "" and not m.group(2).startswith(".") \
        else "{" + m.group(1) + m.group(2) + "}"


def parse_columns(spec: str) -> list[tuple[str, list]]:
    """``HEADER:PATH,...`` as [(header, parsed template)] or raises JSONPathError."""
    cols = []
    for part in spec.split(","):
        head, sep, path = part.partition(":")
        if not sep or ":" in path:
            raise JSONPathError(f"unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>")
        cols.append((head, parse(relaxed(path))))
    return cols


def custom_columns(cols: list[tuple[str, list]], objs: list[dict], headers: bool = True) -> str:
    """``-o custom-columns=`` over objects (tabwriter, padding 3)."""
    from netarena_gym.k8s.commands.printers import table
    rows = [[h for h, _ in cols]] if headers else []
    for o in objs:
        row = []
        for _, tpl in cols:
            res = [r for rs in find_results(tpl, o) for r in rs]
            row.append(",".join(go_value(v) for v in res) if res else "<none>")
        rows.append(row)
    return table(rows)
