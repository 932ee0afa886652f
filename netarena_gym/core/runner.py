"""The episode runner used by tests, eval, benchmarks and training alike."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from netarena_gym.core.stats import wilson_interval


@dataclass
class EpisodeResult:
    scenario: dict
    correct: bool
    safe: bool
    safe_compat: bool
    steps: int
    total_reward: float
    agent_seconds: float
    env_seconds: float
    metrics: dict
    trajectory: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"scenario": self.scenario, "correct": self.correct, "safe": self.safe,
                "safe_compat": self.safe_compat, "steps": self.steps,
                "total_reward": self.total_reward, "agent_seconds": self.agent_seconds,
                "env_seconds": self.env_seconds, "metrics": self.metrics,
                "trajectory": self.trajectory}


def run_episode(env, agent, *, seed: int | None = None, options: dict | None = None,
                record: bool = False) -> EpisodeResult:
    """Play one episode of ``agent`` in ``env`` (a Gymnasium env, wrapped or not)."""
    obs, info = env.reset(seed=seed, options=options)
    scenario = info.get("scenario", {})
    agent.reset()
    base = env.unwrapped
    total = 0.0
    traj: list[dict[str, Any]] = []
    while True:
        t0 = time.perf_counter()
        action = agent.act(obs, info)
        base.metrics.agent_seconds += time.perf_counter() - t0
        obs, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        if record:
            traj.append({"action": action if not hasattr(action, "item") else int(action),
                         "reward": float(reward), "components": info.get("reward_components"),
                         "kind": info.get("command_kind"), "loss_pct": info.get("loss_pct"),
                         "observation": obs if isinstance(obs, str) else None})
        if terminated or truncated:
            break
    met = base.metrics.summary()
    return EpisodeResult(scenario=scenario, correct=met["correct"], safe=met["safe"],
                         safe_compat=met["safe_compat"], steps=met["steps"], total_reward=total,
                         agent_seconds=met["agent_seconds"], env_seconds=met["env_seconds"],
                         metrics=met, trajectory=traj)


def summarize(results: list[EpisodeResult]) -> dict:
    """Correctness, safety and latency with Wilson 95% intervals, overall and by category."""
    def block(rs: list[EpisodeResult]) -> dict:
        n = len(rs)
        c = sum(r.correct for r in rs)
        s = sum(r.safe for r in rs)
        sc = sum(r.safe_compat for r in rs)
        return {
            "episodes": n,
            "correctness": c / n if n else 0.0,
            "correctness_ci95": list(wilson_interval(c, n)),
            "safety": s / n if n else 0.0,
            "safety_ci95": list(wilson_interval(s, n)),
            "safety_compat": sc / n if n else 0.0,
            "mean_steps": sum(r.steps for r in rs) / n if n else 0.0,
            "mean_agent_seconds": sum(r.agent_seconds for r in rs) / n if n else 0.0,
            "mean_env_seconds": sum(r.env_seconds for r in rs) / n if n else 0.0,
            "mean_reward": sum(r.total_reward for r in rs) / n if n else 0.0,
        }
    out = block(results)
    cats: dict[str, list[EpisodeResult]] = {}
    for r in results:
        cats.setdefault(str(r.scenario.get("meta", {}).get("category", "all")), []).append(r)
    out["by_category"] = {k: block(v) for k, v in sorted(cats.items())}
    return out
