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

Curriculum mode (issue 15's target: >= 50% on routing L3 within 2,000,000 steps)::

    python benchmarks/bench_ppo.py --curriculum-l3 --timesteps 2000000   # the full budget
    python benchmarks/bench_ppo.py --curriculum-l3 --timesteps 150000    # what fits a CPU slot

trains on level-3-sized networks (``topology`` of L3 for every level) with the level mix
``1`` until ``--stages``' first step (20,000), ``1:0.3,2:0.7`` until its second (60,000),
then ``1:0.1,2:0.3,3:0.6`` (:mod:`netarena_gym.train.curriculum`), with the dense
``progress`` shaping weight ``--progress-shaping`` (0.5) and the per-fault shaping
``--fault-shaping`` (0.1, :class:`~netarena_gym.train.curriculum.FaultShaping`), the
slot policy (``--policy slots``, :mod:`netarena_gym.train.ppo_slots`), and evaluates on
level 3; ``--baseline`` also trains on L3 alone with the same budget, policy and shaping
for comparison. ``--time-limit`` ends training early (the curve and the final evaluation
are then of the steps reached); every curve point is also written to
``OUT/partial.json`` as it comes.
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
L3_TARGET = (ROUTING, 3, 2_000_000, 0.50)


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
    p.add_argument("--curriculum-l3", action="store_true",
                   help="the level-3 curriculum mode (see the module docstring)")
    p.add_argument("--progress-shaping", type=float, default=None,
                   help="the reward's progress weight (curriculum mode default: 0.5)")
    p.add_argument("--baseline", action="store_true",
                   help="curriculum mode: also train on L3 alone for comparison")
    p.add_argument("--policy", choices=("mlp", "slots"), default=None,
                   help="the policy network (default: mlp; curriculum mode: slots)")
    p.add_argument("--fault-shaping", type=float, default=None,
                   help="FaultShaping weight, full observability only (default: 0; "
                        "curriculum mode: 0.1)")
    p.add_argument("--stages", default="20000,60000",
                   help="curriculum mode: the steps where the 2nd and 3rd stage start")
    p.add_argument("--time-limit", type=float, default=None,
                   help="seconds after which each run's training stops early")
    a = p.parse_args(argv)
    if a.curriculum_l3:
        a.levels = "3"
        if a.configs == DEFAULT_CONFIGS:
            a.configs = "full"
        if a.progress_shaping is None:
            a.progress_shaping = 0.5
        a.policy = a.policy or "slots"
        if a.fault_shaping is None:
            a.fault_shaping = 0.1
    a.policy = a.policy or "mlp"
    a.fault_shaping = a.fault_shaping or 0.0
    return a


def l3_curriculum(stages: str = "20000,60000") -> list[str]:
    """The curriculum-mode stages, the 2nd and 3rd starting at ``stages``' steps."""
    second, third = (int(x) for x in stages.split(","))
    return ["0=1", f"{second}=1:0.3,2:0.7", f"{third}=1:0.1,2:0.3,3:0.6"]


def settings(cfg: dict, a, *, curriculum: bool) -> tuple[dict, object]:
    """``(env_kwargs, curriculum)`` of one run."""
    from netarena_gym.routing.generator import level_config
    from netarena_gym.train.curriculum import parse_curriculum
    kw = dict(cfg["env_kwargs"])
    if a.progress_shaping is not None:
        kw["reward"] = {"progress": a.progress_shaping}
    if not a.curriculum_l3:
        return kw, None
    c3 = level_config(3)
    kw["topology"] = {"routers": list(c3.routers), "subnets": list(c3.subnets),
                      "hosts": list(c3.hosts)}
    return kw, parse_curriculum(l3_curriculum(a.stages)) if curriculum else None


def supports(env_id: str, level, cfg: dict) -> bool:
    try:
        e = gym.make(env_id, level=level, interface="discrete", **cfg["env_kwargs"])
    except (TypeError, ValueError):
        return False
    ok = all(k in e.observation_space.spaces for k in cfg["drop"])
    e.close()
    return ok


def run_one(env_id, level, name, cfg, a, *, curriculum: bool = False) -> dict:
    from netarena_gym.train.ppo import PolicyAgent, evaluate, train, write_curve
    t0 = time.perf_counter()
    env_kwargs, cur = settings(cfg, a, curriculum=curriculum)
    if a.curriculum_l3:
        name = f"{name}, {'curriculum' if curriculum else 'no curriculum'}"
    if a.policy != "mlp":
        name = f"{name}, {a.policy}"
    out = Path(a.out) / f"{env_id}-L{level}-{name}".replace(", ", "-").replace(" ", "_")
    out.mkdir(parents=True, exist_ok=True)
    seen: list[dict] = []

    def progress(row):
        ci = row.get("eval_ci95")
        ci = f" [{100 * ci[0]:.0f}, {100 * ci[1]:.0f}]" if ci else ""
        print(f"  {env_id} L{level} {name}: {row['timesteps']:>7d} steps "
              f"{row['wall_seconds']:7.1f} s  correct {row['eval_correctness']:.3f}{ci}",
              flush=True)
        seen.append(row)
        (out / "partial.json").write_text(json.dumps({"config": name, "curve": seen}, indent=1))

    model, rows = train(algo="maskable_ppo", env_id=env_id, level=level,
                        timesteps=a.timesteps, n_envs=a.n_envs, seed=a.seed,
                        env_kwargs=env_kwargs or None, history=cfg["history"],
                        drop=cfg["drop"], curriculum=cur,
                        eval_every=a.eval_every, eval_episodes=a.eval_episodes,
                        eval_seed=a.eval_seed, on_record=progress, policy=a.policy,
                        fault_shaping=a.fault_shaping, stop_after_seconds=a.time_limit)
    total = time.perf_counter() - t0
    model.save(out / "policy.zip")
    write_curve(rows, out, title=f"MaskablePPO {env_id} L{level} ({name})")
    final = evaluate(env_id, PolicyAgent(model), level=level, episodes=a.final_episodes,
                     seed=a.eval_seed, env_kwargs=env_kwargs or None)
    reach = next((r for r in rows if r["eval_correctness"] >= 0.9), None)
    train_s = rows[-1]["wall_seconds"]
    return {"env": env_id, "level": level, "config": name,
            "timesteps": int(model.num_timesteps), "curve": rows,
            "steps_to_90": reach["timesteps"] if reach else None,
            "seconds_to_90": reach["wall_seconds"] if reach else None,
            "final_correctness": final["correctness"],
            "final_ci95": final["correctness_ci95"], "final_safety": final["safety"],
            "final_mean_steps": final["mean_steps"], "final_episodes": final["episodes"],
            "final_mean_cost": final["mean_cost"], "seed": a.seed, "eval_seed": a.eval_seed,
            "progress_shaping": a.progress_shaping, "fault_shaping": a.fault_shaping,
            "policy": a.policy, "n_envs": a.n_envs, "budget": a.timesteps,
            "eval_episodes": a.eval_episodes, "time_limit": a.time_limit,
            "curriculum": cur.to_list() if cur is not None else None,
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
                runs = [True, False] if a.curriculum_l3 and a.baseline else [a.curriculum_l3]
                for cur in runs:
                    results.append(run_one(env_id, level, name, cfg, a, curriculum=cur))
                    out = Path(a.out)
                    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
                    (out / "results.md").write_text(table(results) + "\n")
    print(table(results))
    env_id, level, budget, goal = L3_TARGET if a.curriculum_l3 else TARGET
    hit = [r for r in results if (r["env"], r["level"]) == (env_id, level)
           and any(c["eval_correctness"] >= goal and c["timesteps"] <= budget
                   for c in r["curve"])]
    tried = [r for r in results if (r["env"], r["level"]) == (env_id, level)]
    if tried:
        best = max(tried, key=lambda r: r["final_correctness"])
        print(f"target {env_id} L{level} >= {goal:.0%} within {budget} steps: "
              f"{'MET' if hit else 'NOT MET'} (best final {best['final_correctness']:.1%}, "
              f"setting {best['config']}, {best['timesteps']:,} steps run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
