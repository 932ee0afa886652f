"""The episode mechanics every NetArena task shares, as a Gymnasium env base class.

A task subclass supplies the scenario generator, the backend, how a text action executes,
the connectivity matrix the grader scores, the text observation, the discrete features and
its action catalogue. This class does the rest, identically for every task: seeding, replay
of recorded scenarios, the text and discrete interfaces, allow-list outcomes, reward
components, per-pair and upstream-compatible safety, latency, truncation, ``info``.
"""
from __future__ import annotations

import re
import time
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from netarena_gym.core.actions import ActionError, Catalogue, parse_json_action, text_space
from netarena_gym.core.metrics import EpisodeMetrics, loss_percent
from netarena_gym.core.reward import RewardConfig
from netarena_gym.core.scenario import Scenario
from netarena_gym.shell.parser import INVALID, CommandResult

try:  # gymnasium >= 1.1
    from gymnasium.vector import AutoresetMode
    _AUTORESET = {"autoreset_mode": AutoresetMode.NEXT_STEP}
except ImportError:  # pragma: no cover
    _AUTORESET = {}

INTERFACES = ("text", "discrete")
OBSERVABILITY = ("partial", "full")
_UNPRINTABLE = re.compile(r"[^\x20-\x7e\n\t]")


def sanitize(text: str, limit: int) -> str:
    """Keep observations inside the Text space: printable ASCII, bounded length (the head
    and the tail are kept, the middle elided)."""
    if _UNPRINTABLE.search(text):
        text = _UNPRINTABLE.sub("?", text)
    if len(text) > limit:
        cut = "\n[... output truncated ...]\n"
        keep = (limit - len(cut)) // 2
        text = text[:keep] + cut + text[len(text) - (limit - len(cut) - keep):]
    return text


class NetArenaEnv(gym.Env):
    """Base class; see the task envs for the concrete observation and action formats."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4, **_AUTORESET}
    task: str = ""
    text_keys: tuple[str, ...] = ("command",)
    levels: tuple = (1, 2, 3, "compat")
    default_max_steps: dict = {1: 15, 2: 20, 3: 40, "compat": 10}
    max_obs_chars: int = 32768
    max_output_chars: int = 6000

    def __init__(self, *, level: int | str = 1, interface: str = "text", backend: str = "sim",
                 max_steps: int | None = None, reward: RewardConfig | dict | None = None,
                 observability: str = "partial", history: int = 0,
                 render_mode: str | None = None):
        if level not in self.levels:
            raise ValueError(f"level must be one of {self.levels}, got {level!r}")
        if interface not in INTERFACES:
            raise ValueError(f"interface must be one of {INTERFACES}, got {interface!r}")
        if observability not in OBSERVABILITY:
            raise ValueError(f"observability must be one of {OBSERVABILITY}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.level = level
        self.interface = interface
        self.backend_name = backend
        self.max_steps = int(max_steps or self.default_max_steps[level])
        if self.max_steps < 1:
            raise ValueError("max_steps must be >= 1")
        self.reward_config = RewardConfig.coerce(reward)
        self.observability = observability
        self.history = int(history)
        self.render_mode = render_mode
        self.catalogue = Catalogue(self._catalogue_size())
        self.scenario: Scenario | None = None
        self.metrics: EpisodeMetrics | None = None
        self._last_action: dict | None = None
        self._last_result: CommandResult | None = None
        self._transcript: list[tuple[dict | None, str]] = []
        self._matrix: np.ndarray | None = None
        if interface == "text":
            self.observation_space = text_space(self.max_obs_chars)
            self.action_space = text_space(2048)
        else:
            feats = dict(self._feature_spaces())
            feats["action_mask"] = spaces.MultiBinary(self.catalogue.size)
            self.observation_space = spaces.Dict(feats)
            self.action_space = spaces.Discrete(self.catalogue.size)

    # ------------------------------------------------------------------ hooks
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

    def _episode_info(self) -> dict:
        """Extra ``info`` keys returned by ``reset`` (backend facts, ...)."""
        return {}

    def _format_action(self, action: dict[str, str]) -> str:
        return " ".join(f"{k.capitalize()}: {action[k]}" for k in self.text_keys)

    # ------------------------------------------------------------------- API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        if "scenario" in options:
            scenario = Scenario.coerce(options.pop("scenario"))
            if scenario.task != self.task:
                raise ValueError(f"scenario is for task {scenario.task!r}, not {self.task!r}")
        else:
            scenario = self._generate(self.np_random, options)
        self.scenario = scenario
        self._apply(scenario)
        self._matrix = self._connectivity()
        self.metrics = EpisodeMetrics(initial=self._matrix)
        self._last_action, self._last_result = None, None
        self._transcript = []
        self._fill_catalogue()
        info = self._info(None)
        info["scenario"] = scenario.to_dict()
        info.update(self._episode_info())
        return self._observation(), info

    def step(self, action: Any):
        if self.metrics is None:
            raise RuntimeError("call reset() before step()")
        t0 = time.perf_counter()
        decoded = None
        try:
            decoded = self._decode(action)
        except ActionError as e:
            result = CommandResult(f"netarena: invalid action: {e}\n", 2, INVALID)
        else:
            result = self._execute(decoded)
        before = self._matrix
        self._matrix = m = self._connectivity()
        newly = self.metrics.update(m)
        self.metrics.count(result.kind)
        solved = self.metrics.correct
        delta = 0.0
        if self.reward_config.progress:
            delta = (int(m.sum()) - int(before.sum())) / max(1, m.size)
        comps = self.reward_config.components(kind=result.kind, newly_broken=newly,
                                              solved_now=solved, progress_delta=delta)
        reward = float(sum(comps.values()))
        terminated = solved
        truncated = (not terminated) and self.metrics.steps >= self.max_steps
        self._last_action, self._last_result = decoded, result
        if self.history:
            self._transcript.append((decoded, result.output))
            del self._transcript[:-self.history]
        self._after_step(decoded, result)
        self.metrics.env_seconds += time.perf_counter() - t0
        info = self._info(result)
        info["reward_components"] = comps
        info["newly_broken"] = newly
        return self._observation(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Validity mask of the discrete catalogue (the name sb3-contrib looks for)."""
        return self.catalogue.mask.astype(bool)

    def render(self):
        if self.render_mode == "ansi":
            return self._text_observation()
        return None

    def close(self):
        pass

    # -------------------------------------------------------------- helpers
    def _after_step(self, action: dict | None, result: CommandResult) -> None:
        """Hook for interfaces that record what diagnostics revealed."""

    def _decode(self, action: Any) -> dict[str, str]:
        if self.interface == "discrete":
            if isinstance(action, (dict, str)):
                raise ActionError("the discrete interface takes a catalogue index")
            try:
                idx = int(action)
            except (TypeError, ValueError):
                raise ActionError(f"action {action!r} is not an integer index") from None
            return self.catalogue.render(idx)
        return parse_json_action(action, self.text_keys)

    def _info(self, result: CommandResult | None) -> dict:
        m = self._matrix
        met = self.metrics
        return {
            "action_mask": self.catalogue.mask.copy(),
            "correct": met.correct,
            "safe": met.safe,
            "safe_compat": met.safe_compat,
            "steps": met.steps,
            "violations": met.violations,
            "loss_pct": met.loss_history[-1],
            "broken_pairs": int(met.current.size - np.count_nonzero(met.current)),
            "command_kind": result.kind if result is not None else None,
            "command_status": result.status if result is not None else None,
            "invalid": met.invalid,
            "refused": met.refused,
            "timeouts": met.timeouts,
        }

    def _observation(self):
        if self.interface == "text":
            return self._text_observation()
        obs = self._features()
        obs["action_mask"] = self.catalogue.mask.copy()
        return obs

    def _text_observation(self) -> str:
        parts = []
        if self.history and self._transcript:
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
