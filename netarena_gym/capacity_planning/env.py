"""``NetArena-CapacityPlanning-v0``: answer capacity-planning questions on MALT topologies.

Interfaces (``interface=``):

* ``"code"`` (default, upstream's): the observation is the instructions and the question;
  the action is Python source defining ``process_graph(graph)`` (a string, optionally inside
  a fenced block among prose, or ``{"code": ...}``). It runs in the sandbox (see
  :mod:`sandbox`); a result is graded and ends the episode, an error is reported in the
  next observation and costs a penalty (``max_steps`` attempts, 3 by default, 1 at compat);
* ``"text"``: a multi-step episode of JSON tool calls (see :mod:`tools`) ending with
  ``{"tool": "answer", ...}``;
* ``"discrete"``: the same tools as a fixed catalogue with a mask (see :mod:`catalogue`).

Levels 1-4 and ``"compat"`` are described in :mod:`generator` (compat is code-only, like
upstream). ``reset(seed=s)`` always gives the same episode; ``info["scenario"]`` is a
replayable record (the ground truth is left out of it and recomputed on replay).
"""
from __future__ import annotations

import copy
import json
import time
import zlib
from collections import OrderedDict
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from netarena_gym.core.actions import ActionError, text_space
from netarena_gym.core.env import AUTORESET, decode_index, sanitize
from netarena_gym.core.info import clean
from netarena_gym.errors import InvalidConfig, ResetNeeded
from netarena_gym.core.reward import RewardConfig
from netarena_gym.core.scenario import Scenario
from netarena_gym.capacity_planning.config import CapacityPlanningConfig
from netarena_gym.core.seeding import draw_seed, rng_from_seed
from netarena_gym.shell.parser import ERROR, INVALID, OK, REFUSED, TIMEOUT, CommandResult
from netarena_gym.capacity_planning import prompts
from netarena_gym.capacity_planning.catalogue import DiscreteView, spaces_dict
from netarena_gym.capacity_planning.expert import CapacityPlanningExpert
from netarena_gym.capacity_planning.generator import LEVELS, TASK, QueryGenerator, from_scenario, level_topologies, to_scenario
from netarena_gym.capacity_planning.grader import UNGRADED, Verdict, grade, grade_submission
from netarena_gym.capacity_planning.metrics import MaltMetrics
from netarena_gym.capacity_planning.state import BaseGraph, Graph, base_graph
from netarena_gym.capacity_planning.problems import Query
from netarena_gym.capacity_planning.commands.sandbox import MAX_CODE_CHARS, Limits, Sandbox, extract_code
from netarena_gym.capacity_planning.commands.tools import ToolBox, decode_action
from netarena_gym.capacity_planning.topology import TopologySpec

INTERFACES = ("code", "text", "discrete")
DEFAULT_MAX_STEPS = {"code": {1: 3, 2: 3, 3: 3, 4: 3, "compat": 1},
                     "tools": {1: 40, 2: 60, 3: 60, 4: 100}}
_SANDBOX_KIND = {"refused": REFUSED, "timeout": TIMEOUT, "error": ERROR, "memory": ERROR,
                 "crash": ERROR}


class CapacityPlanningEnv(gym.Env):
    """Answer capacity-planning questions on Google MALT topologies.

    ## Description

    A scenario is a MALT topology and a question about it (levels 1-4, and "compat" as in
    upstream NetArena): list, count, rank, add or remove entities, and check capacity.
    Some questions change the graph; the grader checks the answer and the graph's
    constraints (the violations are the task's safety).

    ## Action Space

    ``interface="code"`` (default): ``Text(MAX_CODE_CHARS)``, Python source defining
    ``process_graph(graph)``, run in the sandbox. ``interface="text"``: ``Text(2048)``, a
    JSON tool call ending with ``{"tool": "answer", ...}``. ``interface="discrete"``:
    ``Discrete(n)``, the same tools as a catalogue with a mask.

    ## Observation Space

    Code and text: ``Text(32768)``, the instructions, the question, the last action's
    output and the attempts or steps left. Discrete: a ``Dict`` of arrays
    (:mod:`netarena_gym.capacity_planning.catalogue`) plus ``action_mask``.

    ## Rewards

    The sum of the components in ``info["reward_components"]`` (weights from
    :class:`~netarena_gym.core.reward.RewardConfig`, defaults): ``success`` +1.0 on the step
    that solves, ``safety`` -0.1 per constraint violation newly broken by the step, ``step`` -0.01 every
    step, ``invalid`` -0.05, ``refused`` -0.2, ``timeout`` -0.05, ``failed`` 0.0 and the
    optional ``progress`` shaping (0.0).

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
    ``InvalidConfig`` with the valid ones. ``info`` follows :mod:`netarena_gym.core.info`.

    ## Version History

    * v0: the shared info schema (task facts under ``info["extra"]``), keyword-only
      arguments, ``ResetNeeded`` after the end.
    """
    config_class = CapacityPlanningConfig
    metadata = {"render_modes": ["ansi"], "render_fps": 4, **AUTORESET}
    task = TASK
    levels = LEVELS
    max_obs_chars = 32768
    max_output_chars = 16000

    @property
    def text_keys(self) -> tuple[str, ...]:
        """The required keys of a text action (``code`` mode: the source; tools: ``tool``)."""
        return ("code",) if self.interface == "code" else ("tool",)

    def __init__(self, *, level: int | str = 1, interface: str = "code", backend: str = "sim",
                 max_steps: int | None = None, reward: RewardConfig | dict | None = None,
                 observability: str = "partial", history: int = 0,
                 render_mode: str | None = None, command_timeout: float = 10.0,
                 step_timeout: float | None = None, topologies: int | list | None = None, templates: tuple[str, ...] | None = None,
                 limits: Limits | dict | None = None, python_guard: bool = True,
                 unsafe_sandbox: bool = False):
        self.config = CapacityPlanningConfig(**{k: v for k, v in locals().items()
                                  if k in CapacityPlanningConfig.field_names()})
        if level not in LEVELS:
            raise InvalidConfig(f"level must be one of {LEVELS}, got {level!r}")
        if interface not in INTERFACES:
            raise InvalidConfig(f"interface must be one of {INTERFACES}, got {interface!r}")
        if observability != "partial":
            raise InvalidConfig("the capacity-planning task has observability 'partial' only")
        if level == "compat" and interface != "code":
            raise InvalidConfig("level 'compat' reproduces upstream, which is code-only: "
                             "use interface='code'")
        if backend != "sim":
            raise InvalidConfig("the capacity-planning task has one backend, 'sim' (the graph)")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.level = level
        self.interface = interface
        self.backend_name = backend
        self.observability = observability
        self.command_timeout = float(command_timeout)
        self.step_timeout = step_timeout
        mode = "code" if interface == "code" else "tools"
        self.max_steps = int(max_steps or DEFAULT_MAX_STEPS[mode][level])
        if self.max_steps < 1:
            raise ValueError("max_steps must be >= 1")
        self.reward_config = RewardConfig.coerce(reward)
        self.render_mode = render_mode
        self.history = int(history)
        if isinstance(topologies, int):
            topologies = level_topologies(topologies)
        elif topologies is not None:
            topologies = [t if isinstance(t, TopologySpec) else TopologySpec.from_dict(t)
                          for t in topologies]
        self.generator = QueryGenerator(level, topologies=topologies, templates=templates)
        if isinstance(limits, dict):
            limits = Limits(**limits)
        self.limits = limits or Limits()
        self.python_guard = python_guard
        self.unsafe_sandbox = bool(unsafe_sandbox)
        self.sandbox: Sandbox | None = None
        self.view = DiscreteView()
        self.catalogue = self.view.catalogue
        self._graphs: OrderedDict[int, Graph] = OrderedDict()
        self.scenario: Scenario | None = None
        self.query: Query | None = None
        self.base: BaseGraph | None = None
        self.graph: Graph | None = None
        self.toolbox: ToolBox | None = None
        self.metrics: MaltMetrics | None = None
        self.verdict: Verdict | None = None
        self._last: tuple[Any, CommandResult] | None = None
        self._transcript: list[tuple[Any, str]] = []
        if interface == "code":
            self.observation_space = text_space(self.max_obs_chars)
            self.action_space = text_space(MAX_CODE_CHARS)
        elif interface == "text":
            self.observation_space = text_space(self.max_obs_chars)
            self.action_space = text_space(2048)
        else:
            d = spaces_dict()
            d["action_mask"] = spaces.MultiBinary(self.catalogue.size)
            self.observation_space = spaces.Dict(d)
            self.action_space = spaces.Discrete(self.catalogue.size)

    @property
    def expert_class(self):
        return CapacityPlanningExpert

    # ------------------------------------------------------------------- API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        if "scenario" in options:
            scenario = Scenario.coerce(options.pop("scenario"))
            base, query = from_scenario(scenario)
            if query.level == "compat" and self.interface != "code":
                raise ValueError("a compat scenario needs interface='code'")
        else:
            # one episode seed from the env's generator (as routing and k8s do), so the
            # record always carries an int seed and reproduces the draw on its own
            episode_seed = draw_seed(self.np_random)
            drawn = self.generator.sample(rng_from_seed(episode_seed),
                                          template=options.get("template"))
            scenario = to_scenario(drawn, episode_seed)
            base, query = base_graph(drawn.spec, drawn.scheme), drawn.query
        self.scenario, self.query, self.base = scenario, query, base
        self.graph = self._graph_for(base)
        self.toolbox = ToolBox(self.graph)
        self.metrics = MaltMetrics()
        self.verdict = None
        self._last = None
        self._transcript = []
        if self.interface != "code":  # the catalogue also serves random agents on "text"
            self.view.build(self.graph, query, rng_from_seed(zlib.crc32(query.text.encode())))
        record = scenario.to_dict()
        record["faults"] = [query.to_dict(with_answer=False)]
        self._scenario_record = record
        info = self._info(None, self.reward_config.zero(), 0)
        return self._observation(), info

    def step(self, action: Any):
        if self.metrics is None:
            raise ResetNeeded("call reset() before step()")
        if self.verdict is not None:
            raise ResetNeeded("the episode is over (terminated or truncated); call reset()")
        t0 = time.perf_counter()
        met = self.metrics
        met.steps += 1
        if self.interface == "code":
            decoded, result, verdict = self._step_code(action)
        else:
            decoded, result, verdict = self._step_tool(action)
        met.count(result.kind)
        terminated = verdict is not None
        truncated = not terminated and met.steps >= self.max_steps
        if truncated:
            verdict = self._final_verdict()
        if verdict is not None:
            self.verdict = verdict
            met.record(verdict)
        newly = len(verdict.violations) if verdict else 0
        comps = self.reward_config.components(
            kind=result.kind, newly_broken=newly,
            solved_now=bool(verdict and verdict.correct), progress_delta=0.0)
        comps = {k: clean(v) for k, v in comps.items()}
        self._last = (decoded, result)
        if self.history:
            self._transcript.append((decoded, result.output))
            del self._transcript[:-self.history]
        if self.interface != "code":
            self.view.saw(decoded if isinstance(decoded, dict) else None, self.graph)
            self.view.refresh(self.graph)
        met.env_seconds += time.perf_counter() - t0
        info = self._info(result, comps, newly)
        return self._observation(), clean(sum(comps.values())), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Validity mask of the discrete catalogue (the name sb3-contrib looks for)."""
        return self.catalogue.mask.astype(bool)

    def render(self):
        if self.render_mode == "ansi":
            return self._text()
        return None

    def close(self):
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None

    # ------------------------------------------------------------- stepping
    def _step_code(self, action):
        if isinstance(action, dict):
            action = action.get("code")
        if isinstance(action, bytes):
            action = action.decode("utf-8", "replace")
        if isinstance(action, np.str_):
            action = str(action)
        if not isinstance(action, str):
            return None, CommandResult("netarena: invalid action: submit Python source "
                                       "defining process_graph(graph)\n", 2, INVALID), None
        if len(action) > MAX_CODE_CHARS:
            return None, CommandResult(f"netarena: invalid action: code longer than "
                                       f"{MAX_CODE_CHARS} characters\n", 2, INVALID), None
        code = extract_code(action)
        if code is None:
            return None, CommandResult("netarena: invalid action: no `def process_graph(graph)` "
                                       "found in the submission\n", 2, INVALID), None
        if self.sandbox is None:
            self.sandbox = Sandbox(self.limits, self.python_guard, unsafe=self.unsafe_sandbox)
        res = self.sandbox.run(self.base, code)
        self.metrics.sandbox_seconds += res.seconds
        out = f"[{res.status}] {res.message}".rstrip()
        if res.stdout:
            out += f"\nprinted:\n{res.stdout}"
        if not res.ok:
            return code, CommandResult(out + "\n", 1, _SANDBOX_KIND.get(res.status, ERROR)), None
        if res.declared_type == "error":
            return code, CommandResult("[error] the code returned type 'error'\n", 1, ERROR), None
        self.metrics.answered = True
        verdict = grade_submission(self.query, self.base, res.data, res.diff, res.duplicates)
        return code, CommandResult(f"submission of type {res.declared_type!r} received and "
                                   "graded\n", 0, OK), verdict

    def _step_tool(self, action):
        try:
            if self.interface == "discrete":
                action = self.catalogue.render(decode_index(action))
            a = decode_action(action)
        except ActionError as e:
            return None, CommandResult(f"netarena: invalid action: {e}\n", 2, INVALID), None
        res = self.toolbox.run(a)
        if a["tool"] != "answer" or res.kind != OK:
            return a, res, None
        self.metrics.answered = True
        return a, res, grade(self.query, self.graph, a["answer"])

    def _final_verdict(self) -> Verdict:
        """Grading at truncation: the state reached, without an answer."""
        if self.interface == "code":  # nothing valid was submitted: no change, upstream Fail
            v = grade_submission(self.query, self.base, None, None)
            v.correct = v.answer_ok = False
            return v
        v = grade(self.query, self.graph, None)
        v.correct = v.answer_ok = False
        return v

    # ------------------------------------------------------------ helpers
    def _graph_for(self, base: BaseGraph) -> Graph:
        g = self._graphs.get(id(base))
        if g is None or g.base is not base:
            g = self._graphs[id(base)] = Graph(base)
            while len(self._graphs) > 8:
                self._graphs.popitem(last=False)
        else:
            self._graphs.move_to_end(id(base))
        g.reset()
        return g

    def _info(self, result: CommandResult | None, comps: dict, newly: int) -> dict:
        """The shared schema (``core.info``); see there for loss_pct/broken_pairs here."""
        met = self.metrics
        graded_wrong = self.verdict is not None and not self.verdict.correct
        return {
            "correct": bool(met.correct),
            "safe": bool(met.safe),
            "safe_compat": bool(met.safe_compat),
            "steps": int(met.steps),
            "violations": len(met.violations),
            "cost": float(newly),
            "loss_pct": 100 if graded_wrong else 0,
            "broken_pairs": len(met.violations),
            "newly_broken": int(newly),
            "command_kind": result.kind if result is not None else "none",
            "command_status": int(result.status) if result is not None else -1,
            "invalid": int(met.invalid),
            "refused": int(met.refused),
            "timeouts": int(met.timeouts),
            "reward_components": dict(comps),
            "action_mask": self.catalogue.mask.copy(),
            "scenario": copy.deepcopy(self._scenario_record),
            "backend": self.backend_name,
            "extra": {
                "label": str(self.query.label),
                "level": str(self.query.level),
                "failed": int(met.failed),
                "query": {"template": self.query.template, "text": self.query.text,
                          "answer_type": self.query.answer_type,
                          "literal_unsafe": bool(self.query.flags.get("literal_unsafe"))},
                "verdict": (self.verdict.to_info() if self.verdict is not None
                            else {**UNGRADED, "violations": []}),
            },
        }

    def _observation(self):
        if self.interface == "discrete":
            obs = self.view.arrays(self.graph)
            obs["action_mask"] = self.catalogue.mask.copy()
            return obs
        return self._text()

    def _text(self) -> str:
        q = self.query
        steps_left = self.max_steps - self.metrics.steps
        if self.interface == "code":
            head = prompts.COMPAT if q.level == "compat" else prompts.CODE
        else:
            head = prompts.TOOLS
        parts = [head, "", f"Question: {q.text}"]
        if self.history and len(self._transcript) > 1:
            parts += ["", "History (oldest first):"]
            for act, out in self._transcript[:-1]:
                parts.append(self._format(act))
                parts.append(sanitize(out, 1500).rstrip("\n"))
        if self._last is not None:
            act, res = self._last
            parts += ["", self._format(act), "Output:",
                      sanitize(res.output, self.max_output_chars).rstrip("\n") or "(no output)"]
        label = "Attempts left" if self.interface == "code" else "Steps left"
        parts += ["", f"{label}: {steps_left}"]
        return sanitize("\n".join(parts) + "\n", self.max_obs_chars)

    def _format(self, act) -> str:
        if act is None:
            return "Action: (invalid)"
        if self.interface == "code":
            return f"Submitted code ({len(act)} characters)"
        return "Action: " + json.dumps(act, sort_keys=True, default=repr)

    @classmethod
    def from_config(cls, config: "CapacityPlanningConfig | dict") -> "CapacityPlanningEnv":
        """Build the env from a config (a dict is checked by ``from_kwargs`` first)."""
        if isinstance(config, dict):
            config = CapacityPlanningConfig.from_kwargs(**config)
        return cls(**config.to_kwargs())
