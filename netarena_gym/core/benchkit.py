"""Shared pieces of the ``benchmarks/bench_*.py`` scripts: speed targets
(``(">=" | "<=", value)`` per measurement), the report line they print, and the
measurements every task takes the same way (reset time, an agent's time per decision)."""
from __future__ import annotations

import json
import subprocess
import sys
import time

from netarena_gym.agents.episode import play_episode
from netarena_gym.errors import NetArenaError

Target = tuple[str, float]


def meets(value: float, target: Target) -> bool:
    op, bound = target
    return value >= bound if op == ">=" else value <= bound


def report_line(name: str, value: float | None, target: Target | None = None,
                width: int = 28, skipped: str = "skipped") -> str:
    """``name  value  target >= 5000  ok  ratio 1.23`` (``value=None``: ``skipped``)."""
    if value is None:
        return f"{name:{width}s} {skipped}"
    line = f"{name:{width}s} {value:12.3f}"
    if target is not None:
        line += (f"  target {target[0]} {target[1]}  {'ok' if meets(value, target) else 'MISSED'}"
                 f"  ratio {value / target[1]:.2f}")
    return line


def report(results: dict, targets: dict, **kw) -> str:
    return "\n".join(report_line(k, v, targets.get(k), **kw) for k, v in results.items())


FRESH_SEEDS = 1_000_000
"""First seed :func:`reset_ms` times: far from the small seeds that throughput runs and tests
play, so a reset timed in the same process is a new episode, not one a cache already holds."""


def reset_ms(env, n: int = 200, clock=time.perf_counter, warmup: int = 1) -> float:
    """Mean milliseconds of ``env.reset(seed=s)`` over ``n`` seeds never played before in a
    benchmark run (from :data:`FRESH_SEEDS`), after ``warmup`` untimed resets on the seeds
    just below them: what a process builds once and keeps for later episodes (a MALT
    topology's base graph, a fixed routing topology's pristine network and probes) is
    built there, as :func:`first_reset_ms` measures it, not spread over the timed resets.
    ``clock=time.process_time`` measures CPU time (steadier on a shared machine)."""
    for i in range(warmup, 0, -1):
        env.reset(seed=FRESH_SEEDS - i)
    t0 = clock()
    for i in range(n):
        env.reset(seed=FRESH_SEEDS + i)
    return 1000 * (clock() - t0) / n


_FIRST_RESET = """
import json, sys, time
import gymnasium as gym
import netarena_gym
env = gym.make(sys.argv[1], **json.loads(sys.argv[2]))
t0 = time.process_time()
env.reset(seed=int(sys.argv[3]))
print(1000 * (time.process_time() - t0))
"""


def first_reset_ms(env_id: str, kwargs: dict, seed: int = FRESH_SEEDS,
                   timeout_s: float = 300.0) -> float:
    """CPU milliseconds of the first ``reset`` of ``gym.make(env_id, **kwargs)`` in a fresh
    Python process (the package imported, the env made, nothing reset before): what a new
    worker pays once, including what later resets of the process reuse. ``kwargs`` must be
    plain JSON."""
    what = f"first reset of {env_id} {kwargs}"
    try:
        out = subprocess.run([sys.executable, "-c", _FIRST_RESET, env_id, json.dumps(kwargs),
                              str(seed)], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise NetArenaError(f"{what} took over {timeout_s:g} s") from None
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no error output"])[-1]
        raise NetArenaError(f"{what} failed: {last}")
    return float(out.stdout.split()[-1])


def decision_ms(env, agent, episodes: int = 100, clock=None) -> float:
    """Mean milliseconds an agent takes per decision over ``episodes`` episodes: the
    episode loop's wall-clock ``agent_seconds``, or with ``clock`` (e.g.
    ``time.process_time``) the agent's ``act`` timed on that clock. An episode that
    records an error (a missing sandbox, an agent that raised) raises
    :class:`~netarena_gym.errors.NetArenaError` with its message: the time of decisions
    that never ran is no figure."""
    secs = decisions = 0
    timed = agent if clock is None else _Timed(agent, clock)
    for i in range(episodes):
        r = play_episode(env, timed, seed=i)
        if r.errors:
            e = r.errors[0]
            raise NetArenaError(f"episode seed={i} failed in the {e['where']} at step "
                                f"{e['step']}: {e['type']}: {e['message']}")
        secs += r.agent_seconds if clock is None else 0.0
        decisions += r.steps
    if clock is not None:
        secs = timed.seconds
    return 1000 * secs / max(1, decisions)


class _Timed:
    """An agent whose ``act`` calls are timed on ``clock`` (everything else delegated)."""

    def __init__(self, agent, clock):
        self._agent, self._clock, self.seconds = agent, clock, 0.0

    def act(self, observation, info):
        t0 = self._clock()
        try:
            return self._agent.act(observation, info)
        finally:
            self.seconds += self._clock() - t0

    def __getattr__(self, name):
        return getattr(self._agent, name)
