"""Grading: correctness by canonical comparison, safety relative to the graph before the
change, and upstream's verdicts for ``safe_compat`` (and, at ``level="compat"``, for
correctness).

Levels 1-4 (``grade``):

* the **answer** is compared by kind: numbers after normalisation (``16000000000``,
  ``1.6e10`` and ``"16000000000"`` are equal; ``"16 Gbps"`` is not), names, lists of names as
  multisets, rankings as ordered ``[name, capacity]`` rows where rows of equal capacity may
  come in any order;
* the **graph** is compared as a name-keyed net change: the set of nodes added, removed or
  changed (attributes normalised: integral floats become ints, a string ``type`` becomes a
  one-element list) and the typed directed edges added or removed must equal the expected
  ones exactly. Read-only queries expect no change. This is O(size of the change);
* **safety** is the list of violations (see :mod:`checks`) the change introduces;
* ``safe_compat`` is upstream's checker on the final graph (and False when code did not
  return an updated graph, as upstream).

At ``level="compat"`` correctness is upstream's: the comparator is chosen by the ground
truth's type (text, list as a multiset, graph by isomorphism; see :mod:`compat`).
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from netarena_gym.capacity_planning import grader_compat as compat
from netarena_gym.capacity_planning.grader_checks import assess, describe_violation
from netarena_gym.capacity_planning.kinds import KIND_SET
from netarena_gym.capacity_planning.state import BaseGraph, Diff, Graph
from netarena_gym.capacity_planning.problems import Query


@dataclass
class Verdict:
    correct: bool
    answer_ok: bool
    graph_ok: bool
    violations: list = field(default_factory=list)
    safe_compat: bool = True
    compat_message: str = ""
    seconds: float = 0.0

    @property
    def safe(self) -> bool:
        return not self.violations

    def to_info(self) -> dict:
        """The verdict as ``info["extra"]["verdict"]``: the keys and types of
        :data:`UNGRADED`, deterministic (the grading time is kept out of ``info``)."""
        return {"graded": True, "correct": bool(self.correct), "answer_ok": bool(self.answer_ok),
                "graph_ok": bool(self.graph_ok), "safe": bool(self.safe),
                "violations": [describe_violation(v) for v in self.violations[:20]],
                "n_violations": len(self.violations), "safe_compat": bool(self.safe_compat),
                "compat_message": str(self.compat_message)}


# ``info["extra"]["verdict"]`` before the episode is graded: same keys and types, no answer
UNGRADED = {"graded": False, "correct": False, "answer_ok": False, "graph_ok": False,
            "safe": True, "violations": [], "n_violations": 0, "safe_compat": True,
            "compat_message": ""}


# --------------------------------------------------------------- normalising
def norm(v):
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, float):
        return int(v) if v.is_integer() else v
    if isinstance(v, int):
        return v
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, dict):
        return {str(k): norm(x) for k, x in v.items()}
    return v


def norm_attrs(a: dict) -> dict:
    n = norm(a)
    if isinstance(n.get("type"), str):
        n["type"] = [n["type"]]
    return n


def as_number(v) -> int | float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return None
        return int(v) if v.is_integer() else v
    if isinstance(v, str):
        s = v.strip().replace("_", "")
        try:
            return int(s)
        except ValueError:
            pass
        try:
            return as_number(float(s))
        except ValueError:
            return None
    return None


def as_name(v) -> str | None:
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, (list, tuple)) and len(v) == 2 and v[0] in KIND_SET and isinstance(v[1], str):
        return v[1]
    if isinstance(v, dict) and isinstance(v.get("name"), str):
        return v["name"]
    return None


def _row(r) -> tuple[str | None, Any]:
    if isinstance(r, (list, tuple)) and len(r) == 2:
        return as_name(r[0]), as_number(r[1])
    if isinstance(r, dict):
        cap = next((r[k] for k in ("capacity", "total_capacity", "physical_capacity_bps",
                                   "total", "value") if k in r), None)
        return as_name(r.get("name")), as_number(cap)
    return None, None


def answer_equal(answer_type: str, gt, agent) -> bool:
    """Levels 1-4 answer comparison (see module doc)."""
    if answer_type == "graph":
        return True
    if answer_type == "number":
        return as_number(agent) is not None and as_number(agent) == gt
    if answer_type == "name":
        return as_name(agent) == gt
    if not isinstance(agent, (list, tuple, set, frozenset)):
        return False
    if answer_type == "list":
        names = [as_name(x) for x in agent]
        return None not in names and Counter(names) == Counter(gt)
    if answer_type == "rank":
        rows = [_row(r) for r in agent]
        if len(rows) != len(gt) or any(n is None or c is None for n, c in rows):
            return False
        want = {n: c for n, c in gt}
        if Counter(n for n, _ in rows) != Counter(n for n, _ in gt):
            return False
        if any(want[n] != c for n, c in rows):
            return False
        return [c for _, c in rows] == [c for _, c in gt]  # order, ties in any order
    return False


def diff_equal(base: BaseGraph, expected: Diff, actual: Diff) -> bool:
    """Equal net changes after normalising attributes (changes that normalise to the base
    are no change)."""
    def nodes(d: Diff) -> dict:
        out = {}
        for k, v in d.nodes.items():
            nv = None if v is None else norm_attrs(v)
            b = base.nodes.get(k)
            if nv is not None and b is not None and nv == norm_attrs(b):
                continue
            out[k] = nv
        return out
    return nodes(expected) == nodes(actual) and expected.edges == actual.edges


# ---------------------------------------------------------------------- grade
def grade(query: Query, graph: Graph, answer, *, extra: list | tuple = (),
          duplicates: bool = False, graph_returned: bool = True,
          graded: tuple[Graph, bool] | None = None) -> Verdict:
    """Grade the agent's final state ``graph`` (a view over the query's base graph) and
    ``answer``. ``extra`` holds violations found while applying the agent's graph
    (dangling edges, duplicate nodes); ``duplicates`` says the agent's graph had two nodes
    with one identity. Compat only: ``graded`` is ``(graph, duplicates)`` of a ``graph``
    answer's ``data`` when that is another graph (upstream grades it, and judges safety on
    ``updated_graph``), and a ``graph`` answer without a graph anywhere is not correct."""
    t0 = time.perf_counter()
    diff = graph.net_diff()
    violations, ok_compat, msg = assess(graph, diff, extra)
    if not graph_returned:
        ok_compat, msg = False, "no updated_graph was returned"
    gt = query.ground_truth
    expected = Diff.from_json(gt["graph"])
    if query.level == "compat":
        if query.answer_type == "graph":
            ref = Graph(graph.base)
            ref.apply_diff(expected)
            answer_graph, answer_dups = graded or (graph, duplicates)
            # no updated_graph and no graph in data: upstream parses the missing graph and fails
            graph_ok = ((graph_returned or graded is not None)
                        and compat.graph_equal(ref, answer_graph, answer_dups))
            answer_ok = graph_ok
        else:
            answer_ok = compat.compare(query.answer_type, gt["answer"], answer)
            graph_ok = True  # upstream grades only the data of non-graph answers
    else:
        answer_ok = answer_equal(query.answer_type, gt["answer"], answer)
        graph_ok = not duplicates and diff_equal(graph.base, expected, diff)
    return Verdict(correct=answer_ok and graph_ok, answer_ok=answer_ok, graph_ok=graph_ok,
                   violations=violations, safe_compat=ok_compat, compat_message=msg,
                   seconds=time.perf_counter() - t0)


def grade_submission(query: Query, base: BaseGraph, answer, diff: Diff | None,
                     duplicates: list = (), *, graded: tuple[Diff, list] | None = None
                     ) -> Verdict:
    """Grade a code submission: ``diff`` is its updated graph against the base (None if it
    returned none, which counts as no change). Compat: ``graded`` is ``(diff, duplicates)``
    of a ``graph`` answer's ``data`` when it is another graph (see :func:`grade`)."""
    g = Graph(base)
    extra: list = [("duplicate", k) for k in duplicates]
    if diff is not None:
        extra += g.apply_diff(diff)
    answer_graph = None
    if graded is not None and query.level == "compat":
        ag = Graph(base)
        ag.apply_diff(graded[0])
        answer_graph = (ag, bool(graded[1]))
    return grade(query, g, answer, extra=extra, duplicates=bool(duplicates),
                 graph_returned=diff is not None, graded=answer_graph)
