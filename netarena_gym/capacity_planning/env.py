"""``NetArena-CapacityPlanning-v0``: answer capacity-planning questions on MALT topologies.

Interfaces (``interface=``):

* ``"code"`` (default, upstream's): the observation is the instructions and the question;
  the action is Python source defining ``process_graph(graph)`` (a string, optionally inside
  a fenced block among prose, or ``{"code": ...}``). It runs in the sandbox (see
  :mod:`sandbox`); a result is graded and ends the episode, an error is reported in the
  next observation and costs a penalty (``max_steps`` attempts, 3 by default, 1 at compat).
  What the code finds bound: at levels 1-4 nothing but the sandbox's restricted builtins
  (it imports what it needs from the allow-list, e.g. ``import networkx as nx``); at
  ``level="compat"`` upstream NetArena's namespace, ``nx``, ``json``, ``copy`` and ``G`` (a
  copy of the base graph), and the submission is extracted as upstream does (a ``def``
  named like ``*process_graph*`` is renamed, the code runs from it to the next triple
  backtick, lines starting with ``import`` are dropped; upstream's ``solid_step_*``
  helpers are not bound). Tracebacks show the agent's own lines only, never a path;
* ``"text"``: a multi-step episode of JSON tool calls (see :mod:`tools`) ending with
  ``{"tool": "answer", ...}``;
* ``"discrete"``: the same tools as a fixed catalogue with a mask (see :mod:`catalogue`).

Levels 1-4 and ``"compat"`` are described in :mod:`generator` (compat is code-only, like
upstream). ``reset(seed=s)`` always gives the same episode; ``info["scenario"]`` is a
replayable record (the ground truth is left out of it and recomputed on replay).

The env is a :class:`~netarena_gym.core.env.NetArenaEnv`; the graph, the toolbox and the
sandbox live in :class:`~netarena_gym.capacity_planning.backends.sim.MaltSimBackend`.
"""
from __future__ import annotations

import json
import zlib
from typing import Any

import numpy as np
from gymnasium import spaces

from netarena_gym.capacity_planning import prompts
from netarena_gym.capacity_planning.backends.sim import MaltSimBackend
from netarena_gym.capacity_planning.catalogue import DiscreteView
from netarena_gym.capacity_planning.features import spaces_dict
from netarena_gym.capacity_planning.commands.sandbox import (MAX_CODE_CHARS, Limits, extract_code,
                                                            upstream_source)
from netarena_gym.capacity_planning.commands.tools import WRITES, decode_action
from netarena_gym.capacity_planning.config import CapacityPlanningConfig
from netarena_gym.capacity_planning.expert import CapacityPlanningExpert
from netarena_gym.capacity_planning.grader import UNGRADED
from netarena_gym.capacity_planning.generator import (LEVELS, TASK, QueryGenerator,
                                                      to_scenario, topology_pool)
from netarena_gym.capacity_planning.metrics import MaltMetrics
from netarena_gym.capacity_planning.state import base_graph
from netarena_gym.core.actions import ActionError, Catalogue
from netarena_gym.core.env import NetArenaEnv, decode_index, sanitize
from netarena_gym.core.reward import RewardConfig
from netarena_gym.core.scenario import Scenario
from netarena_gym.core.seeding import draw_seed, rng_from_seed
from netarena_gym.errors import InvalidConfig
from netarena_gym.shell.parser import CommandResult

INTERFACES = ("code", "text", "discrete")
DEFAULT_MAX_STEPS = {"code": {1: 3, 2: 3, 3: 3, 4: 3, "compat": 1},
                     "tools": {1: 40, 2: 60, 3: 60, 4: 100}}
TOOL_ACTION_CHARS = 2048


class CapacityPlanningEnv(NetArenaEnv):
    """Answer capacity-planning questions on Google MALT topologies.

    ## Description

    A scenario is a MALT topology and a question about it (levels 1-4, and "compat" as in
    upstream NetArena): list, count, rank, add or remove entities, and check capacity.
    Some questions change the graph; the grader checks the answer and the graph's
    constraints (the violations are the task's safety).

    ## Action Space

    ``interface="code"`` (default): ``Text(MAX_CODE_CHARS)``, Python source defining
    ``process_graph(graph)``, run in the sandbox: levels 1-4 bind no names (import from the
    allow-list), compat binds upstream's ``nx``, ``json``, ``copy`` and ``G`` and drops
    ``import`` lines as upstream does. ``interface="text"``: ``Text(2048)``, a
    JSON tool call ending with ``{"tool": "answer", ...}``. ``interface="discrete"``:
    ``Discrete(n)``, the same tools as a catalogue with a mask.

    ## Observation Space

    Code and text: ``Text(32768)``, the instructions, the question, the last action's
    output and the attempts or steps left. Discrete: a ``Dict`` of arrays
    (:mod:`netarena_gym.capacity_planning.catalogue`) plus ``action_mask``.

    ## Rewards

    The sum of the components in ``info["reward_components"]`` (weights from
    :class:`~netarena_gym.core.reward.RewardConfig`, defaults): ``success`` +1.0 on the step
    that solves, ``safety`` -1.0 when the graded change breaks any constraint (there are no
    pairs to take a fraction of), ``step`` -0.01 every
    step, ``invalid`` -0.05, ``refused`` -0.2, ``timeout`` -0.05 (these three exclude each
    other), ``failed`` 0.0 and the optional ``progress`` shaping (0.0). ``env.reward_range``
    is a step's range, ``(-1.21, 0.99)`` with the defaults; zeros are never ``-0.0``.
    ``reward={"normalize_safety": False}`` charges ``safety`` per violation instead
    (the first release's unbounded penalty); verdicts do not depend on the reward.

    ## Starting State

    ``reset(seed=s)`` draws a topology and a question; ``options={"scenario":
    info["scenario"]}`` replays one (the answer is not in the record and is recomputed),
    ``options={"template": ...}`` picks a question template.

    ## Episode End

    Terminated when a submission is graded (code) or the ``answer`` tool is called
    (text/discrete); truncated after ``max_steps`` (code: 3 attempts, compat 1; tools:
    40-100 steps by level), graded without an answer. A step after the end, or before
    ``reset``, raises ``ResetNeeded``.

    ## Arguments

    Keyword-only, the shared ones in this order (see :class:`~netarena_gym.core.config.EnvConfig`):
    ``level``, ``interface``, ``backend``, ``max_steps``, ``reward`` (a ``RewardConfig`` or a
    dict of weights), ``observability`` ("partial"|"full"), ``history`` (previous steps
    shown in the text observation), ``render_mode`` ("ansi"), ``command_timeout`` (seconds
    per tool run), ``step_timeout`` (wall-clock budget of one step; accepted for the shared shape; code runs under the sandbox's own wall-clock limit (``limits``));
    then the task's own: ``topologies``, ``templates``, ``limits``, ``python_guard``,
    ``unsafe_sandbox`` (default False: code runs under bubblewrap, and code mode refuses to
    start where bubblewrap is missing; True runs it without OS isolation, for trusted code
    only — see SECURITY.md). Unknown keys given to ``from_config`` raise
    ``InvalidConfig`` with the valid ones. ``info`` follows :mod:`netarena_gym.core.info`:
    the ``info`` argument (after ``step_timeout``), ``"full"`` (default) or ``"lean"``, says
    whether steps inside an episode carry every key or only ``LEAN_KEYS`` (for vector envs).

    ## Version History

    * v0: the shared info schema (task facts under ``info["extra"]``), keyword-only
      arguments, ``ResetNeeded`` after the end.
    * v0 (issue 14): the ``info`` argument, ``"lean"`` for vector envs.
    """
    config_class = CapacityPlanningConfig
    reset_options = frozenset({"scenario", "template"})
    task = TASK
    levels = LEVELS
    interfaces = INTERFACES
    max_obs_chars = 32768
    max_output_chars = 16000

    def __init__(self, *, level: int | str = 1, interface: str = "code", backend: str = "sim",
                 max_steps: int | None = None, reward: RewardConfig | dict | None = None,
                 observability: str = "partial", history: int = 0,
                 render_mode: str | None = None, command_timeout: float = 10.0,
                 step_timeout: float | None = None, info: str = "full",
                 topologies: int | list | None = None,
                 templates: tuple[str, ...] | None = None,
                 limits: Limits | dict | None = None, python_guard: bool = True,
                 unsafe_sandbox: bool = False):
        self.config = CapacityPlanningConfig(**{k: v for k, v in locals().items()
                                                if k in CapacityPlanningConfig.field_names()})
        if observability != "partial":
            raise InvalidConfig("the capacity-planning task has observability 'partial' only, "
                                f"got {observability!r}")
        if level == "compat" and interface != "code":
            raise InvalidConfig("level 'compat' reproduces upstream, which is code-only: "
                                "use interface='code'")
        if backend != "sim":
            raise InvalidConfig("the capacity-planning task has one backend, 'sim' (the graph)")
        self.view = DiscreteView()
        self.max_action_chars = MAX_CODE_CHARS if interface == "code" else TOOL_ACTION_CHARS
        super().__init__(level=level, interface=interface, backend=backend,
                         max_steps=max_steps, reward=reward, observability=observability,
                         history=history, render_mode=render_mode,
                         command_timeout=command_timeout, step_timeout=step_timeout,
                         info=info)
        self.generator = QueryGenerator(level, topologies=topology_pool(topologies),
                                        templates=templates)
        if isinstance(limits, dict):
            limits = Limits.from_dict(limits)
        self.limits = limits or Limits()
        self.python_guard = python_guard
        self.unsafe_sandbox = unsafe_sandbox  # a bool: the config refuses "false" and 1
        self.backend = MaltSimBackend(self.limits, python_guard, self.unsafe_sandbox)
        self.query = None
        self._prebuilt = None

    @property
    def expert_class(self):
        return CapacityPlanningExpert

    # convenient views of the backend's state (read-only)
    @property
    def graph(self):
        return self.backend.graph

    @property
    def base(self):
        return self.backend.base

    @property
    def toolbox(self):
        return self.backend.toolbox

    @property
    def sandbox(self):
        return self.backend.sandbox

    @property
    def verdict(self):
        return self.backend.verdict


    # ------------------------------------------------------------------ hooks
    def _default_max_steps(self) -> int:
        mode = "code" if self.interface == "code" else "tools"
        return DEFAULT_MAX_STEPS[mode][self.level]

    @property
    def text_keys(self) -> tuple[str, ...]:
        """The required keys of a text action (``code`` mode: the source; tools: ``tool``)."""
        return ("code",) if self.interface == "code" else ("tool",)

    def _make_catalogue(self) -> Catalogue:
        return self.view.catalogue

    def _feature_spaces(self) -> dict[str, spaces.Space]:
        return spaces_dict()

    def _generate(self, rng: np.random.Generator, options: dict) -> Scenario:
        # one episode seed from the env's generator (as routing and k8s do), so the record
        # always carries an int seed and reproduces the draw on its own
        episode_seed = draw_seed(rng)
        drawn = self.generator.sample(rng_from_seed(episode_seed),
                                      template=options.get("template"))
        self._prebuilt = (base_graph(drawn.spec, drawn.scheme), drawn.query)
        return to_scenario(drawn, episode_seed)

    def _apply(self, scenario: Scenario) -> None:
        prebuilt, self._prebuilt = self._prebuilt, None
        self.backend.apply(scenario, prebuilt)
        self.query = q = self.backend.query
        if q.level == "compat" and self.interface != "code":
            raise ValueError("a compat scenario needs interface='code'")
        # the question's part of info["extra"], the same at every step of the episode
        self._query_info = (str(q.label), str(q.level), q.template, q.text, q.answer_type,
                            bool(q.flags.get("literal_unsafe")))

    def _new_metrics(self) -> MaltMetrics:
        return MaltMetrics()

    def _fill_catalogue(self) -> None:
        if self.interface != "code":  # the catalogue also serves random agents on "text"
            q = self.query
            self.view.build(self.graph, q, zlib.crc32(q.text.encode()))

    def _scenario_record(self, scenario: Scenario) -> dict:
        """The record without the ground truth: ``scenario.to_dict()`` with the query
        without its answer, in the same key order. Not a copy: it shares the scenario's
        and the query's values (the core serializes it at once, see ``NetArenaEnv.reset``)."""
        q = self.query
        query = {"template": q.template, "level": q.level, "text": q.text, "ops": q.ops,
                 "answer_type": q.answer_type, "flags": q.flags, "label": q.label}
        return {"task": scenario.task, "level": scenario.level, "params": scenario.params,
                "faults": [query], "seed": scenario.seed, "meta": scenario.meta,
                "version": scenario.version}

    def _decode(self, action: Any) -> dict:
        if self.interface == "code":
            return {"code": self._decode_code(action)}
        if self.interface == "discrete":
            return self.view.decode(decode_index(action))
        return decode_action(action)

    def _decode_code(self, action: Any) -> str:
        if isinstance(action, dict):
            action = action.get("code")
        if isinstance(action, bytes):
            action = action.decode("utf-8", "replace")
        if isinstance(action, np.str_):
            action = str(action)
        if not isinstance(action, str):
            raise ActionError("submit Python source defining process_graph(graph)")
        if len(action) > MAX_CODE_CHARS:
            raise ActionError(f"code longer than {MAX_CODE_CHARS} characters")
        code = upstream_source(action) if self.level == "compat" else extract_code(action)
        if code is None:
            raise ActionError("no `def process_graph(graph)` found in the submission")
        return code

    def _execute(self, action: dict) -> CommandResult:
        if action.get("tool") in WRITES:
            # this step's result replaces the last one, whose text (a read's, made when
            # first read) nothing reads any more: dropped now, it is not made before the write
            self._last_result = None
        return self.backend.run(action)

    def _score(self, action, result) -> tuple[int, bool, float]:
        met = self.metrics
        met.steps += 1
        met.sandbox_seconds = self.backend.sandbox_seconds
        met.answered = self.backend.answered
        v = self.backend.verdict
        if v is None:
            return 0, False, 0.0
        met.record(v)
        return len(v.violations), bool(self.backend.observe()[0]), 0.0

    def _ends_episode(self) -> bool:
        return self.backend.verdict is not None

    def _on_truncate(self) -> int:
        v = self.backend.final_verdict(self.interface == "code")
        self.metrics.record(v)
        return len(v.violations)

    def _after_step(self, action, result) -> None:
        if self.interface != "code":
            self.view.saw(action if isinstance(action, dict) else None, self.graph)
            if isinstance(action, dict) and action.get("tool") in WRITES:
                self.view.refresh(self.graph)  # only a write can change which entries apply

    def _connectivity(self) -> np.ndarray:
        """The backend's outcome vector, ``[correct]`` (safety is the verdict's list)."""
        return self.backend.observe()

    def _state_text(self) -> str:
        return f"Question: {self.query.text}"

    def _features(self) -> dict[str, np.ndarray]:
        return self.view.arrays(self.graph)

    def _outcome_info(self) -> dict:
        """See ``core.info``: ``broken_pairs`` is the number of constraint violations of
        the graded state, ``loss_pct`` 100 when graded wrong, else 0."""
        met = self.metrics
        graded_wrong = self.verdict is not None and not self.verdict.correct
        return {"correct": bool(met.correct), "safe": bool(met.safe),
                "safe_compat": bool(met.safe_compat), "steps": int(met.steps),
                "violations": len(met.violations), "loss_pct": 100 if graded_wrong else 0,
                "broken_pairs": len(met.violations)}

    def _info_extra(self) -> dict:
        label, level, template, text, answer_type, unsafe = self._query_info
        return {
            "label": label,
            "level": level,
            "failed": int(self.metrics.failed),
            "query": {"template": template, "text": text, "answer_type": answer_type,
                      "literal_unsafe": unsafe},
            "verdict": self._verdict_info(),
        }

    def _verdict_info(self) -> dict:
        """The verdict in the fixed shape of ``UNGRADED`` (no answer before the end, no
        timing: ``info`` is a function of the seed and the actions; the grading time is in
        ``metrics.summary()["grade_seconds"]``)."""
        if self.verdict is None:
            return {**UNGRADED, "violations": []}
        return self.verdict.to_info()

    def _text_observation(self) -> str:
        q = self.query
        steps_left = self.max_steps - self.metrics.steps
        if self.interface == "code":
            head = prompts.COMPAT if q.level == "compat" else prompts.CODE
        else:
            head = prompts.TOOLS
        parts = [head, "", self._state_text()]
        if self.history and len(self._transcript) > 1:
            parts += ["", "History (oldest first):"]
            for act, out in self._transcript[:-1]:
                parts.append(self._format_action(act))
                parts.append(sanitize(out, 1500).rstrip("\n"))
        if self._last_result is not None:
            parts += ["", self._format_action(self._last_action), "Output:",
                      sanitize(self._last_result.output, self.max_output_chars).rstrip("\n")
                      or "(no output)"]
        label = "Attempts left" if self.interface == "code" else "Steps left"
        parts += ["", f"{label}: {steps_left}"]
        return sanitize("\n".join(parts) + "\n", self.max_obs_chars)

    def _format_action(self, act) -> str:
        if act is None:
            return "Action: (invalid)"
        if self.interface == "code":
            return f"Submitted code ({len(act['code'])} characters)"
        return "Action: " + json.dumps(act, sort_keys=True, default=repr)

