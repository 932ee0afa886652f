#!/usr/bin/env python
"""MaskablePPO baselines on the discrete interfaces: correctness vs environment steps and
wall time, per task, level and observation setting.

    python benchmarks/bench_ppo.py                       # routing L1-L3, both settings
    python benchmarks/bench_ppo.py --levels 1 --configs full --timesteps 200000

Target (issue 7): MaskablePPO reaches >= 90% correctness on routing level 1 (simulator)
within 200,000 steps. Settings (``--configs``):

* ``full``: ``observability="full"`` (features refreshed every step), without the
  node x node ``reachability`` matrix (it slows learning down; the features locate the
  faults), no history (fresh features make it unnecessary);
* ``partial``: the env's default ``observability="partial"`` (a router's features are
  what its last ``inspect`` showed), without ``reachability``, plus the agent's memory of
  its own actions (``taken``, ``last``: it must learn to inspect again after a repair);
* ``raw``: the env's default observation as it is (partial, with ``reachability``, no
  memory).

Every learning-curve point is a deterministic evaluation on the same seeds
(``--eval-seed + i``, as ``netarena-gym eval``); the final evaluation uses
``--final-episodes``. Wall time is training only (curve evaluations excluded). Other
registered tasks with a discrete interface are benchmarked with ``raw`` (their own
default observation) when ``--envs`` names them (``all``: every registered env).
Writes ``OUT/results.json`` and ``OUT/results.md`` and prints the table.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import gymnasium as gym

import netarena_gym

ROUTING = "NetArena-Routing-v0"
CONFIGS = {
    "full": {"env_kwargs": {"observability": "full"}, "drop": ("reachability",),
             "history": False},
    "partial": {"env_kwargs": {}, "drop": ("reachability",), "history": True},
    "raw": {"env_kwargs": {}, "drop": (), "history": False},
}
DEFAULT_CONFIGS = "full,partial,raw"
TARGET = (ROUTING, 1, 200_000, 0.90)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--envs", default=ROUTING, help="comma-separated env ids, or 'all'")
    p.add_argument("--levels", default="1,2,3")
    p.add_argument("--configs", default=DEFAULT_CONFIGS)
    p.add_argument("--timesteps", type=int, default=200_000)
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--eval-every", type=int, default=25_000)
    p.add_argument("--eval-episodes", type=int, default=100)
    p.add_argument("--final-episodes", type=int, default=200)
    p.add_argument("--eval-seed", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/bench_ppo")
    return p.parse_args(argv)


def supports(env_id: str, level, cfg: dict) -> bool:
    try:
        e = gym.make(env_id, level=level, interface="discrete", **cfg["env_kwargs"])
    except (TypeError, ValueError):
        return False
    ok = all(k in e.observation_space.spaces for k in cfg["drop"])
    e.close()
    return ok


def run_one(env_id, level, name, cfg, a) -> dict:
    from netarena_gym.train.ppo import PolicyAgent, evaluate, train, write_curve
    t0 = time.perf_counter()

    def progress(row):
        print(f"  {env_id} L{level} {name}: {row['timesteps']:>7d} steps "
              f"{row['wall_seconds']:7.1f} s  correct {row['eval_correctness']:.3f}", flush=True)

    model, rows = train(algo="maskable_ppo", env_id=env_id, level=level,
                        timesteps=a.timesteps, n_envs=a.n_envs, seed=a.seed,
                        env_kwargs=cfg["env_kwargs"] or None, history=cfg["history"],
                        drop=cfg["drop"],
                        eval_every=a.eval_every, eval_episodes=a.eval_episodes,
                        eval_seed=a.eval_seed, on_record=progress)
    total = time.perf_counter() - t0
    out = Path(a.out) / f"{env_id}-L{level}-{name}"
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "policy.zip")
    write_curve(rows, out, title=f"MaskablePPO {env_id} L{level} ({name})")
    final = evaluate(env_id, PolicyAgent(model), level=level, episodes=a.final_episodes,
                     seed=a.eval_seed, env_kwargs=cfg["env_kwargs"] or None)
    reach = next((r for r in rows if r["eval_correctness"] >= 0.9), None)
    train_s = rows[-1]["wall_seconds"]
    return {"env": env_id, "level": level, "config": name,
            "timesteps": int(model.num_timesteps), "curve": rows,
            "steps_to_90": reach["timesteps"] if reach else None,
            "seconds_to_90": reach["wall_seconds"] if reach else None,
            "final_correctness": final["correctness"],
            "final_ci95": final["correctness_ci95"], "final_safety": final["safety"],
            "final_mean_steps": final["mean_steps"], "final_episodes": final["episodes"],
            "train_seconds": train_s, "steps_per_second": model.num_timesteps / max(train_s, 1e-9),
            "seconds_incl_evals": round(total, 1)}


def table(results: list[dict]) -> str:
    marks = sorted({r["timesteps"] for res in results for r in res["curve"]})
    marks = [m for m in marks if m % 50_000 == 0] or marks[-3:]
    head = ("| env | level | obs | " + " | ".join(f"@{m // 1000}k" for m in marks)
            + " | steps to 90% | final [95% CI] | safety | train s | steps/s |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for res in results:
        by = {r["timesteps"]: r["eval_correctness"] for r in res["curve"]}
        cells = [f"{100 * by[m]:.0f}%" if m in by else "" for m in marks]
        lo, hi = res["final_ci95"]
        lines.append(
            f"| {res['env'].replace('NetArena-', '')} | {res['level']} | {res['config']} | "
            + " | ".join(cells)
            + f" | {res['steps_to_90'] or '-'} | {100 * res['final_correctness']:.1f}% "
              f"[{100 * lo:.0f}, {100 * hi:.0f}] | {100 * res['final_safety']:.0f}% | "
              f"{res['train_seconds']:.0f} | {res['steps_per_second']:.0f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    a = parse_args(argv)
    envs = sorted(netarena_gym.ENV_IDS) if a.envs == "all" else a.envs.split(",")
    levels = [x if x == "compat" else int(x) for x in a.levels.split(",")]
    results = []
    for env_id in envs:
        for level in levels:
            for name in a.configs.split(","):
                cfg = CONFIGS[name]
                if env_id != ROUTING and name != "raw":
                    continue
                if not supports(env_id, level, cfg):
                    print(f"skip {env_id} L{level} {name}: not supported")
                    continue
                results.append(run_one(env_id, level, name, cfg, a))
                out = Path(a.out)
                (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
                (out / "results.md").write_text(table(results) + "\n")
    print(table(results))
    env_id, level, budget, goal = TARGET
    hit = [r for r in results if (r["env"], r["level"]) == (env_id, level)
           and r["steps_to_90"] is not None and r["steps_to_90"] <= budget]
    tried = [r for r in results if (r["env"], r["level"]) == (env_id, level)]
    if tried:
        best = max(tried, key=lambda r: r["final_correctness"])
        print(f"target {env_id} L{level} >= {goal:.0%} within {budget} steps: "
              f"{'MET' if hit else 'NOT MET'} (best final {best['final_correctness']:.1%}, "
              f"setting {best['config']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
