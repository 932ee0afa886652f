"""Throughput of ``netarena-gym eval --agent expert`` per env, with 1 and 2 worker processes,
and the overhead of the evaluation harness (recording every action and observation, reward
components, metrics) over bare env stepping with the same expert.

    python benchmarks/bench_eval.py [--episodes 200] [--level 1] [--json]

"bare": reset + expert + step, nothing kept. "harness": the evaluator's episode recorder
(one full JSON-able record per episode) in one process. "eval wN": the whole ``evaluate``
call (records written to a run directory, summary) with N workers, process start included.
Each figure is measured in a fresh interpreter (no cache warmed by another measurement).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import gymnasium as gym

import netarena_gym
from netarena_gym.agents.experts import make_expert
from netarena_gym.eval import EvalSpec, evaluate
from netarena_gym.eval.executors import EpisodeWorker
from netarena_gym.eval.spec import Job


def bare(env_id: str, level, episodes: int, seed: int = 0) -> float:
    env = gym.make(env_id, **EvalSpec(env_id, levels=(level,)).env_kwargs(level))
    expert = make_expert(env)
    t0 = time.perf_counter()
    for i in range(episodes):
        obs, info = env.reset(seed=seed + i)
        expert.reset()
        while True:
            obs, _, term, trunc, info = env.step(expert.act(obs, info))
            if term or trunc:
                break
    dt = time.perf_counter() - t0
    env.close()
    return episodes / dt


def harness(env_id: str, level, episodes: int, seed: int = 0) -> float:
    spec = EvalSpec(env_id, levels=(level,), episodes=episodes, seed=seed)
    w = EpisodeWorker(spec)
    w.run(Job(env_id, level, seed + episodes))  # build env and agent outside the timing
    t0 = time.perf_counter()
    for i in range(episodes):
        json.dumps(w.run(Job(env_id, level, seed + i)))
    dt = time.perf_counter() - t0
    w.close()
    return episodes / dt


def full_eval(env_id: str, level, episodes: int, workers: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as d:
        spec = EvalSpec(env_id, levels=(level,), episodes=episodes)
        t0 = time.perf_counter()
        s = evaluate(spec, out=d, workers=workers, progress=False)
        dt = time.perf_counter() - t0
    return episodes / dt, s["correctness"]


def one(kind: str, env_id: str, level, episodes: int) -> dict:
    """Run one measurement in a fresh interpreter, so no cache is warmed by another."""
    cmd = [sys.executable, __file__, "--one", kind, "--env", env_id, "--level", str(level),
           "--episodes", str(episodes)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(res.stdout)


def _measure(kind: str, env_id: str, level, episodes: int) -> dict:
    if kind == "bare":
        return {"eps": bare(env_id, level, episodes)}
    if kind == "harness":
        return {"eps": harness(env_id, level, episodes)}
    eps, corr = full_eval(env_id, level, episodes, int(kind[1:]))
    return {"eps": eps, "correctness": corr}


def _level(v):
    return int(v) if str(v).isdigit() else v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--level", default=None, help="default: each env's first level")
    ap.add_argument("--env", default=None, help="default: every registered env")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(_measure(a.one, a.env, _level(a.level), a.episodes)))
        return
    rows = []
    for env_id in [a.env] if a.env else sorted(netarena_gym.ENV_IDS):
        probe = gym.make(env_id)
        level = _level(a.level) if a.level is not None else probe.unwrapped.levels[0]
        probe.close()
        m = {k: one(k, env_id, level, a.episodes) for k in ("bare", "harness", "w1", "w2")}
        b, h = m["bare"]["eps"], m["harness"]["eps"]
        rows.append({"env": env_id, "level": level, "episodes": a.episodes,
                     "bare_eps": b, "harness_eps": h, "harness_overhead_pct": 100 * (b / h - 1),
                     "eval_w1_eps": m["w1"]["eps"], "eval_w2_eps": m["w2"]["eps"],
                     "speedup_w2": m["w2"]["eps"] / m["w1"]["eps"],
                     "correctness": [m["w1"]["correctness"], m["w2"]["correctness"]],
                     "cpus": os.cpu_count()})
    if a.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'env':34s} {'lvl':>6s} {'bare ep/s':>10s} {'harness':>10s} {'overhead':>9s} "
          f"{'eval w1':>9s} {'eval w2':>9s} {'w2/w1':>6s}")
    for r in rows:
        print(f"{r['env']:34s} {str(r['level']):>6s} {r['bare_eps']:10.1f} "
              f"{r['harness_eps']:10.1f} {r['harness_overhead_pct']:8.1f}% "
              f"{r['eval_w1_eps']:9.1f} {r['eval_w2_eps']:9.1f} {r['speedup_w2']:6.2f}")


if __name__ == "__main__":
    main()
