"""The episode mechanics every NetArena task shares, as a Gymnasium env base class.

A task subclass supplies the scenario generator, the backend, how a text action executes,
the connectivity matrix the grader scores, the text observation, the discrete features and
its action catalogue. This class does the rest, identically for every task: seeding, replay
of recorded scenarios, the text and discrete interfaces, allow-list outcomes, reward
components, per-pair and upstream-compatible safety, latency, truncation, ``info``.

A task graded by a verdict rather than by an outcome vector's transitions (capacity
planning) overrides ``_new_metrics``, ``_score`` (the reward's success and safety inputs),
``_ends_episode`` (a verdict ends the episode) and ``_on_truncate`` (grading at the step
limit); ``interfaces`` and ``_spaces`` give per-interface spaces (e.g. ``"code"``). What
the base class needs from a task is :class:`netarena_gym.core.protocols.Task`.
"""
from __future__ import annotations

import marshal
import re
import signal
import threading
import time
import warnings
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from netarena_gym.core.actions import (MAX_ACTION_CHARS, ActionError, Catalogue,
                                       parse_json_action, text_space)
from netarena_gym.core.config import EnvConfig, check_options, check_seconds
from netarena_gym.core.info import INFO_MODES, clean
from netarena_gym.core.metrics import EpisodeMetrics, loss_percent
from netarena_gym.core.reward import RewardConfig
from netarena_gym.core.scenario import Scenario, plain_json
from netarena_gym.errors import InvalidConfig, ResetNeeded, ScenarioError
from netarena_gym.shell.parser import INVALID, TIMEOUT, CommandResult

try:  # the C module behind ``signal``: the same functions without the enum conversions of
    import _signal as _sig  # signal's Python wrappers (they cost ~4 us a step, ~0.6 CartPole)
except ImportError:  # pragma: no cover
    _sig = signal

try:  # gymnasium >= 1.1
    from gymnasium.vector import AutoresetMode
    _AUTORESET = {"autoreset_mode": AutoresetMode.NEXT_STEP}
except ImportError:  # pragma: no cover
    _AUTORESET = {}

AUTORESET = _AUTORESET
"""The ``metadata`` entry that declares next-step autoreset (empty on old Gymnasium)."""

INTERFACES = ("text", "discrete")
OBSERVABILITY = ("partial", "full")
_UNPRINTABLE = re.compile(r"[^\x20-\x7e\n\t]")
_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\n\t"  # what _UNPRINTABLE leaves alone


def sanitize(text: str, limit: int) -> str:
    """Keep observations inside the Text space: printable ASCII (anything else becomes
    ``?``), bounded length (the head and the tail are kept, the middle elided)."""
    # the usual text is printable ASCII already: told in C (delete every allowed byte,
    # nothing may be left) at about a tenth of the regex search's cost (7 -> 0.7 us at
    # routing level 1, 1.4 -> 0.11 ms for a 64-router pingall)
    if not text.isascii() or text.encode("ascii").translate(None, _PRINTABLE):
        text = _UNPRINTABLE.sub("?", text)
    if len(text) > limit:
        cut = "\n[... output truncated ...]\n"
        keep = (limit - len(cut)) // 2
        text = text[:keep] + cut + text[len(text) - (limit - len(cut) - keep):]
    return text


class StepTimeout(Exception):
    """Raised inside a step when its wall-clock budget (``step_timeout``) is spent."""


class StepDeadline:
    """The per-step wall-clock budget.

    In the main thread it arms ``signal.setitimer(ITIMER_REAL)``, so a step stuck in pure
    Python (a simulator, a parser) is interrupted by a :class:`StepTimeout`; a step blocked
    in C code that does not return to the interpreter is interrupted only when it does.
    Elsewhere (worker threads, where signals cannot be used) the budget is cooperative: the
    step runs to its end and is reported as a timeout if it took longer than the budget."""

    _FREE = (_sig.SIG_DFL, _sig.SIG_IGN, None)
    _TIMERS = hasattr(signal, "setitimer")

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self._armed = False
        self._old = None
        self.t0 = 0.0

    def __enter__(self):
        self.t0 = time.perf_counter()
        if (self.seconds and self._TIMERS
                and threading.current_thread() is threading.main_thread()
                and _sig.getsignal(signal.SIGALRM) in self._FREE):
            self._old = _sig.signal(signal.SIGALRM, _fire)
            _sig.setitimer(signal.ITIMER_REAL, self.seconds)
            self._armed = True
        return self

    def expired(self) -> bool:
        return bool(self.seconds) and time.perf_counter() - self.t0 > self.seconds

    def __exit__(self, *exc):
        if self._armed:
            _sig.setitimer(signal.ITIMER_REAL, 0)
            _sig.signal(signal.SIGALRM, self._old or _sig.SIG_DFL)
            self._armed = False
        return False


def _fire(signum, frame):
    raise StepTimeout


def timeout_result(seconds: float | None) -> CommandResult:
    return CommandResult(f"netarena: step timed out: the step took longer than its budget "
                         f"of {seconds} s (step_timeout)\n", 124, TIMEOUT)


_INT64 = 1 << 63


def decode_index(action: Any) -> int:
    """A discrete action as a plain int, or :class:`ActionError` (never another error)."""
    if type(action) is int and -_INT64 <= action < _INT64:  # the common case, sans numpy
        return action
    if isinstance(action, np.integer) and not isinstance(action, np.timedelta64):
        return int(action)
    if isinstance(action, (dict, str, bytes)):
        raise ActionError("the discrete interface takes a catalogue index")
    try:
        arr = np.asarray(action)
        # a bool (True ran entry 1) or a timedelta is no index, whatever numpy converts
        if arr.size != 1 or arr.dtype.kind not in "iuf":
            raise ValueError
        value = arr.reshape(()).item()
        if isinstance(value, float) and not (np.isfinite(value) and value == int(value)):
            raise ValueError
        return int(value)
    except (TypeError, ValueError, OverflowError):
        text = repr(action)
        raise ActionError(f"action {text[:80]} is not an integer index") from None


class NetArenaEnv(gym.Env):
    """Base class; see the task envs for the concrete observation and action formats."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4, **_AUTORESET}
    task: str = ""
    config_class: type = EnvConfig  # each task's frozen config dataclass
    text_keys: tuple[str, ...] = ("command",)
    levels: tuple = (1, 2, 3, "compat")
    #: the keys ``reset(options=...)`` reads (others are ignored with a warning)
    reset_options: frozenset = frozenset({"scenario"})
    default_max_steps: dict = {1: 15, 2: 20, 3: 40, "compat": 10}
    max_obs_chars: int = 32768
    max_output_chars: int = 6000
    max_action_chars: int = MAX_ACTION_CHARS
    interfaces: tuple[str, ...] = INTERFACES

    def __init__(self, *, level: int | str = 1, interface: str = "text", backend: str = "sim",
                 max_steps: int | None = None, reward: RewardConfig | dict | None = None,
                 observability: str = "partial", history: int = 0,
                 render_mode: str | None = None, command_timeout: float = 10.0,
                 step_timeout: float | None = 5.0, info: str = "full"):
        if level not in self.levels:
            raise InvalidConfig(f"level must be one of {self.levels}, got {level!r}")
        if interface not in self.interfaces:
            raise InvalidConfig(f"interface must be one of {self.interfaces}, "
                                f"got {interface!r}")
        if observability not in OBSERVABILITY:
            raise InvalidConfig(f"observability must be one of {OBSERVABILITY}, "
                                f"got {observability!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise InvalidConfig(f"render_mode must be one of {self.metadata['render_modes']}, "
                                f"got {render_mode!r}")
        if info not in INFO_MODES:
            raise InvalidConfig(f"info must be one of {INFO_MODES}, got {info!r}")
        #: "full" or "lean": what ``info`` holds on steps that do not end the episode
        self.info_mode = info
        #: True when the task keeps the base ``_outcome_info`` (lean infos read the metrics)
        self._base_outcome = type(self)._outcome_info is NetArenaEnv._outcome_info
        self._deadline = StepDeadline(None)  # one per env; step() sets its budget
        check_seconds("command_timeout", command_timeout)
        if step_timeout is not None:  # None: no step budget (a real backend's own timeouts)
            check_seconds("step_timeout", step_timeout)
        self.command_timeout = float(command_timeout)
        self.step_timeout = None if step_timeout is None else float(step_timeout)
        self._done = True
        self._closed = False
        self.level = level
        self.interface = interface
        self.backend_name = backend
        self.max_steps = int(self._default_max_steps() if max_steps is None else max_steps)
        if self.max_steps < 1:
            raise InvalidConfig("max_steps must be >= 1")
        self.reward_config = RewardConfig.coerce(reward)
        #: ``(low, high)`` of one step's reward under ``reward_config`` (see core.reward)
        self.reward_range = self.reward_config.step_range()
        self.observability = observability
        self.history = int(history)
        self.render_mode = render_mode
        self.catalogue = self._make_catalogue()
        self.scenario: Scenario | None = None
        self.metrics: EpisodeMetrics | None = None
        self._last_action: dict | None = None
        self._last_result: CommandResult | None = None
        self._transcript: list[tuple[dict | None, str]] = []
        self._matrix: np.ndarray | None = None
        self._seed: int | None = None
        self.observation_space, self.action_space = self._spaces()

    # ------------------------------------------------------------------ hooks
    def _default_max_steps(self) -> int:
        """``max_steps`` when none is given (by level; a task may also key on interface)."""
        return self.default_max_steps[self.level]

    def _make_catalogue(self) -> Catalogue:
        return Catalogue(self._catalogue_size())

    def _spaces(self) -> tuple[spaces.Space, spaces.Space]:
        """``(observation_space, action_space)`` of ``self.interface``: text interfaces
        are ``Text`` both ways, ``"discrete"`` a feature ``Dict`` plus the mask."""
        if self.interface != "discrete":
            return text_space(self.max_obs_chars), text_space(self.max_action_chars)
        feats = dict(self._feature_spaces())
        feats["action_mask"] = spaces.MultiBinary(self.catalogue.size)
        return spaces.Dict(feats), spaces.Discrete(self.catalogue.size)

    def _new_metrics(self) -> Any:
        """The episode's metrics object, after :meth:`_apply` (it must have ``steps``,
        ``count(kind)``, ``env_seconds``, ``agent_seconds`` and ``summary()``)."""
        self._matrix = self._connectivity()
        return EpisodeMetrics(initial=self._matrix)

    def _score(self, action: dict | None, result: CommandResult) -> tuple[int, bool, float]:
        """After a step's action: ``(newly_broken, solved, progress_delta)``, the reward's
        success and safety inputs. Default: the outcome vector's transitions."""
        before = self._matrix
        self._matrix = m = self._connectivity()
        newly = self.metrics.update(m)
        delta = 0.0
        if self.reward_config.progress:
            delta = (int(m.sum()) - int(before.sum())) / max(1, m.size)
        return newly, bool(self.metrics.correct), delta

    def _safety_pairs(self) -> int | None:
        """How many pairs the reward's safety fraction is taken over: the size of the
        outcome vector (routing: host pairs; K8s: probes). None: any break costs the full
        weight (a task without pairs)."""
        current = getattr(self.metrics, "current", None)
        return None if current is None else int(current.size)

    def _ends_episode(self) -> bool:
        """True when the step just scored ended the episode with a verdict even if not
        solved (capacity planning: a graded answer). Default: only solving ends it."""
        return False

    def _on_truncate(self) -> int:
        """Grade the state at truncation; returns the safety violations it adds."""
        return 0

    def _scenario_record(self, scenario: Scenario) -> dict:
        """The replayable ``info["scenario"]`` (a task may leave its ground truth out)."""
        return scenario.to_dict()

    def _outcome_info(self) -> dict:
        """The metric fields of ``info``: correct, safe, safe_compat, steps, violations,
        loss_pct, broken_pairs."""
        met = self.metrics
        return {"correct": bool(met.correct), "safe": bool(met.safe),
                "safe_compat": bool(met.safe_compat), "steps": int(met.steps),
                "violations": int(met.violations), "loss_pct": int(met.loss_history[-1]),
                "broken_pairs": int(met.broken)}

    def _catalogue_size(self) -> int:
        raise NotImplementedError

    def _feature_spaces(self) -> dict[str, spaces.Space]:
        raise NotImplementedError

    def _generate(self, rng: np.random.Generator, options: dict) -> Scenario:
        raise NotImplementedError

    def _apply(self, scenario: Scenario) -> None:
        raise NotImplementedError

    def _execute(self, action: dict[str, str]) -> CommandResult:
        raise NotImplementedError

    def _connectivity(self) -> np.ndarray:
        raise NotImplementedError

    def _fill_catalogue(self) -> None:
        raise NotImplementedError

    def _features(self) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def _state_text(self) -> str:
        """The grader-visible state as text (routing: the pingall matrix)."""
        raise NotImplementedError

    def _config_text(self) -> str:
        """Full serialized configuration, for ``observability="full"``."""
        raise NotImplementedError

    def _info_extra(self) -> dict:
        """The task's ``info["extra"]`` (fixed keys and types, see ``core.info``)."""
        return {}

    def _format_action(self, action: dict[str, str]) -> str:
        return " ".join(f"{k.capitalize()}: {action[k]}" for k in self.text_keys)

    def __new__(cls, *args, **kwargs):
        check_options(cls, kwargs)  # InvalidConfig naming the valid options, not TypeError
        return super().__new__(cls)

    # ------------------------------------------------------------------- API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        # the last episode is over whatever happens next: a reset that raises leaves no
        # episode to step (its metrics were the last one's, its scenario a refused record)
        self._done = True
        self._seed = seed
        if options is not None and not isinstance(options, Mapping):
            raise InvalidConfig(f"reset options must be a dict such as {{'scenario': ...}}, "
                                f"got {options!r}"[:300])
        options = dict(options or {})
        unknown = set(options) - self.reset_options
        if unknown:
            warnings.warn(f"reset ignores unknown options {sorted(unknown)}; "
                          f"{type(self).__name__} reads {sorted(self.reset_options)}",
                          stacklevel=2)
        replayed = "scenario" in options
        if replayed:
            scenario = Scenario.coerce(options.pop("scenario"))
            if scenario.task != self.task:
                raise ScenarioError(f"scenario is for task {scenario.task!r}, "
                                    f"not {self.task!r}")
            if (scenario.level == "compat") != (self.level == "compat"):
                # compat runs upstream's rules (labels, programs, grading): a record of the
                # other kind would play by rules it was not drawn for
                raise ScenarioError(f"a level-{scenario.level} scenario does not replay on a "
                                    f"level-{self.level} env: compat and levels 1-3 play by "
                                    "different rules; make the env at the scenario's level")
        else:
            scenario = self._generate(self.np_random, options)
        if replayed and scenario.level not in self.levels:
            raise ScenarioError(f"scenario level {scenario.level!r} is not a level of "
                                f"{type(self).__name__}: {self.levels}")
        if replayed:
            try:
                self._apply(scenario)
            except ScenarioError:
                raise
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
                raise ScenarioError(f"the scenario record does not fit this env "
                                    f"({type(e).__name__}: {e})"[:400]) from e
        else:
            self._apply(scenario)
        self.scenario = scenario
        self.metrics = self._new_metrics()
        self._last_action, self._last_result = None, None
        self._transcript = []
        self._fill_catalogue()
        # info["scenario"] is a fresh plain-JSON copy at every step: the record is made
        # plain JSON once here (tuples become lists, as json.loads gives them) and copied
        # per step by marshal, the fastest deep copy of such data
        self._record = plain_json(self._scenario_record(scenario))
        self._record_blob = marshal.dumps(self._record)
        self._done = self._closed = False
        info = self._info(None, self.reward_config.zero(), 0)
        return self._observation(), info

    def step(self, action: Any):
        met = self.metrics
        if met is None:
            raise ResetNeeded("call reset() before step()")
        if self._done:
            raise ResetNeeded("the env is closed; call reset() to start a new episode"
                              if self._closed else
                              "the episode is over (terminated or truncated, or the last reset "
                              "raised); call reset()")
        t0 = time.perf_counter()
        decoded = None
        deadline = self._deadline
        deadline.seconds = self.step_timeout
        try:
            with deadline:
                try:
                    decoded = self._decode(action)
                except ActionError as e:
                    result = CommandResult(f"netarena: invalid action: {e}\n", 2, INVALID)
                else:
                    result = self._execute(decoded)
        except StepTimeout:
            result = timeout_result(self.step_timeout)
        if result.kind != TIMEOUT and deadline.expired():
            result = timeout_result(self.step_timeout)
        kind = result.kind
        newly, solved, delta = self._score(decoded, result)
        met.count(kind)
        terminated = solved or self._ends_episode()
        truncated = (not terminated) and met.steps >= self.max_steps
        if truncated:
            newly += self._on_truncate()
        # the pairs matter only to a step that broke some (no -0.0 in the components)
        comps = self.reward_config.components(kind=kind, newly_broken=newly, solved_now=solved,
                                              progress_delta=delta,
                                              pairs=self._safety_pairs() if newly else None)
        reward = clean(sum(comps.values()))
        self._last_action, self._last_result = decoded, result
        if self.history:
            self._transcript.append((decoded, result.output))
            del self._transcript[:-(self.history + 1)]  # the last is this step's own
        self._after_step(decoded, result)
        met.env_seconds += time.perf_counter() - t0
        self._done = done = terminated or truncated
        if self.info_mode == "lean" and not done:
            info = self._lean_info(result, comps, newly)
        else:
            info = self._info(result, comps, newly)
        return self._observation(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Validity mask of the discrete catalogue (the name sb3-contrib looks for)."""
        return self.catalogue.mask.astype(bool)

    def render(self):
        if self.render_mode == "ansi":
            if self.metrics is None:
                raise ResetNeeded("call reset() before render()")
            return self._text_observation()
        return None

    def close(self):
        """Release the backend (real ones remove only what they created) and end the
        episode: ``step`` then raises :class:`ResetNeeded` until ``reset``."""
        self._done = self._closed = True
        backend = getattr(self, "backend", None)
        if backend is not None:
            backend.close()

    @classmethod
    def from_config(cls, config):
        """Build the env from its task's config (``cls.config_class``); a dict is checked
        by ``from_kwargs`` first, so an unknown key raises ``InvalidConfig`` naming the
        valid ones."""
        if isinstance(config, dict):
            config = cls.config_class.from_kwargs(**config)
        return cls(**config.to_kwargs())

    # -------------------------------------------------------------- helpers
    def _after_step(self, action: dict | None, result: CommandResult) -> None:
        """Hook for interfaces that record what diagnostics revealed."""

    def _decode(self, action: Any) -> dict[str, str]:
        if self.interface == "discrete":
            return self.catalogue.render(decode_index(action))
        return parse_json_action(action, self.text_keys, max_chars=self.max_action_chars)

    def _lean_info(self, result: CommandResult, comps: dict, newly: int) -> dict:
        """``info`` with ``info="lean"`` on a step that does not end the episode:
        :data:`~netarena_gym.core.info.LEAN_KEYS`, valued as :meth:`_info` values them
        (``comps`` is the step's own dict, handed over without a copy)."""
        if self._base_outcome:  # the base _outcome_info's values, without building it
            met = self.metrics
            correct, safe, violations = bool(met.correct), bool(met.safe), int(met.violations)
        else:
            out = self._outcome_info()
            correct, safe, violations = out["correct"], out["safe"], out["violations"]
        return {
            "correct": correct,
            "safe": safe,
            "violations": violations,
            "cost": float(newly),
            "command_kind": result.kind,
            "command_status": int(result.status),
            "reward_components": comps,
            "action_mask": self.catalogue.mask.copy(),
        }

    def _info(self, result: CommandResult | None, comps: dict, newly: int) -> dict:
        """The full ``info`` (every key of :data:`~netarena_gym.core.info.INFO_KEYS`)."""
        out = self._outcome_info()
        met = self.metrics
        return {
            "correct": out["correct"],
            "safe": out["safe"],
            "safe_compat": out["safe_compat"],
            "steps": out["steps"],
            "violations": out["violations"],
            "cost": float(newly),
            "loss_pct": out["loss_pct"],
            "broken_pairs": out["broken_pairs"],
            "newly_broken": int(newly),
            "command_kind": result.kind if result is not None else "none",
            "command_status": int(result.status) if result is not None else -1,
            "invalid": int(met.invalid),
            "refused": int(met.refused),
            "timeouts": int(met.timeouts),
            "reward_components": comps,  # the step's own dict (reset: a fresh zero one)
            "action_mask": self.catalogue.mask.copy(),
            "scenario": marshal.loads(self._record_blob),  # a fresh copy of the plain record
            "backend": str(getattr(getattr(self, "backend", None), "name", self.backend_name)),
            "extra": self._info_extra(),
        }

    def _observation(self):
        if self.interface != "discrete":
            return self._text_observation()
        obs = self._features()
        obs["action_mask"] = self.catalogue.mask.copy()
        return obs

    def _text_observation(self) -> str:
        parts = []
        if self.history and len(self._transcript) > 1:
            parts.append("History (oldest first):")
            for act, out in self._transcript[:-1]:
                parts.append(self._format_action(act) if act else "(invalid action)")
                parts.append(sanitize(out, 1500).rstrip("\n"))
            parts.append("")
        parts.append(self._state_text())
        if self._last_result is not None:
            parts.append("")
            if self._last_action:
                parts.append(self._format_action(self._last_action))
            parts.append("Output:")
            parts.append(sanitize(self._last_result.output, self.max_output_chars).rstrip("\n")
                         or "(no output)")
        if self.observability == "full":
            parts.append("")
            parts.append("Configuration of every node:")
            parts.append(self._config_text())
        parts.append("")
        parts.append(f"Steps left: {self.max_steps - self.metrics.steps}")
        return sanitize("\n".join(parts) + "\n", self.max_obs_chars)

    @property
    def loss_pct(self) -> int:
        return loss_percent(self._matrix)
