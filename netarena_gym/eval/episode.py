"""Play one episode and record everything about it as one JSON-serialisable dict.

The record holds the scenario, every action and observation, the reward components, the
metrics (correctness, per-pair and upstream-compatible safety, steps, seconds), what the
agent reported about each decision (an LLM's latency and token counts) and any error. An
agent or env that raises ends the episode with the error recorded: an evaluation run never
dies because one episode did.
"""
from __future__ import annotations

import time
import traceback
from typing import Any

import gymnasium as gym

from netarena_gym.eval.spec import EvalSpec, Job

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


def _obs_text(obs: Any) -> str | None:
    if isinstance(obs, str):
        return obs if len(obs) <= MAX_RECORDED_OBS else obs[:MAX_RECORDED_OBS] + "\n[...]"
    return None


def _rendered(base, action) -> Any:
    """On the discrete interface, the text command a catalogue index stands for."""
    if getattr(base, "interface", "text") != "discrete":
        return None
    try:
        return dict(base.catalogue.render(int(action)))
    except Exception:  # masked or out of range: the env reports it as invalid
        return None


def play(env, agent, job: Job, *, agent_name: str = "") -> dict:
    """Run ``agent`` on the episode of ``job`` in ``env`` and return its record."""
    base = env.unwrapped
    rec: dict[str, Any] = {
        "key": job.key, "env": job.env, "level": job.level, "seed": job.seed,
        "agent": agent_name, "task": getattr(base, "task", ""),
        "interface": getattr(base, "interface", None),
        "backend": getattr(base, "backend_name", None),
        "max_steps": getattr(base, "max_steps", None),
        "scenario": None, "category": None, "initial_observation": None,
        "trajectory": [], "errors": [],
        "correct": False, "safe": True, "safe_compat": True, "steps": 0,
        "total_reward": 0.0, "reward_components": {}, "agent_seconds": 0.0,
        "env_seconds": 0.0, "terminated": False, "truncated": False, "metrics": {},
    }
    t_start = time.perf_counter()
    try:
        obs, info = env.reset(seed=job.seed)
    except Exception as e:
        rec["errors"].append(_error("reset", e))
        rec["safe"] = rec["safe_compat"] = False
        rec["wall_seconds"] = time.perf_counter() - t_start
        return rec
    scenario = info.get("scenario") or {}
    rec["scenario"] = scenario
    rec["category"] = str((scenario.get("meta") or {}).get("category", "all"))
    rec["initial_observation"] = _obs_text(obs)
    if hasattr(agent, "set_episode_seed"):
        agent.set_episode_seed(job.seed)
    agent.reset()
    comps_total: dict[str, float] = {}
    agent_seconds = 0.0
    while True:
        t0 = time.perf_counter()
        try:
            action = agent.act(obs, info)
        except Exception as e:
            agent_seconds += time.perf_counter() - t0
            rec["errors"].append(_error("agent", e, step=len(rec["trajectory"])))
            break
        dt = time.perf_counter() - t0
        agent_seconds += dt
        if hasattr(base.metrics, "agent_seconds"):
            base.metrics.agent_seconds += dt
        try:
            obs, reward, terminated, truncated, info = env.step(action)
        except Exception as e:
            rec["errors"].append(_error("env", e, step=len(rec["trajectory"])))
            break
        comps = {k: float(v) for k, v in (info.get("reward_components") or {}).items()}
        for k, v in comps.items():
            comps_total[k] = comps_total.get(k, 0.0) + v
        rec["total_reward"] += float(reward)
        step = {"action": jsonable(action), "observation": _obs_text(obs),
                "reward": float(reward), "components": comps,
                "kind": info.get("command_kind"), "status": info.get("command_status"),
                "loss_pct": jsonable(info.get("loss_pct")),
                "newly_broken": jsonable(info.get("newly_broken")),
                "agent_seconds": dt}
        cmd = _rendered(base, action)
        if cmd is not None:
            step["command"] = cmd
        call = getattr(agent, "last_call", None)
        if call:
            step["llm"] = dict(call)
        rec["trajectory"].append(step)
        if terminated or truncated:
            rec["terminated"], rec["truncated"] = bool(terminated), bool(truncated)
            break
    met = base.metrics.summary() if base.metrics is not None else {}
    rec["metrics"] = jsonable(met)
    rec["correct"] = bool(met.get("correct", False)) and not _fatal(rec)
    rec["safe"] = bool(met.get("safe", True))
    rec["safe_compat"] = bool(met.get("safe_compat", True))
    rec["steps"] = int(met.get("steps", len(rec["trajectory"])))
    rec["agent_seconds"] = agent_seconds
    rec["env_seconds"] = float(met.get("env_seconds", 0.0))
    rec["reward_components"] = comps_total
    if hasattr(agent, "episode_stats"):
        rec["agent_stats"] = jsonable(agent.episode_stats())
    rec["wall_seconds"] = time.perf_counter() - t_start
    return rec


def _fatal(rec: dict) -> bool:
    return any(e["where"] in ("reset", "env") for e in rec["errors"])


def _error(where: str, e: BaseException, step: int | None = None) -> dict:
    tb = traceback.format_exception(type(e), e, e.__traceback__)
    return {"where": where, "step": step, "type": type(e).__name__, "message": str(e)[:2000],
            "traceback": "".join(tb[-6:])[-4000:]}


class EpisodeWorker:
    """Owns one env (and one agent) per level and plays jobs of one :class:`EvalSpec`.

    The same class serves the sequential loop, each process of ``--workers`` and each Ray
    actor, so every path produces the same records."""

    def __init__(self, spec: EvalSpec | dict):
        self.spec = spec if isinstance(spec, EvalSpec) else EvalSpec.from_dict(spec)
        self._envs: dict[Any, Any] = {}
        self._agents: dict[Any, Any] = {}

    def _get(self, level):
        if level not in self._envs:
            from netarena_gym.agents import make_agent
            env = gym.make(self.spec.env, **self.spec.env_kwargs(level))
            self._envs[level] = env
            self._agents[level] = make_agent(self.spec.agent, env, seed=self.spec.seed,
                                             options=self.spec.agent_options)
        return self._envs[level], self._agents[level]

    def run(self, job: Job | tuple | list) -> dict:
        if not isinstance(job, Job):
            job = Job(*job)
        env, agent = self._get(job.level)  # a setup error stops the run: nothing to record
        return play(env, agent, job, agent_name=self.spec.agent)

    def close(self) -> None:
        for level, env in self._envs.items():
            agent = self._agents.get(level)
            if hasattr(agent, "close"):
                try:
                    agent.close()
                except Exception:
                    pass
            env.close()
        self._envs.clear()
        self._agents.clear()
