"""The one episode loop: play an agent in an env and record the episode.

:func:`play_episode` is used by ``netarena-gym eval`` (every worker, process and Ray actor),
the tests, the benchmarks and the trainers' evaluations and demonstrations, so every path
produces the same :class:`EpisodeRecord`. The record holds the scenario, every action (and,
with ``record=True``, every observation), the reward components, the metrics (correctness,
per-pair and upstream-compatible safety, steps, seconds), what the agent reported about
each decision (an LLM's ``last_call``: latency, tokens) and any error. With ``catch=True``
(the default) an agent or env that raises ends the episode with the error recorded (such
an episode is neither correct nor safe: its state is unknown), so a run never dies
because one episode did: any exception, ``SystemExit`` (an agent calling
``sys.exit``) and other ``BaseException`` included. ``KeyboardInterrupt`` still stops the
caller (it may be the user's Ctrl-C) unless ``catch_interrupt=True``, which a worker
process that ignores SIGINT passes: there only the agent can have raised it.

Only the public env API is used: ``reset``, ``step``, ``info`` (read with ``.get``, so new
keys are harmless), ``env.unwrapped.metrics``, ``.catalogue``, ``.interface`` and ``.task``.
"""
from __future__ import annotations

import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

MAX_RECORDED_OBS = 20000


def jsonable(x: Any) -> Any:
    """Actions and info values as JSON data (numpy scalars and arrays included)."""
    if isinstance(x, (str, bool, int, float)) or x is None:
        return x
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if hasattr(x, "tolist"):
        return x.tolist()
    if hasattr(x, "item"):
        return x.item()
    return repr(x)


@dataclass
class EpisodeRecord:
    """One episode; :meth:`to_dict` is the JSON line ``netarena-gym eval`` writes."""

    key: str | None = None
    env: str | None = None
    level: Any = None
    seed: int | None = None
    agent: str = ""
    task: str = ""
    interface: str | None = None
    backend: str | None = None
    max_steps: int | None = None
    scenario: dict | None = None
    category: str | None = None
    initial_observation: str | None = None
    trajectory: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    correct: bool = False
    safe: bool = True
    safe_compat: bool = True
    steps: int = 0
    total_reward: float = 0.0
    reward_components: dict = field(default_factory=dict)
    agent_seconds: float = 0.0
    env_seconds: float = 0.0
    terminated: bool = False
    truncated: bool = False
    metrics: dict = field(default_factory=dict)
    wall_seconds: float = 0.0
    agent_stats: dict | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        if d["agent_stats"] is None:
            del d["agent_stats"]
        return d


def _clip(obs: Any, limit: int | None) -> str | None:
    if not isinstance(obs, str):
        return None
    return obs if limit is None or len(obs) <= limit else obs[:limit] + "\n[...]"


def _rendered(base, action) -> Any:
    """On the discrete interface, the text command a catalogue index stands for."""
    if getattr(base, "interface", "text") != "discrete":
        return None
    try:
        return dict(base.catalogue.render(int(action)))
    except Exception:  # masked or out of range: the env reports it as invalid
        return None


def _caught(e: BaseException, catch: bool, catch_interrupt: bool) -> bool:
    """Whether ``play_episode`` records ``e`` (else it is re-raised)."""
    if not catch or isinstance(e, GeneratorExit):
        return False
    return catch_interrupt or not isinstance(e, KeyboardInterrupt)


def _error(where: str, e: BaseException, step: int | None = None) -> dict:
    tb = traceback.format_exception(type(e), e, e.__traceback__)
    return {"where": where, "step": step, "type": type(e).__name__, "message": str(e)[:2000],
            "traceback": "".join(tb[-6:])[-4000:]}


def play_episode(env, agent, *, seed: int | None = None, options: dict | None = None,
                 record: bool = False, key: str | None = None, agent_name: str = "",
                 catch: bool = True, max_obs_chars: int | None = MAX_RECORDED_OBS,
                 catch_interrupt: bool = False,
                 on_reset: Callable[[EpisodeRecord], None] | None = None,
                 reset_raises: tuple[type[BaseException], ...] = ()) -> EpisodeRecord:
    """Play one episode of ``agent`` in ``env`` (a Gymnasium env, wrapped or not).

    ``seed`` and ``options`` go to ``env.reset``; agents with ``set_episode_seed`` get the
    seed first. ``record`` keeps the observations (each clipped to ``max_obs_chars``; None
    keeps them whole). ``key`` and ``agent_name`` label the record for eval runs.
    ``catch_interrupt`` records a ``KeyboardInterrupt`` too (see the module docstring).
    ``on_reset`` is called with the record once the env is reset (its scenario, category
    and step budget known), before the first call into the agent: eval's workers tell the
    grader, which records them for an episode whose worker times out or dies.
    ``reset_raises``: errors of ``env.reset`` that are raised, not recorded (eval's
    ``BackendUnavailable``: it would fail every episode, so it stops the run)."""
    base = env.unwrapped
    spec = getattr(env, "spec", None)
    rec = EpisodeRecord(key=key, env=getattr(spec, "id", None),
                        level=getattr(base, "level", None), seed=seed, agent=agent_name,
                        task=getattr(base, "task", ""),
                        interface=getattr(base, "interface", None),
                        backend=getattr(base, "backend_name", None),
                        max_steps=getattr(base, "max_steps", None))
    t_start = time.perf_counter()
    try:
        obs, info = env.reset(seed=seed, options=options)
    except BaseException as e:
        if not _caught(e, catch, catch_interrupt) or isinstance(e, reset_raises):
            raise
        rec.errors.append(_error("reset", e))
        rec.safe = rec.safe_compat = False
        rec.wall_seconds = time.perf_counter() - t_start
        return rec
    scenario = info.get("scenario") or {}
    rec.scenario = jsonable(scenario)
    rec.category = str((scenario.get("meta") or {}).get("category", "all"))
    if record:
        rec.initial_observation = _clip(obs, max_obs_chars)
    if on_reset is not None:
        on_reset(rec)
    metrics = getattr(base, "metrics", None)
    fatal = False  # the env failed: the episode is not correct, whatever the metrics say
    started = True
    try:
        if seed is not None and hasattr(agent, "set_episode_seed"):
            agent.set_episode_seed(seed)
        agent.reset()
    except BaseException as e:
        if not _caught(e, catch, catch_interrupt):
            raise
        rec.errors.append(_error("agent", e, step=0))
        started = False
    while started:
        t0 = time.perf_counter()
        try:
            action = agent.act(obs, info)
        except BaseException as e:
            if not _caught(e, catch, catch_interrupt):
                raise
            rec.agent_seconds += time.perf_counter() - t0
            rec.errors.append(_error("agent", e, step=len(rec.trajectory)))
            break
        dt = time.perf_counter() - t0
        rec.agent_seconds += dt
        if hasattr(metrics, "agent_seconds"):
            metrics.agent_seconds += dt
        try:
            obs, reward, terminated, truncated, info = env.step(action)
        except BaseException as e:
            if not _caught(e, catch, catch_interrupt):
                raise
            rec.errors.append(_error("env", e, step=len(rec.trajectory)))
            fatal = True
            break
        comps = {k: float(v) for k, v in (info.get("reward_components") or {}).items()}
        for k, v in comps.items():
            rec.reward_components[k] = rec.reward_components.get(k, 0.0) + v
        rec.total_reward += float(reward)
        step = {"action": jsonable(action), "observation": _clip(obs, max_obs_chars)
                if record else None,
                "reward": float(reward), "components": comps,
                "kind": info.get("command_kind"), "status": jsonable(info.get("command_status")),
                "loss_pct": jsonable(info.get("loss_pct")),
                "newly_broken": jsonable(info.get("newly_broken")), "agent_seconds": dt}
        cmd = _rendered(base, action)
        if cmd is not None:
            step["command"] = cmd
        call = getattr(agent, "last_call", None)
        if call:
            step["llm"] = dict(call)
        rec.trajectory.append(step)
        if terminated or truncated:
            rec.terminated, rec.truncated = bool(terminated), bool(truncated)
            break
    met = metrics.summary() if metrics is not None else {}
    rec.metrics = jsonable(met)
    # an agent or env that raised leaves the state unknown: not correct and not safe,
    # as for an episode whose worker timed out or died (eval's failed records)
    failed = fatal or bool(rec.errors)
    rec.correct = bool(met.get("correct", False)) and not failed
    rec.safe = bool(met.get("safe", True)) and not failed
    rec.safe_compat = bool(met.get("safe_compat", True)) and not failed
    rec.steps = int(met.get("steps", len(rec.trajectory)))
    rec.env_seconds = float(met.get("env_seconds", 0.0))
    if hasattr(agent, "episode_stats"):
        try:
            rec.agent_stats = jsonable(agent.episode_stats())
        except BaseException as e:
            if not _caught(e, catch, catch_interrupt):
                raise
            rec.errors.append(_error("agent", e, step=len(rec.trajectory)))
            rec.correct = rec.safe = rec.safe_compat = False
    rec.wall_seconds = time.perf_counter() - t_start
    return rec
