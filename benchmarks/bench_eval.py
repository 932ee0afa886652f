"""Throughput of ``netarena-gym eval --agent expert`` per env, with 1 and 2 worker processes,
and the overhead of the evaluation harness (recording every action and observation, reward
components, metrics) over bare env stepping with the same expert.

    python benchmarks/bench_eval.py [--episodes 200] [--level 1] [--json]
    python benchmarks/bench_eval.py --ray-nodes 1 2 [--ray-cpus 1] [--env ID] [--episodes 40]

"bare": reset + expert + step, nothing kept. "harness": the evaluator's episode recorder
(one full JSON-able record per episode) in one process. "eval wN": the whole ``evaluate``
call (records written to a run directory, summary) with N workers, process start included.
Each figure is measured in a fresh interpreter (no cache warmed by another measurement).

``--ray-nodes``: episodes/s of ``netarena-gym eval --ray-address ADDRESS`` (the CLI as a
process, from its start to its exit: Ray connect and actor start included) on a local Ray
cluster of 1 node, then of 2 nodes, each started for the measurement by
``.ci/ray-cluster.sh`` in its own temp dir on its own free port (``--ray-cpus`` CPUs per
node; eval's default of one actor per cluster CPU) and stopped by PID after it. Also
reported: eval's own wall time (its summary's ``wall_seconds``: Ray connect and actor
start included, interpreter start not), the nodes the records name (``node_id``), and the
episodes/s of one actor from the records (episodes over the sum of their times).
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


def ray_cluster_eval(env_id: str, level, episodes: int, nodes: int, cpus: int) -> dict:
    """One measurement on a fresh local cluster of ``nodes`` nodes (see the module doc)."""
    from netarena_gym.serve.common import free_port

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = os.path.join(root, ".ci", "ray-cluster.sh")
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as d:
        env = {**os.environ, "NETARENA_RAY_DIR": os.path.join(d, "ray"),
               "NETARENA_RAY_PORT": str(free_port()), "NETARENA_RAY_NODES": str(nodes),
               "NETARENA_RAY_CPUS": str(cpus), "PYTHONPATH": root}
        started = subprocess.run(["bash", script, "start"], env=env, capture_output=True,
                                 text=True, timeout=300)
        try:
            if started.returncode:
                raise RuntimeError(f"the cluster did not start: {started.stderr[-2000:]}")
            for word in started.stdout.split():  # export NETARENA_RAY_ADDRESS=... RAY_AUTH_*=...
                k, sep, v = word.partition("=")
                if sep:
                    env[k] = v
            out = os.path.join(d, "run")
            cmd = [sys.executable, "-m", "netarena_gym.cli", "eval", "--env", env_id,
                   "--agent", "expert", "--level", str(level), "--episodes", str(episodes),
                   "--ray-address", env["NETARENA_RAY_ADDRESS"], "--out", out, "--quiet",
                   "--format", "json"]
            t0 = time.perf_counter()
            p = subprocess.run(cmd, env=env, cwd=root, check=True, capture_output=True,
                               text=True, timeout=900)
            dt = time.perf_counter() - t0
            summary = json.loads(p.stdout)
            with open(os.path.join(out, "episodes.jsonl")) as f:
                recs = [json.loads(line) for line in f]
        finally:
            subprocess.run(["bash", script, "stop"], env=env, capture_output=True, timeout=120)
    busy = sum(float(r["wall_seconds"]) for r in recs)
    return {"nodes": nodes, "cpus_per_node": cpus, "episodes": len(recs), "wall_s": dt,
            "eps": len(recs) / dt, "eval_wall_s": summary["wall_seconds"],
            "eval_eps": len(recs) / summary["wall_seconds"],
            "nodes_used": len({r.get("node_id") for r in recs}),
            "correctness": summary["correctness"], "actor_busy_s": busy,
            "actor_eps": len(recs) / busy if busy else None}


def _level(v):
    return int(v) if str(v).isdigit() else v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=200)
    ap.add_argument("--level", default=None, help="default: each env's first level")
    ap.add_argument("--env", default=None, help="default: every registered env")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--ray-nodes", type=int, nargs="+", default=None,
                    help="measure eval --ray-address on local clusters of these node counts")
    ap.add_argument("--ray-cpus", type=int, default=1, help="CPUs per Ray node")
    a = ap.parse_args()
    if a.ray_nodes:
        env_id = a.env or "NetArena-Routing-v0"
        level = _level(a.level) if a.level is not None else 1
        rows = [ray_cluster_eval(env_id, level, a.episodes, n, a.ray_cpus)
                for n in a.ray_nodes]
        if a.json:
            print(json.dumps(rows, indent=1))
            return
        print(f"{env_id} level {level}, expert, {a.episodes} episodes, "
              f"{a.ray_cpus} CPU(s) per node, {os.cpu_count()} cores on the machine")
        print(f"{'nodes':>5s} {'used':>5s} {'CLI s':>7s} {'CLI ep/s':>9s} {'eval s':>7s} "
              f"{'eval ep/s':>10s} {'1 actor ep/s':>13s} {'correct':>8s}")
        for r in rows:
            print(f"{r['nodes']:5d} {r['nodes_used']:5d} {r['wall_s']:7.1f} {r['eps']:9.2f} "
                  f"{r['eval_wall_s']:7.1f} {r['eval_eps']:10.2f} {r['actor_eps']:13.2f} "
                  f"{r['correctness']:8.2f}")
        return
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
