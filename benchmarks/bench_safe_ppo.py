#!/usr/bin/env python
"""Safety as a cost: MaskablePPO with the env's fixed safety penalty, without it, and
Lagrangian PPO (a learned multiplier on ``info["cost"]`` with an episode cost limit), on
routing levels 2 and 3: correctness against safety and cost.

    python benchmarks/bench_safe_ppo.py --quick        # 40k steps per run (CPU, ~15 min)
    python benchmarks/bench_safe_ppo.py --timesteps 500000 --levels 2,3

Variants (``--variants``):

* ``ppo``: the env's default reward (``safety`` weight -1 x the fraction of pairs a step
  breaks);
* ``unconstrained``: ``safety`` weight 0, no cost signal at all;
* ``lagrangian``: ``safety`` weight 0, reward minus ``lambda`` x ``info["cost"]`` with
  ``lambda`` learned against ``--cost-limit`` (:mod:`netarena_gym.train.lagrangian`).

Observation: ``observability="full"`` without the reachability matrix (the setting that
learns fastest, see bench_ppo.py). Each run is evaluated deterministically on
``--final-episodes`` episodes (seeds ``--eval-seed + i``) and reports correctness and
safety with Wilson 95% intervals and the mean episode cost; the training side reports the
mean training-episode cost and correctness of its last rollouts (from ``progress.csv``;
the stochastic policy that training runs, where unsafe actions show). Writes
``OUT/results.json`` (last line of stdout: the same JSON) and ``OUT/results.md``.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

ROUTING = "NetArena-Routing-v0"
OBS = {"env_kwargs": {"observability": "full"}, "drop": ("reachability",), "history": False}
VARIANTS = ("ppo", "unconstrained", "lagrangian")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default=ROUTING)
    p.add_argument("--levels", default="2,3")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--timesteps", type=int, default=200_000)
    p.add_argument("--quick", action="store_true", help="40k steps, 100 final episodes")
    p.add_argument("--cost-limit", type=float, default=1.0)
    p.add_argument("--lagrange-lr", type=float, default=0.01)
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--eval-every", type=int, default=20_000)
    p.add_argument("--eval-episodes", type=int, default=50)
    p.add_argument("--final-episodes", type=int, default=200)
    p.add_argument("--eval-seed", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/bench_safe_ppo")
    a = p.parse_args(argv)
    if a.quick:
        a.timesteps, a.final_episodes = 40_000, 100
    return a


def training_tail(progress_csv: Path, rows: int = 10) -> dict:
    """Mean training-episode cost, correctness and safety over the last ``rows`` logged
    rollouts (stochastic policy)."""
    recs = [r for r in csv.DictReader(open(progress_csv)) if r.get("cost/episode")]
    tail = recs[-rows:]

    def mean(k):
        return sum(float(r[k]) for r in tail) / len(tail) if tail else None
    out = {"train_cost": mean("cost/episode"), "train_correct": mean("episode/correct"),
           "train_safe": mean("episode/safe")}
    if tail and tail[-1].get("cost/lambda"):
        out["lambda"] = float(tail[-1]["cost/lambda"])
    return out


def run_one(level: int, variant: str, a) -> dict:
    from netarena_gym.train.ppo import PolicyAgent, evaluate, train
    env_kwargs = dict(OBS["env_kwargs"])
    if variant != "ppo":
        env_kwargs["reward"] = {"safety": 0.0}
    lag = ({"cost_limit": a.cost_limit, "lr": a.lagrange_lr} if variant == "lagrangian"
           else None)
    out = Path(a.out) / f"L{level}-{variant}"
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    model, rows = train(env_id=a.env, level=level, timesteps=a.timesteps, n_envs=a.n_envs,
                        seed=a.seed, env_kwargs=env_kwargs, history=OBS["history"],
                        drop=OBS["drop"], eval_every=a.eval_every,
                        eval_episodes=a.eval_episodes, eval_seed=a.eval_seed, log_dir=out,
                        lagrangian=lag,
                        on_record=lambda r: print(f"  L{level} {variant}: {r['timesteps']:>7d} "
                                                  f"steps  correct {r['eval_correctness']:.3f}  "
                                                  f"cost {r['eval_mean_cost']:.2f}", flush=True))
    final = evaluate(a.env, PolicyAgent(model), level=level, episodes=a.final_episodes,
                     seed=a.eval_seed, env_kwargs=env_kwargs)
    return {"env": a.env, "level": level, "variant": variant, "timesteps": int(model.num_timesteps),
            "seed": a.seed, "eval_seed": a.eval_seed, "episodes": final["episodes"],
            "correctness": final["correctness"], "correctness_ci95": final["correctness_ci95"],
            "safety": final["safety"], "safety_ci95": final["safety_ci95"],
            "mean_cost": final["mean_cost"], "mean_steps": final["mean_steps"],
            "cost_limit": a.cost_limit if lag else None, **training_tail(out / "progress.csv"),
            "curve": rows, "seconds": round(time.perf_counter() - t0, 1)}


def table(results: list[dict]) -> str:
    head = ("| level | variant | steps | correctness [95% CI] | safety [95% CI] | mean cost "
            "(eval) | train cost | train correct | lambda |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        c, s = r["correctness_ci95"], r["safety_ci95"]
        lam = f"{r['lambda']:.3f}" if r.get("lambda") is not None else "-"
        lines.append(f"| {r['level']} | {r['variant']} | {r['timesteps']:,} | "
                     f"{100 * r['correctness']:.1f}% [{100 * c[0]:.0f}, {100 * c[1]:.0f}] | "
                     f"{100 * r['safety']:.1f}% [{100 * s[0]:.0f}, {100 * s[1]:.0f}] | "
                     f"{r['mean_cost']:.2f} | {r['train_cost']:.2f} | "
                     f"{100 * r['train_correct']:.0f}% | {lam} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    a = parse_args(argv)
    results = []
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    for level in [int(x) for x in a.levels.split(",")]:
        for variant in a.variants.split(","):
            if variant not in VARIANTS:
                raise SystemExit(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
            results.append(run_one(level, variant, a))
            (out / "results.json").write_text(json.dumps(
                {"benchmark": "safe_ppo", "args": vars(a), "results": results}, indent=1) + "\n")
            (out / "results.md").write_text(table(results) + "\n")
    print(table(results))
    print(json.dumps({"benchmark": "safe_ppo", "args": vars(a),
                      "results": [{k: v for k, v in r.items() if k != "curve"}
                                  for r in results]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
