"""The discrete interface: a fixed catalogue of tool actions with a validity mask (the array
observation is built in :mod:`netarena_gym.capacity_planning.features`).

Layout (``SIZE`` = 196 entries, the same for every episode):

* ``FOCUS`` (48) node slots x (get_node, list_children, remove_node): the nodes the question
  names, then their parents and children;
* ``ADD_SLOTS`` (16): the ``add_node`` calls the question asks for (a port, a switch and its
  ports, or for "place" the new port on each candidate switch of the block);
* ``SET_SLOTS`` (4): the ``set_attr`` calls of capacity updates;
* ``ANSWER_SLOTS`` (8): answer candidates (the right one and plausible mistakes: the value
  before the change, off-by-one counts, reversed rankings, other switches), in an order
  drawn per episode.

Every entry renders to the JSON action an LLM would send on the text interface. Features
come from what the agent observed: a focus node's capacity and child count are shown once
a ``get_node`` or ``list_children`` revealed them.
"""
from __future__ import annotations

import functools
import marshal

import numpy as np

from netarena_gym.capacity_planning.features import (ALL_TEMPLATES, ANSWER_SLOTS, FOCUS,
                                                     OP_NAMES, FocusArrays, candidate_array,
                                                     focus_start)
from netarena_gym.core.actions import Catalogue, CatalogueEntry
from netarena_gym.core.seeding import rng_from_seed
from netarena_gym.capacity_planning.commands.tools import decode_action
from netarena_gym.capacity_planning.kinds import CAPACITY, PORT, SWITCH, natural_key
from netarena_gym.capacity_planning.state import BaseGraph, Graph, GraphError
from netarena_gym.capacity_planning.state_ops import READS, child_switches, read
from netarena_gym.capacity_planning.problems import Query, plain_copy

NODE_TOOLS = ("get_node", "list_children", "remove_node")
ADD_SLOTS = 16
SET_SLOTS = 4
SIZE = FOCUS * len(NODE_TOOLS) + ADD_SLOTS + SET_SLOTS + ANSWER_SLOTS
NODE_ENTRY_CACHE = 4096  # entries of nodes a base lacks, kept per view
DECODED_CACHE = 16384  # decoded entry actions kept per view
_ONES = np.ones(FOCUS * len(NODE_TOOLS), np.int8)
FOCUS_CACHE = 4096
ORDER_CACHE = 8192  # answer orders kept (a tuple of at most 8 ints each)
BLOCK_CACHE = 1024
TAIL_CACHE = 2048  # the other entries of a question, kept per base graph  # focus blocks kept per base graph (a few KB each)
# the validity checks of focus slot i's NODE_TOOLS entries: each needs the node
_NODE_CHECKS = tuple(tuple((i * len(NODE_TOOLS) + j, None) for j in range(len(NODE_TOOLS)))
                     for i in range(FOCUS))


def _name(k) -> str:
    return k[1] if isinstance(k, tuple) else str(k)


class DiscreteView:
    def __init__(self):
        self.catalogue = Catalogue(SIZE)
        self.focus: list = []
        self.observed: set = set()
        self.candidates: list = []
        self._query_vec = np.zeros(len(ALL_TEMPLATES) + len(OP_NAMES), np.float32)
        self._node_entries: dict = {}  # node key -> its NODE_TOOLS entries
        self._checks: dict = {}   # node key -> [(entry, None | (added key, its parent))]
        self._checked: list | None = None  # the entries list the checks index
        self._focus = FocusArrays()
        self._candidates = candidate_array([])
        self._graph: Graph | None = None
        self._watch: set | None = None  # the graph's watch set this view installed
        self._pending: set = set()  # nodes observed since the last sync
        self._decoded: dict = {}  # id(entry action) -> (that action, its decoded tool call)

    # ------------------------------------------------------------------ build
    def build(self, graph: Graph, query: Query, order_seed: int) -> None:
        """Fill the catalogue for ``query`` on ``graph``; the answer candidates come in the
        order :func:`answer_order` draws from ``order_seed``."""
        self.catalogue.clear()
        self.observed = set()
        refs = tuple(tuple(op[f]) for op in query.ops for f in ("node", "parent") if f in op)
        focus, blocks, node_checks, fresh = self._focus_block(graph, refs)
        self.focus = list(focus)
        checks = dict(node_checks)
        if blocks:
            self.catalogue.set_block(0, blocks, _ONES[:len(blocks)])
        entries, appends, others, cands, cand_array = self._tail(graph, query, order_seed)
        for i, entry in entries:
            self.catalogue.set(i, entry)
        for k, item in appends:
            checks[k] = checks.get(k, ()) + (item,)
        self.candidates = list(cands)
        self._candidates = cand_array
        self._query_vec[:] = _query_vec(query.template, tuple(op["op"] for op in query.ops))
        self._checks, self._checked = checks, self.catalogue.entries
        # the focus nodes exist (their entries were set valid): only the other entries'
        # nodes are checked
        self._start(graph, others, fresh)

    def _tail(self, graph: Graph, query: Query, order_seed: int) -> tuple:
        """The entries after the focus block: ``((index, entry), ...)``, the validity
        checks they add (``(node, (index, None | (added key, its parent))), ...``, in
        order), their nodes, the answer candidates and their array (read-only). A function
        of the base graph, the query and ``order_seed`` on a graph without changes (as
        after a reset), kept per base graph then."""
        key = None
        if not graph.changed:
            try:
                key = marshal.dumps((query.template, query.answer_type, query.text, query.ops,
                                     query.ground_truth.get("answer"), order_seed))
            except ValueError:  # not plain data: made afresh
                key = None
        cache = graph.base.facts.setdefault("catalogue_tail", {})
        hit = cache.get(key) if key is not None else None
        if hit is not None:
            return hit
        entries: list = []
        appends: list = []
        others: set = set()  # the nodes of the entries that are not a focus node's
        base = FOCUS * len(NODE_TOOLS)
        for i, act in enumerate(_additions(graph, query)[:ADD_SLOTS]):
            entries.append((base + i, CatalogueEntry(f"add {act['kind']} {act['name']}", act, "add")))
            k, p = (act["kind"], act["name"]), (act["parent_kind"], act["parent"])
            appends += ((k, (base + i, (k, p))), (p, (base + i, (k, p))))
            others.update((k, p))
        base += ADD_SLOTS
        sets = [op for op in query.ops if op["op"] == "update"][:SET_SLOTS]
        for i, op in enumerate(sets):
            act = {"tool": "set_attr", "node": op["node"][1], "kind": PORT, "key": CAPACITY,
                   "value": op["capacity"]}
            entries.append((base + i, CatalogueEntry(f"set {op['node'][1]} capacity", act, "set")))
            k = (PORT, act["node"])
            appends.append((k, (base + i, None)))
            others.add(k)
        base += SET_SLOTS
        cands = _candidates(graph.base, query)
        cands = tuple(cands[i] for i in answer_order(order_seed, len(cands)))[:ANSWER_SLOTS]
        for i, value in enumerate(cands):
            entries.append((base + i, CatalogueEntry("answer " + repr_head(value, 73),
                                                     {"tool": "answer", "answer": value},
                                                     "answer")))
        cand_array = candidate_array(list(cands))
        cand_array.flags.writeable = False
        tail = (tuple(entries), tuple(appends), frozenset(others), cands, cand_array)
        if key is not None:
            if len(cache) >= TAIL_CACHE:
                cache.clear()
            cache[key] = tail
        return tail

    def _focus_block(self, graph: Graph, refs: tuple) -> tuple:
        """``(focus nodes, their entries, their checks, (slot of each, focus array))`` of
        a question naming ``refs``, on a graph where the focus nodes exist and nothing is
        observed: a function of the base graph and ``refs``, kept per base graph while the
        graph is unchanged (as after a reset)."""
        facts = graph.base.facts
        if graph.changed:
            cache, entries = {}, self._node_entries
        else:  # the focus nodes are the base's: their entries are kept with it
            cache = facts.setdefault("catalogue_block", {})
            entries = facts.setdefault("node_entries", {})
        fb = cache.get(refs)
        if fb is not None:
            return fb
        focus = _focus(graph, refs)
        blocks: list = []
        checks: dict = {}
        for i, k in enumerate(focus):
            block = entries.get(k)
            if block is None:  # entries are immutable: kept per node across episodes
                if entries is self._node_entries and len(entries) >= NODE_ENTRY_CACHE:
                    entries.clear()
                block = entries[k] = tuple(CatalogueEntry(
                    f"{tool} {k[0]} {k[1]}", {"tool": tool, "node": k[1], "kind": k[0]}, tool)
                    for tool in NODE_TOOLS)
            blocks.extend(block)
            checks[k] = _NODE_CHECKS[i]
        if len(cache) >= BLOCK_CACHE:
            cache.clear()
        fb = cache[refs] = (focus, tuple(blocks), checks, focus_start(focus))
        return fb

    def _index(self) -> None:
        """Index the entries by the nodes their validity depends on (``build`` does it as
        it fills the catalogue; this is for a catalogue changed since)."""
        cat = self.catalogue
        self._checked = cat.entries
        checks: dict = {}
        for i, e in enumerate(cat.entries):
            if e is None:
                continue
            a = e.action
            if a["tool"] in NODE_TOOLS or a["tool"] == "set_attr":
                checks.setdefault((a["kind"], a["node"]), []).append((i, None))
            elif a["tool"] == "add_node":
                k, p = (a["kind"], a["name"]), (a["parent_kind"], a["parent"])
                checks.setdefault(k, []).append((i, (k, p)))
                checks.setdefault(p, []).append((i, (k, p)))
            else:
                cat.mask[i] = 1
        self._checks = checks

    def _start(self, graph: Graph, keys=None, fresh=None) -> None:
        """Compute the mask (of the entries on ``keys``, by default all) and the focus
        array in full (``fresh``: as :func:`focus_start` gives it, for focus nodes that
        exist, none observed), and watch the graph's writes from here on."""
        if self._checked is not self.catalogue.entries:
            self._index()
            keys = None
        self._graph = graph
        self._update_mask(graph, self._checks if keys is None else keys)
        self._focus.start(graph, self.focus, self.observed, fresh)
        self._pending = set()
        self._watch = graph.watch = set()

    def _update_mask(self, graph: Graph, keys) -> None:
        """An entry on a node needs the node, an ``add_node`` a missing node under an
        existing parent."""
        has, checks = graph.has, self._checks
        idx, val = [], []
        for key in keys:
            for i, add in checks.get(key, ()):
                idx.append(i)
                val.append(has(key) if add is None else not has(add[0]) and has(add[1]))
        if len(idx) > 16:  # one assignment (the whole catalogue at the start of an episode)
            self.catalogue.mask[idx] = val
        else:
            mask = self.catalogue.mask
            for i, v in zip(idx, val):
                mask[i] = 1 if v else 0

    def _sync(self, graph: Graph) -> None:
        """Bring the mask and the focus array up to date with the nodes changed or observed
        since the last call (in full when the graph or the catalogue was replaced or the
        graph was reset)."""
        if (graph is not self._graph or graph.watch is not self._watch
                or self._checked is not self.catalogue.entries):
            self._start(graph)
            return
        changed = self._watch
        if changed:
            self._update_mask(graph, changed)
        if self._pending:
            changed = changed | self._pending
            self._pending.clear()
        if changed:
            self._focus.update(graph, changed, self.observed)
            self._watch.clear()

    def refresh(self, graph: Graph) -> None:
        """Bring the mask up to date after a step."""
        self._sync(graph)

    def saw(self, action: dict | None, graph: Graph) -> None:
        """Record what a read revealed (a node observed before needs no new row: a row
        changes with its node, which the graph's watch reports, or when first observed)."""
        if not action:
            return
        tool = action.get("tool")
        if tool != "get_node" and tool != "list_children":
            return
        k = (action.get("kind"), action.get("node"))
        if not graph.has(k):
            return
        observed, pending = self.observed, self._pending
        if k not in observed:
            observed.add(k)
            pending.add(k)
        if tool == "list_children":
            kids = graph.children(k)
            if kids:
                new = kids.keys() - observed
                if new:
                    observed |= new
                    pending |= new

    def decode(self, index: int) -> dict:
        """The tool call of a catalogue entry (``decode_action`` of what it renders to,
        kept per entry: entries are immutable); raises ``ActionError`` when masked."""
        act = self.catalogue.render(index)
        hit = self._decoded.get(id(act))
        if hit is None or hit[0] is not act:
            if len(self._decoded) >= DECODED_CACHE:
                self._decoded.clear()
            hit = self._decoded[id(act)] = (act, decode_action(act))
        return dict(hit[1])

    # --------------------------------------------------------------- arrays
    def arrays(self, graph: Graph) -> dict[str, np.ndarray]:
        self._sync(graph)
        return {"query": self._query_vec.copy(), "focus": self._focus.focus.copy(),
                "candidates": self._candidates.copy()}


def repr_head(value, n: int) -> str:
    """``repr(value)[:n]``, without the whole repr of a long list (an answer label shows
    the first characters of a ranking of up to 64 rows)."""
    if type(value) is not list or len(value) <= 8:  # short: the whole repr is cheaper
        return repr(value)[:n]
    parts, size = ["["], 1
    for i, x in enumerate(value):
        if i:
            parts.append(", ")
            size += 2
        r = repr_head(x, n - size) if size < n else ""
        parts.append(r)
        size += len(r)
        if size >= n:
            return "".join(parts)[:n]
    parts.append("]")
    return "".join(parts)[:n]


@functools.lru_cache(maxsize=ORDER_CACHE)
def answer_order(seed: int, n: int) -> tuple[int, ...]:
    """The order of ``n`` answer candidates: ``rng_from_seed(seed).permutation(n)``, kept
    per (seed, n) (building the generator costs more than the rest of a reset's catalogue)."""
    return tuple(int(i) for i in rng_from_seed(seed).permutation(n))


@functools.lru_cache(maxsize=1024)
def _query_vec(template: str, ops: tuple) -> np.ndarray:
    """The question's template (one-hot) and operations (a third per occurrence, at most
    one), read-only: a function of few values, computed once each."""
    q = np.zeros(len(ALL_TEMPLATES) + len(OP_NAMES), np.float32)
    if template in ALL_TEMPLATES:
        q[ALL_TEMPLATES.index(template)] = 1
    for op in ops:
        if op in OP_NAMES:
            q[len(ALL_TEMPLATES) + OP_NAMES.index(op)] += 1 / 3
    np.clip(q, 0, 1, out=q)
    q.flags.writeable = False
    return q


def _focus(graph: Graph, refs: tuple) -> tuple:
    """The focus nodes: the nodes the question names, their parents, then their children
    in natural order."""
    out: dict = {}

    def push(k):
        if len(out) < FOCUS and k not in out and graph.has(k):
            out[k] = None
    for r in refs:
        push(r)
    for r in refs:
        for p in graph.parents(r) if graph.has(r) else ():
            push(p)
    for r in refs:
        kids = graph.children(r) if graph.has(r) else {}
        for c in sorted(kids, key=lambda c: natural_key(_name(c))):
            push(c)
    return tuple(out)


def _additions(graph: Graph, query: Query) -> list[dict]:
    out = []
    for op in query.ops:
        if op["op"] == "add" and op["kind"] == PORT:
            out.append({"tool": "add_node", "name": op["name"], "kind": PORT,
                        "parent": op["parent"][1], "parent_kind": op["parent"][0],
                        "attrs": {CAPACITY: op["capacity"]}})
        elif op["op"] == "add":
            out.append({"tool": "add_node", "name": op["name"], "kind": SWITCH,
                        "parent": op["parent"][1], "parent_kind": op["parent"][0],
                        "attrs": {"switch_loc": {"stage": op["stage"]}}})
            for i in range(1, op["ports"] + 1):
                out.append({"tool": "add_node", "name": f"{op['name']}.p{i}", "kind": PORT,
                            "parent": op["name"], "parent_kind": SWITCH,
                            "attrs": {CAPACITY: op["capacity"]}})
        elif op["op"] == "place":
            block = tuple(op["parent"])
            for sw in child_switches(graph, block):
                out.append({"tool": "add_node", "name": f"{sw[1]}.p{op['index']}", "kind": PORT,
                            "parent": sw[1], "parent_kind": SWITCH,
                            "attrs": {CAPACITY: op["capacity"]}})
    return out


def _read_base(base: BaseGraph, op: dict):
    """``read`` of the base graph (None when the node is one the query adds), kept per base
    graph and operation; a copy, as a fresh read would be."""
    cache = base.facts.setdefault("catalogue_reads", {})
    key = repr(op)
    if key not in cache:
        if len(cache) >= FOCUS_CACHE:
            cache.clear()
        try:
            cache[key] = read(Graph(base), op)
        except GraphError:
            cache[key] = None
    return plain_copy(cache[key])


def _candidates(base: BaseGraph, query: Query) -> list:
    """The right answer and plausible wrong ones (distinct, JSON values)."""
    gt = query.ground_truth.get("answer")
    t = query.answer_type
    if t == "graph":
        return ["done"]
    out = [gt]
    last = query.ops[-1]
    before = None
    if last["op"] in READS:
        before = _read_base(base, last)  # the answer on the unchanged graph
    if t == "number":
        out += [before, gt + 1, gt - 1, gt * 2, gt // 2, 0]
    elif t == "name":
        g = Graph(base)
        ref = tuple(last.get("parent") or last.get("node"))
        if g.has(ref):
            out += [s[1] for s in child_switches(g, ref)]
    elif t == "list":
        out += [before, gt[:-1], sorted(gt, key=natural_key, reverse=True)[:-1] + ["none"], []]
    elif t == "rank":
        out += [before, list(reversed(gt)), sorted(gt, key=lambda r: natural_key(r[0])),
                [[n, c // 2] for n, c in gt]]
    seen, uniq = set(), []
    for v in out:
        key = repr(v)
        if v is not None and key not in seen:
            seen.add(key)
            uniq.append(v)
    return uniq[:ANSWER_SLOTS]


__all__ = ["DiscreteView", "SIZE"]
