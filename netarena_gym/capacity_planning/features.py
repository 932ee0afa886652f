"""The array observation of the capacity-planning task's discrete interface.

* ``query``: the question's template and operations (one-hot);
* ``focus``: per focus node slot, its kind, whether it exists, whether the agent has observed
  it (``get_node``/``list_children``), and then its capacity (log scale), child count and
  degree;
* ``candidates``: per answer slot, whether it is filled, its type and magnitude.

Features come only from what the agent observed, never from the ground truth.
"""
from __future__ import annotations

import math

import numpy as np
from gymnasium import spaces

from netarena_gym.capacity_planning.generator import TEMPLATES
from netarena_gym.capacity_planning.kinds import KIND_INDEX, KINDS
from netarena_gym.capacity_planning.state import Graph
from netarena_gym.capacity_planning.state_ops import MUTATIONS, READS

FOCUS = 48
ANSWER_SLOTS = 8
ALL_TEMPLATES = tuple(dict.fromkeys(t for ts in TEMPLATES.values() for t in ts))
OP_NAMES = MUTATIONS + READS
ANSWER_TYPES = ("number", "name", "list", "rank", "graph")
FOCUS_FEATURES = len(KINDS) + 5
CANDIDATE_FEATURES = 2 + len(ANSWER_TYPES)


def spaces_dict() -> dict[str, spaces.Space]:
    return {
        "query": spaces.Box(0.0, 1.0, (len(ALL_TEMPLATES) + len(OP_NAMES),), np.float32),
        "focus": spaces.Box(0.0, 1.0, (FOCUS, FOCUS_FEATURES), np.float32),
        "candidates": spaces.Box(0.0, 1.0, (ANSWER_SLOTS, CANDIDATE_FEATURES), np.float32),
    }


def log_scale(v: float) -> float:
    return min(1.0, math.log10(1.0 + abs(v)) / 13.0)


_NK = len(KINDS)
# the row of a node that does not exist, and of one that exists unobserved, per kind
_ABSENT = {k: tuple(float(j == i) for j in range(FOCUS_FEATURES)) for k, i in KIND_INDEX.items()}
_PRESENT = {k: row[:_NK] + (1.0,) + row[_NK + 1:] for k, row in _ABSENT.items()}
_TEMPLATES = np.array([r for k in KINDS for r in (_ABSENT[k], _PRESENT[k])], np.float32)


def _row(graph: Graph, k, observed) -> tuple:
    """A focus row: node ``k`` as the agent observed it (the row of an observed node the
    episode has not touched is the base's, kept per base graph)."""
    if not graph.has(k):
        return _ABSENT[k[0]]
    if k not in observed:
        return _PRESENT[k[0]]
    pristine = graph.pristine(k)
    if pristine:
        rows = graph.base.facts.get("focus_rows")
        if rows is None:
            rows = graph.base.facts["focus_rows"] = {}
        row = rows.get(k)
        if row is not None:
            return row
    row = _ABSENT[k[0]][:_NK] + (1.0, 1.0, log_scale(graph.capacity(k)),
                                 min(1.0, len(graph.children(k)) / 64),
                                 min(1.0, graph.degree(k) / 64))
    if pristine:
        rows[k] = row
    return row


def candidate_array(candidates: list) -> np.ndarray:
    c = np.zeros((ANSWER_SLOTS, CANDIDATE_FEATURES), np.float32)
    rows = []
    for v in candidates[:ANSWER_SLOTS]:
        if isinstance(v, (int, float)):
            t, mag = "number", log_scale(v)
        elif isinstance(v, str):
            t, mag = ("graph", 0.0) if v == "done" else ("name", 0.0)
        elif v and isinstance(v[0], list):
            t, mag = "rank", min(1.0, len(v) / 64)
        else:
            t, mag = "list", min(1.0, len(v) / 64)
        row = [0.0] * CANDIDATE_FEATURES
        row[0] = 1.0
        row[1 + ANSWER_TYPES.index(t)] = 1.0
        row[-1] = mag
        rows.append(row)
    if rows:
        c[:len(rows)] = rows  # one conversion for the whole array
    return c


def arrays(graph: Graph, focus: list, observed: set, candidates: list,
           query_vec: np.ndarray) -> dict[str, np.ndarray]:
    """The array observation: the question, the focus nodes (what the agent observed of
    them) and the answer candidates, computed from scratch (:class:`FocusArrays` keeps the
    same arrays up to date from the nodes a step changed)."""
    f = np.zeros((FOCUS, FOCUS_FEATURES), np.float32)
    if focus:
        f[:len(focus)] = [_row(graph, k, observed) for k in focus]
    return {"query": query_vec.copy(), "focus": f, "candidates": candidate_array(candidates)}


def focus_start(focus) -> tuple:
    """``(slot of each focus node, focus array)`` where every focus node exists and none is
    observed (read-only: the array is copied by :meth:`FocusArrays.start`)."""
    f = np.zeros((FOCUS, FOCUS_FEATURES), np.float32)
    if focus:
        f[:len(focus)] = _TEMPLATES[[2 * KIND_INDEX[k[0]] + 1 for k in focus]]
    f.flags.writeable = False
    return {k: i for i, k in enumerate(focus)}, f


class FocusArrays:
    """The focus array of one episode, updated row by row: a row depends only on its node's
    existence, attributes, edges and subtree, which a write reports in ``Graph.watch``, and
    on whether the agent observed it (the view passes the nodes a read revealed)."""

    def __init__(self):
        self.focus: np.ndarray = np.zeros((FOCUS, FOCUS_FEATURES), np.float32)
        self.slot: dict = {}
        self.rows: list = []  # the row each focus slot holds (a write is skipped when equal)

    def start(self, graph: Graph, focus: list, observed: set, fresh: tuple | None = None) -> None:
        """The array in full; ``fresh`` is :func:`focus_start` of ``focus`` where every
        focus node exists and none is observed (a new episode)."""
        if fresh is not None:
            self.slot, rows = fresh
            self.focus = rows.copy()
            self.rows = [_PRESENT[k[0]] for k in focus]
            return
        self.slot = {k: i for i, k in enumerate(focus)}
        f = self.focus = np.zeros((FOCUS, FOCUS_FEATURES), np.float32)
        self.rows = [_row(graph, k, observed) for k in focus]
        if focus:
            f[:len(focus)] = self.rows

    def update(self, graph: Graph, keys, observed: set) -> None:
        slot, rows = self.slot, self.rows
        for k in keys:
            i = slot.get(k)
            if i is not None:
                row = _row(graph, k, observed)
                if row != rows[i]:
                    rows[i] = row
                    self.focus[i] = row
