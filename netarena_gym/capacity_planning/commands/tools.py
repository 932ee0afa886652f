"""Atomic graph operations for the multi-step interfaces (``interface="text"`` and
``"discrete"``).

An action is a JSON object (or dict) with a ``tool`` and its arguments:

* ``{"tool": "get_node", "node": N[, "kind": K]}``: attributes, total capacity, parents
  (with their degree), counts of children and of everything below;
* ``{"tool": "list_children", "node": N[, "kind": K]}``: one line per out-edge (RK_CONTAINS
  and RK_CONTROLS) with the child's kind, name, total capacity, number of children,
  degree and attributes;
* ``{"tool": "add_node", "name": N, "kind": K, "parent": P[, "parent_kind": PK][, "attrs": {...}]}``:
  a new node (``name`` and list ``type`` are set from ``name``/``kind``) and an RK_CONTAINS
  edge from the parent;
* ``{"tool": "remove_node", "node": N[, "kind": K]}``: the node and its edges, nothing else;
* ``{"tool": "set_attr", "node": N[, "kind": K], "key": A, "value": V}``;
* ``{"tool": "answer", "answer": V}``: the final answer (ends the episode; for questions
  that return the updated graph any value will do).

``kind`` is needed only when a name is shared (a switch, its chassis and its control point
have the same name). The tools apply what they are asked: validity of the resulting graph
is what safety grades.

A read's text is made only when someone reads it (the text interface's observation,
``render()``, a history; the discrete interface's agent sees arrays, never the text), see
:class:`ToolResult`: a read of nodes the episode has not touched (``Graph.pristine``) is a
function of the base graph alone (its text is kept per base graph); any other is made on
the episode's graph before that graph next changes (``Graph.before_write``), if its result
is still held by then.
"""
from __future__ import annotations

import json
import math
import weakref
from typing import Any

from netarena_gym.core.actions import ActionError, parse_json_action
from netarena_gym.shell.parser import ERROR, INVALID, OK, CommandResult
from netarena_gym.capacity_planning.kinds import CONTAINS, KIND_SET, KINDS, natural_key
from netarena_gym.capacity_planning.state import Graph, GraphError

TOOLS = ("get_node", "list_children", "add_node", "remove_node", "set_attr", "answer")
WRITES = ("add_node", "remove_node", "set_attr")  # the tools that may change the graph
OPTIONAL = ("node", "kind", "name", "parent", "parent_kind", "attrs", "key", "value", "answer")
IDENTITY_ATTRS = ("name", "type")
MAX_JSON = 600
TEXT_CACHE = 8192  # read texts kept per base graph

HELP = """Tools (one JSON object per step):
  {"tool": "get_node", "node": NAME, "kind": KIND?}
  {"tool": "list_children", "node": NAME, "kind": KIND?}
  {"tool": "add_node", "name": NAME, "kind": KIND, "parent": NAME, "parent_kind": KIND?, "attrs": {...}?}
  {"tool": "remove_node", "node": NAME, "kind": KIND?}
  {"tool": "set_attr", "node": NAME, "kind": KIND?, "key": ATTRIBUTE, "value": VALUE}
  {"tool": "answer", "answer": VALUE}   (ends the episode)
"kind" is an EK_* kind, needed when a name is shared (a switch, its chassis and its control
point share a name). remove_node removes exactly one node and its edges."""


def _dump(v) -> str:
    s = json.dumps(v, sort_keys=True, default=repr)
    return s if len(s) <= MAX_JSON else s[:MAX_JSON] + "..."


def decode_action(action: Any) -> dict:
    a = parse_json_action(action, ("tool",), optional=OPTIONAL)
    tool = a["tool"]
    if tool not in TOOLS:
        raise ActionError(f"unknown tool {tool!r}; tools: {', '.join(TOOLS)}")
    need = {"get_node": ("node",), "list_children": ("node",), "remove_node": ("node",),
            "add_node": ("name", "kind", "parent"), "set_attr": ("node", "key"),
            "answer": ()}[tool]
    for k in need:
        if not isinstance(a.get(k), str) or not a[k].strip():
            raise ActionError(f'{tool} needs a non-empty string "{k}"')
        a[k] = a[k].strip()
    for k in ("kind", "parent_kind"):
        if k in a and a[k] is not None and (not isinstance(a[k], str) or a[k] not in KIND_SET):
            raise ActionError(f'"{k}" must be one of {", ".join(KINDS)}')
    if tool == "answer" and "answer" not in a:
        raise ActionError('answer needs an "answer" value')
    if tool == "set_attr" and "value" not in a:
        raise ActionError('set_attr needs a "value"')
    if tool == "add_node" and a.get("attrs") is not None and not isinstance(a["attrs"], dict):
        raise ActionError('"attrs" must be a JSON object')
    for k in ("value", "attrs"):
        if k in a and not all_finite(a[k]):  # MALT's attributes are int64 and strings
            raise ActionError(f'"{k}" holds a number that is not finite (Infinity, NaN, '
                              '1e999); attributes take finite numbers')
    return a


def all_finite(v) -> bool:
    """No float in ``v`` (at any depth of lists and objects) is infinite or NaN."""
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, float):
            if not math.isfinite(x):
                return False
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
    return True


class ToolResult(CommandResult):
    """A tool's result whose ``output`` is made when first read, by ``make()``."""
    __slots__ = ("_make", "_text", "__weakref__")

    def __init__(self, make, status: int = 0, kind: str = OK):
        self._make, self._text = make, None
        self.status, self.kind = status, kind

    @property
    def output(self) -> str:
        if self._make is not None:
            self._text, self._make = self._make(), None
        return self._text

    @output.setter
    def output(self, text: str) -> None:
        self._text, self._make = text, None


class ToolBox:
    """Runs tool actions on a :class:`Graph` (the episode's copy-on-write state).

    ``lazy``: a read of untouched nodes returns its text unmade (see :class:`ToolResult`)."""

    def __init__(self, graph: Graph, lazy: bool = True):
        self.graph = graph
        self.lazy = lazy
        self._live = False  # the last read's text is to be made on the live graph
        self._pending: list = []  # weak references to such results not read yet

    def resolve(self, name: str, kind: str | None):
        if kind and self.graph.base.scheme == "kind_name" and self.graph.has((kind, name)):
            # nodes are stored under the (kind, name) their attributes imply: the only match
            return (kind, name)
        keys = self.graph.lookup(name)
        if kind:
            keys = [k for k in keys if self.graph.kind(k) == kind]
        if not keys:
            what = f"{kind} named {name!r}" if kind else f"node named {name!r}"
            raise GraphError(f"no {what}")
        if len(keys) > 1:
            kinds = ", ".join(sorted(self.graph.kind(k) or "?" for k in keys))
            raise GraphError(f"{name!r} is ambiguous ({kinds}); add \"kind\"")
        return keys[0]

    def run(self, a: dict) -> CommandResult:
        try:
            out = getattr(self, "_" + a["tool"])(a)
        except GraphError as e:
            return CommandResult(f"error: {e}\n", 1, ERROR)
        except ActionError as e:
            return CommandResult(f"netarena: invalid action: {e}\n", 2, INVALID)
        if type(out) is not str:
            res = ToolResult(out)
            if self._live:  # its text must be made before the graph changes
                self._live = False
                self._hold(res)
            return res
        return CommandResult(out, 0, OK)

    def _hold(self, res: ToolResult) -> None:
        pending = self._pending
        if len(pending) >= 64:  # many reads and no change: forget the results dropped
            pending[:] = [r for r in pending if r() is not None]
        pending.append(weakref.ref(res))
        g = self.graph
        hook = g.before_write
        if hook is None:
            g.before_write = self._settle
        elif hook != self._settle:  # another reader waits too
            g.before_write = lambda: (hook(), self._settle())

    def _settle(self) -> None:
        """Make the texts of the results still held that read the graph as it is now
        (the graph calls this before it changes)."""
        pending, self._pending = self._pending, []
        for ref in pending:
            res = ref()
            if res is not None:
                res.output  # noqa: B018 (made now, kept by the result)

    # ------------------------------------------------------------- reads
    # A read of nodes the episode has not touched (Graph.pristine) reads the base: its text
    # is kept per base graph and shared by every episode on it, and made on the base (by a
    # toolbox over an untouched view) when first read.
    def _cached(self, key: tuple, make, *nodes, lazy: bool = False):
        """The text ``make()`` gives, or (``lazy``) a function that makes it: on the base
        (untouched nodes, not kept yet) or on the live graph (see ``run``)."""
        g = self.graph
        if not g.untouched and not all(map(g.pristine, nodes)):
            if lazy:
                self._live = True
                return make
            return make()
        base = g.base
        texts = base.facts.get("tool_text")
        if texts is None:
            texts = base.facts["tool_text"] = {}
        s = texts.get(key)
        if s is None:
            if lazy:
                return lambda: _base_text(base, key)
            s = _keep(texts, key, make())
        return s

    def _line(self, rel: str, k) -> str:
        return self._cached(("line", rel, k), lambda: self._make_line(rel, k), k)

    def _make_line(self, rel: str, k) -> str:
        g = self.graph
        a = g.attrs(k)
        extra = {x: v for x, v in a.items() if x not in IDENTITY_ATTRS}
        return (f"  {rel} {g.kind(k)} {a.get('name')} total_capacity_bps={g.capacity(k)} "
                f"children={len(g.children(k))} degree={g.degree(k)} attrs={_dump(extra)}")

    def _get_node(self, a: dict) -> str:
        k = self.resolve(a["node"], a.get("kind"))
        # the text shows k and the degree of its parents
        return self._cached(("get_node", k), lambda: self._make_get_node(k), k,
                            *self.graph.parents(k), lazy=self.lazy)

    def _make_get_node(self, k) -> str:
        g = self.graph
        counts = g.sub(k).counts(g.attrs)
        kids: dict[str, int] = {}
        for c in g.children(k):
            kids[g.kind(c) or "?"] = kids.get(g.kind(c) or "?", 0) + 1
        lines = [f"node {g.kind(k)} {g.attrs(k).get('name')}",
                 f"attributes: {_dump(g.attrs(k))}",
                 f"total_capacity_bps: {g.capacity(k)}",
                 f"parents ({len(g.parents(k))}):"]
        for p, t in sorted(g.parents(k).items(), key=lambda x: (x[1], str(x[0]))):
            lines.append(f"  {t} {g.kind(p)} {g.attrs(p).get('name')} degree={g.degree(p)}")
        lines.append(f"children ({len(g.children(k))}): "
                     + ", ".join(f"{n} {kind}" for kind, n in sorted(kids.items())))
        lines.append("descendants: " + ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())))
        return "\n".join(lines) + "\n"

    def _list_children(self, a: dict) -> str:
        k = self.resolve(a["node"], a.get("kind"))
        # the text shows k's children as they are (a child's line, its own subtree and edges)
        return self._cached(("list_children", k), lambda: self._make_list_children(k), k,
                            *self.graph.children(k), lazy=self.lazy)

    def _make_list_children(self, k) -> str:
        g = self.graph
        kids = sorted(g.children(k).items(),
                      key=lambda x: (x[1] != CONTAINS, natural_key(str(g.attrs(x[0]).get("name")))))
        lines = [f"children of {g.kind(k)} {g.attrs(k).get('name')} ({len(kids)}):"]
        lines += [self._line(t, c) for c, t in kids]
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------ writes
    def _add_node(self, a: dict) -> str:
        g = self.graph
        kind, name = a["kind"], a["name"]
        parent = self.resolve(a["parent"], a.get("parent_kind"))
        attrs = dict(a.get("attrs") or {})
        bad = [x for x in attrs if x in IDENTITY_ATTRS or not isinstance(x, str)]
        if bad:
            raise ActionError(f"attrs may not set {bad}: name and type come from \"name\" and \"kind\"")
        key = (kind, name)
        if g.has(key):
            raise GraphError(f"{kind} {name!r} already exists")
        g.add_node(key, {"name": name, "type": [kind], **attrs})
        g.add_edge(parent, key, CONTAINS)
        return f"added {kind} {name} under {g.kind(parent)} {g.attrs(parent).get('name')}\n"

    def _remove_node(self, a: dict) -> str:
        g = self.graph
        k = self.resolve(a["node"], a.get("kind"))
        kind, n = g.kind(k), g.degree(k)
        g.remove_node(k)
        return f"removed {kind} {a['node']} and its {n} edges\n"

    def _set_attr(self, a: dict) -> str:
        if a["key"] in IDENTITY_ATTRS:
            raise ActionError(f"{a['key']!r} cannot be changed (it identifies the node)")
        g = self.graph
        k = self.resolve(a["node"], a.get("kind"))
        g.set_attr(k, a["key"], a["value"])
        return f"set {a['key']} of {g.kind(k)} {a['node']} to {_dump(a['value'])}\n"

    def _answer(self, a: dict) -> str:
        return f"answer submitted: {_dump(a['answer'])}\n"


def _keep(texts: dict, key: tuple, s: str) -> str:
    if len(texts) >= TEXT_CACHE:  # bounded: a few MB per base graph at most
        texts.clear()
    texts[key] = s
    return s


def _base_text(base, key: tuple) -> str:
    """The text of a read kept as ``key`` (``("get_node", k)``, ``("list_children", k)``)
    made on the base graph, and kept."""
    texts = base.facts.setdefault("tool_text", {})
    s = texts.get(key)
    if s is None:
        box = ToolBox(Graph(base), lazy=False)
        s = box._make_get_node(key[1]) if key[0] == "get_node" else box._make_list_children(key[1])
        s = _keep(texts, key, s)
    return s
