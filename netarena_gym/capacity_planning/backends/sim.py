"""The capacity-planning backend: the MALT graph in memory, the JSON toolbox over it and the
code sandbox (bubblewrap, see :mod:`netarena_gym.capacity_planning.commands.sandbox`).

It satisfies :class:`netarena_gym.core.protocols.Backend`. An action is one of:

* ``{"code": source}``: the source (already extracted, defining ``process_graph``) runs
  in the sandbox on the scenario's base graph; a result is graded (the episode's verdict);
* a decoded tool call (``{"tool": ..., ...}``, see :mod:`commands.tools`): runs on the
  in-memory graph; ``{"tool": "answer", ...}`` is graded (the verdict).

:meth:`observe` is a one-element vector ``[correct]`` (False until a verdict says
correct). Safety is not a transition of that vector: it is the verdict's list of
constraint violations, which the env reports directly (the graph is only graded once).
There is no real backend: MALT is a data set, not a running system.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Mapping

import numpy as np

from netarena_gym.capacity_planning.commands.sandbox import Limits, Sandbox
from netarena_gym.capacity_planning.commands.tools import ToolBox
from netarena_gym.capacity_planning.generator import from_scenario
from netarena_gym.capacity_planning.grader import Verdict, grade, grade_submission
from netarena_gym.capacity_planning.problems import Query
from netarena_gym.capacity_planning.state import BaseGraph, Graph
from netarena_gym.core.scenario import Scenario
from netarena_gym.shell.parser import ERROR, OK, REFUSED, TIMEOUT, CommandResult

SANDBOX_KIND = {"refused": REFUSED, "timeout": TIMEOUT, "error": ERROR, "memory": ERROR,
                "crash": ERROR}
"""The sandbox's statuses as command kinds (the reward's outcome classes)."""


class MaltSimBackend:
    """The graph, the toolbox and the sandbox of one env (the sandbox starts lazily)."""

    name = "sim"
    capabilities = frozenset({"code", "tools"})

    def __init__(self, limits: Limits | None = None, python_guard: bool = True,
                 unsafe_sandbox: bool = False, cache: int = 8):
        self.limits = limits or Limits()
        self.python_guard = python_guard
        self.unsafe_sandbox = bool(unsafe_sandbox)
        self.sandbox: Sandbox | None = None
        self._graphs: OrderedDict[int, Graph] = OrderedDict()
        self._cache = cache
        self.base: BaseGraph | None = None
        self.query: Query | None = None
        self.graph: Graph | None = None
        self.toolbox: ToolBox | None = None
        self._code_seed = self._submissions = 0
        self.verdict: Verdict | None = None
        self.answered = False
        self.sandbox_seconds = 0.0

    # ------------------------------------------------------------ protocol
    def apply(self, scenario: Scenario, prebuilt: Any = None) -> None:
        """Load the scenario's graph and question; ``prebuilt`` is ``(base, query)`` from
        the generator (otherwise both are rebuilt from the record, answer recomputed)."""
        base, query = prebuilt if prebuilt is not None else from_scenario(scenario)
        self.base, self.query = base, query
        self.graph = self._graph_for(base)
        self.toolbox = ToolBox(self.graph)
        self.verdict = None
        self.answered = False
        self.sandbox_seconds = 0.0
        self._code_seed = scenario.seed or 0
        self._submissions = 0

    def run(self, action: Mapping[str, Any]) -> CommandResult:
        if "code" in action:
            return self._run_code(action["code"])
        res = self.toolbox.run(action)  # the tools read their action, never change it
        if action.get("tool") == "answer" and res.kind == OK:
            self.answered = True
            self.verdict = grade(self.query, self.graph, action.get("answer"))
        return res

    def observe(self) -> np.ndarray:
        return np.array([self.verdict is not None and self.verdict.correct], dtype=bool)

    def reset_to_baseline(self) -> None:
        self._submissions = 0
        if self.graph is not None:
            self.graph.reset()
        self.verdict = None
        self.answered = False

    def close(self) -> None:
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None

    # ------------------------------------------------------------- grading
    def final_verdict(self, code_mode: bool) -> Verdict:
        """The verdict at truncation (no answer): code grades "no change" (upstream's
        Fail), tools grade the graph reached; neither is correct."""
        if code_mode:
            v = grade_submission(self.query, self.base, None, None)
        else:
            v = grade(self.query, self.graph, None)
        v.correct = v.answer_ok = False
        self.verdict = v
        return v

    def _run_code(self, code: str) -> CommandResult:
        if self.sandbox is None:
            self.sandbox = Sandbox(self.limits, self.python_guard, unsafe=self.unsafe_sandbox)
        # compat runs in upstream's namespace (nx, json, copy and G bound), the levels in none
        # the code's ``random`` starts from the episode's seed and the submission's number
        self._submissions += 1
        seed = int(np.random.SeedSequence([self._code_seed, self._submissions])
                   .generate_state(2, np.uint64)[0] >> 1)
        res = self.sandbox.run(self.base, code,
                               "upstream" if self.query.level == "compat" else "default",
                               seed=seed)
        self.sandbox_seconds += res.seconds
        out = f"[{res.status}] {res.message}".rstrip()
        if res.stdout:
            out += f"\nprinted:\n{res.stdout}"
        if not res.ok:
            return CommandResult(out + "\n", 1, SANDBOX_KIND.get(res.status, ERROR))
        if res.declared_type == "error":
            return CommandResult("[error] the code returned type 'error'\n", 1, ERROR)
        self.answered = True
        self.verdict = grade_submission(self.query, self.base, res.data, res.diff,
                                        res.duplicates, graded=res.graded)
        return CommandResult(f"submission of type {res.declared_type!r} received and "
                             "graded\n", 0, OK)

    def _graph_for(self, base: BaseGraph) -> Graph:
        g = self._graphs.get(id(base))
        if g is None or g.base is not base:
            g = self._graphs[id(base)] = Graph(base)
            while len(self._graphs) > self._cache:
                self._graphs.popitem(last=False)
        else:
            self._graphs.move_to_end(id(base))
        g.reset()
        return g
