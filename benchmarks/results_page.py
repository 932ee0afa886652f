#!/usr/bin/env python
"""Write ``docs/results.md`` from the benchmarks' JSON outputs (nothing is typed by hand).

    python benchmarks/results_page.py                      # reads benchmarks/results/
    python benchmarks/results_page.py --results DIR --out docs/results.md

Reads, from ``--results`` (each part is left out when its file is missing):

* ``ppo_*.json``: ``benchmarks/bench_ppo.py``'s ``results.json`` (PPO per task, level and
  observation setting, and its ``--curriculum-l3`` mode);
* ``safe_ppo*.json``: ``benchmarks/bench_safe_ppo.py``'s ``results.json`` (plain,
  unconstrained and Lagrangian PPO); several files are merged, later ones replacing a
  (level, variant) of earlier ones;
* ``sft_*.json``: ``netarena-gym train sft``'s ``summary.json``;
* ``grpo*.json``: the last line of ``benchmarks/bench_grpo_learning.py`` (``untrained``,
  ``trained``, ``trained_ci95``, ``seeds``, ...).

Copy a run's JSON there (``cp runs/bench_ppo/results.json benchmarks/results/ppo_l1.json``)
and rerun this script; ``tests/docs`` does not execute it.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def pct(x) -> str:
    return "-" if x is None else f"{100 * float(x):.1f}%"


def ci(pair) -> str:
    return "" if not pair else f" [{100 * pair[0]:.0f}, {100 * pair[1]:.0f}]"


def load(path: Path):
    return json.loads(path.read_text())


def ppo_section(files: list[Path]) -> list[str]:
    rows = [(f.name, r) for f in files for r in load(f)]
    if not rows:
        return []
    out = ["## PPO (MaskablePPO, discrete interface)", "",
           "Deterministic policy, final evaluation on the seeds `eval_seed + i`; Wilson 95% "
           "intervals. Source: `benchmarks/bench_ppo.py` (`" + "`, `".join(f.name for f in files)
           + "`).", "",
           "| task | level | setting | steps | correctness [95% CI] | safety | mean cost | "
           "episodes | train seed | eval seeds | steps/s |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows:
        setting = r["config"]
        if r.get("policy") and r["policy"] not in setting:
            setting += f", {r['policy']}"
        if r.get("progress_shaping"):
            setting += f", progress {r['progress_shaping']:g}"
        if r.get("fault_shaping"):
            setting += f", fault shaping {r['fault_shaping']:g}"
        seed, es, n = r.get("seed", 0), r.get("eval_seed", 0), r["final_episodes"]
        out.append(f"| {r['env'].replace('NetArena-', '')} | {r['level']} | {setting} | "
                   f"{r['timesteps']:,} | {pct(r['final_correctness'])}{ci(r['final_ci95'])} | "
                   f"{pct(r['final_safety'])} | {r.get('final_mean_cost', float('nan')):.2f} | "
                   f"{n} | {seed} | {es}-{es + n - 1} | {r['steps_per_second']:.0f} |")
    cur = [r for _, r in rows if r.get("curriculum")]
    for r in cur:
        out += ["", f"Curriculum stages of the `{r['config']}` run (`STEPS=MIX`): "
                + ", ".join(f"`{s}`" for s in r["curriculum"]) + "."]
    for _, r in rows:
        out += curve_table(r)
    return out + [""]


def curve_table(r: dict) -> list[str]:
    """A run's learning curve, for the runs whose curve points carry their interval."""
    points = [c for c in r.get("curve", []) if c.get("eval_ci95")]
    if not points:
        return []
    es = r.get("eval_seed", 0)
    n = r.get("eval_episodes")
    seeds = f"seeds {es}-{es + n - 1}" if n else f"seeds from {es}"
    task = r["env"].removeprefix("NetArena-")
    out = ["", f"Learning curve of {task} `{r['config']}` at level {r['level']} (train seed "
           f"{r.get('seed', 0)}; each point: the deterministic policy on {n or '?'} held-out "
           f"evaluation episodes, {seeds}; wall time is training only"
           + ("; training episodes: the levels the curriculum drew" if r.get("curriculum")
              else "") + "):", "",
           "| steps | wall s | training episodes correct | eval correctness [95% CI] | "
           "eval mean steps |", "|---|---|---|---|---|"]
    for c in points:
        out.append(f"| {c['timesteps']:,} | {c['wall_seconds']:.0f} | {pct(c['train_correct'])} | "
                   f"{pct(c['eval_correctness'])}{ci(c['eval_ci95'])} | "
                   f"{c['eval_mean_steps']:.1f} |")
    return out


def safe_section(files: list[Path]) -> list[str]:
    merged: dict = {}
    args = {}
    for f in files:
        data = load(f)
        args = data.get("args", args)
        for r in data["results"]:
            merged[(r["level"], r["variant"])] = r
    if not merged:
        return []
    out = ["## Safety as a cost: plain, unconstrained and Lagrangian PPO", "",
           "Routing, `observability=\"full\"` without the reachability matrix. `ppo`: the "
           "env's default reward (fixed `safety` weight -1 x the fraction of pairs broken); "
           "`unconstrained`: `safety` weight 0; `lagrangian`: `safety` weight 0 and the reward "
           "`(r - lambda * cost) / (1 + lambda)` with `lambda` learned against the cost limit "
           f"{args.get('cost_limit', '?')} (pairs newly broken per episode). Evaluation: the "
           "deterministic policy; training columns: the stochastic policy's last 10 rollouts "
           "(`progress.csv`). Source: `benchmarks/bench_safe_ppo.py` (`"
           + "`, `".join(f.name for f in files) + "`).", "",
           "| level | variant | steps | correctness [95% CI] | safety [95% CI] | mean cost | "
           "train cost / episode | train correct | lambda | episodes | seeds |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (level, variant), r in sorted(merged.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        lam = f"{r['lambda']:.2f}" if r.get("lambda") is not None else "-"
        es, n = r["eval_seed"], r["episodes"]
        out.append(f"| {level} | {variant} | {r['timesteps']:,} | "
                   f"{pct(r['correctness'])}{ci(r['correctness_ci95'])} | "
                   f"{pct(r['safety'])}{ci(r['safety_ci95'])} | {r['mean_cost']:.2f} | "
                   f"{r['train_cost']:.2f} | {pct(r['train_correct'])} | {lam} | {n} | "
                   f"train {r['seed']}, eval {es}-{es + n - 1} |")
    return out + [""]


def sft_section(files: list[Path]) -> list[str]:
    out = []
    for f in files:
        s = load(f)
        for level, e in (s.get("eval") or {}).items():
            out.append(f"| {s.get('model')} | {s.get('preset')} | {s.get('demonstrations')} | "
                       f"{s.get('optimizer_steps')} | {level} | "
                       f"{pct(e['correctness'])}{ci(e.get('correctness_ci95'))} | "
                       f"{pct(e['safety'])} | {e['episodes']} | {e.get('seed', 0)}-"
                       f"{e.get('seed', 0) + e['episodes'] - 1} | `{f.name}` |")
    if not out:
        return []
    return ["## SFT (TRL SFTTrainer on expert demonstrations)", "",
            "The tuned model played as a tool-calling agent (`HFToolAgent`); Wilson 95% "
            "intervals. Source: `netarena-gym train sft`'s `summary.json`. `tiny` is a "
            "randomly initialised Qwen3 built locally (a plumbing run, not a capability "
            "figure); the command is in the file's `command`.", "",
            "| model | preset | demonstrations | optimizer steps | level | correctness [95% CI] "
            "| safety | episodes | eval seeds | file |",
            "|---|---|---|---|---|---|---|---|---|---|", *out, ""]


def _num(v):
    if isinstance(v, dict):
        v = v.get("correctness", v.get("mean"))
    return v


def grpo_section(files: list[Path]) -> list[str]:
    out = []
    for f in files:
        g = load(f)
        seeds = g.get("seeds", g.get("eval_seeds", "-"))
        out.append(f"| `{f.name}` | {pct(_num(g.get('untrained')))}"
                   f"{ci(g.get('untrained_ci95'))} | {pct(_num(g.get('trained')))}"
                   f"{ci(g.get('trained_ci95'))} | {json.dumps(seeds)[:80]} |")
    if not out:
        return []
    return ["## GRPO on CPU (TRL GRPOTrainer, tiny model built locally)", "",
            "Held-out correctness before and after training. Source: "
            "`benchmarks/bench_grpo_learning.py`'s JSON line.", "",
            "| file | untrained [95% CI] | trained [95% CI] | seeds |", "|---|---|---|---|",
            *out, ""]


def build(results: Path) -> str:
    parts = ["# Results", "",
             "Generated by `python benchmarks/results_page.py` from the JSON files in "
             "`benchmarks/results/` (do not edit by hand). Machine for the figures here: 2 "
             "CPU cores shared with other jobs, so steps/s are lower bounds. Correctness is "
             "the share of episodes that end with the network fully working; safety the share "
             "that never broke a working pair; cost the pairs newly broken per episode "
             "(`info[\"cost\"]`, see [training.md](training.md#safety-as-a-cost)).", ""]
    parts += ppo_section(sorted(results.glob("ppo_*.json")))
    parts += safe_section(sorted(results.glob("safe_ppo*.json")))
    parts += sft_section(sorted(results.glob("sft_*.json")))
    parts += grpo_section(sorted(results.glob("grpo*.json")))
    return "\n".join(parts).rstrip() + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--results", default=str(HERE / "results"))
    p.add_argument("--out", default=str(HERE.parent / "docs" / "results.md"))
    a = p.parse_args(argv)
    text = build(Path(a.results))
    Path(a.out).write_text(text)
    print(f"wrote {a.out} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
