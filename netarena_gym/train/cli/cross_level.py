"""Cross-level generalisation: train on one level (or a mix), evaluate on every level,
write the table.

    # PPO (CPU, minutes): one policy per training spec, evaluated on each level whose
    # discrete spaces it fits (routing 1 and 2 share them; 3 and compat differ: n/a)
    netarena-gym train cross-level --method ppo --train 1 --train 2 --train 1,2 \\
        --timesteps 200000 --eval-episodes 200 --out runs/cross-ppo

    # SFT of an LLM (one GPU): single-level vs mixed demonstrations (upstream found
    # single-level SFT overfits; mixed data generalises)
    netarena-gym train cross-level --method sft --model Qwen/Qwen3-1.7B --preset single-gpu \\
        --train 1 --train 3 --train 1:0.5,2:0.25,3:0.25 --n 2000 --eval-episodes 100 \\
        --out runs/cross-sft

Writes ``OUT/generalisation.csv`` (one row per training spec and evaluation level:
correctness with its Wilson 95% interval, safety, mean steps) and
``OUT/generalisation.md`` (training spec x evaluation level, correctness and safety), and
per training spec the run's own outputs under ``OUT/train-<spec>/``. Evaluation episode
``i`` of every cell uses seed ``--eval-seed + i``, as ``netarena-gym eval``.
"""
from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from netarena_gym.train.cli.common import HelpFormatter, TrainParser, examples, plain

FIELDS = ("method", "train", "eval_level", "episodes", "correctness", "correctness_lo",
          "correctness_hi", "safety", "mean_steps", "train_seconds", "note")


def build_parser(*, add_help: bool = True) -> argparse.ArgumentParser:
    """The options of ``netarena-gym train cross-level`` (defaults shown by ``--help``)."""
    p = TrainParser(prog="netarena-gym train cross-level", add_help=add_help,
                    description=plain(__doc__.split("\n\n")[0]),
                    epilog=examples(__doc__), formatter_class=HelpFormatter)
    p.add_argument("--method", default="ppo", choices=("ppo", "sft"))
    p.add_argument("--env", default="NetArena-Routing-v0")
    p.add_argument("--train", action="append", default=None,
                   help="a training level or mix (repeatable); default: each level alone")
    p.add_argument("--eval-levels", default="all", help="'all' or e.g. '1,2,3'")
    p.add_argument("--eval-episodes", type=int, default=100)
    p.add_argument("--eval-seed", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/cross-level")
    g = p.add_argument_group("ppo")
    g.add_argument("--algo", default="maskable_ppo", choices=("maskable_ppo", "ppo"), help="ppo")
    g.add_argument("--timesteps", type=int, default=200_000, help="ppo")
    g.add_argument("--n-envs", type=int, default=8, help="ppo")
    g.add_argument("--history", action=argparse.BooleanOptionalAction, default=True,
                   help="the agent's memory of its own actions in the observation")
    g.add_argument("--drop", default="", help="observation keys hidden from the policy")
    g.add_argument("--observability", default="partial", choices=("partial", "full"), help="ppo")
    g = p.add_argument_group("sft")
    g.add_argument("--model", default="tiny", help="sft")
    g.add_argument("--preset", default="cpu-smoke", choices=("cpu-smoke", "single-gpu"),
                   help="sft")
    g.add_argument("--n", type=int, default=64, help="demonstrations per training spec")
    g.add_argument("--max-steps", type=int, default=None, help="sft")
    g.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="sft")
    g.add_argument("--lora", action="store_true", help="sft")
    g.add_argument("--eval-max-new-tokens", type=int, default=256, help="sft")
    g.add_argument("--eval-max-steps", type=int, default=None, help="sft")
    return p


def slug(spec: str) -> str:
    return re.sub(r"[^0-9A-Za-z.]+", "-", spec).strip("-")


def run_ppo(args, spec: str, levels: list, out: Path) -> tuple[dict, float]:
    from netarena_gym.train.data import per_env_levels
    from netarena_gym.train.ppo import PolicyAgent, evaluate, spaces_match, train, write_curve
    per_env = per_env_levels(spec, args.n_envs, args.seed)
    env_kwargs = {"observability": args.observability} if args.observability != "partial" else None
    t0 = time.perf_counter()
    model, rows = train(algo=args.algo, env_id=args.env, level=per_env,
                        timesteps=args.timesteps, n_envs=args.n_envs, seed=args.seed,
                        history=args.history, drop=tuple(k for k in args.drop.split(",") if k),
                        env_kwargs=env_kwargs, eval_every=max(args.timesteps // 4, 1),
                        eval_episodes=min(args.eval_episodes, 50), eval_seed=args.eval_seed)
    secs = time.perf_counter() - t0
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "policy.zip")
    write_curve(rows, out, title=f"{args.algo} trained on {spec}")
    cells = {}
    for lvl in levels:
        if not spaces_match(model, args.env, lvl, env_kwargs):
            cells[lvl] = None
            continue
        cells[lvl] = evaluate(args.env, PolicyAgent(model), level=lvl,
                              episodes=args.eval_episodes, seed=args.eval_seed,
                              env_kwargs=env_kwargs)
    return cells, secs


def run_sft(args, spec: str, levels: list, out: Path) -> tuple[dict, float]:
    from netarena_gym.train.common import evaluate_trained, parse_overrides, resolve_model
    from netarena_gym.train.data import generate_demonstrations, write_jsonl
    from netarena_gym.train.sft import build_trainer
    out.mkdir(parents=True, exist_ok=True)
    demos = generate_demonstrations(args.env, n=args.n, level_mix=spec)
    write_jsonl(out / "demos.jsonl", demos)
    model, tok = resolve_model(args.model, out, args.env)
    t0 = time.perf_counter()
    tr = build_trainer(model=model, tokenizer=tok, demos=demos, output_dir=str(out),
                       preset=args.preset,
                       overrides=parse_overrides(sets=args.set, max_steps=args.max_steps),
                       lora=args.lora, seed=args.seed)
    tr.train()
    secs = time.perf_counter() - t0
    tr.save_model(str(out / "final"))
    env_kwargs = {"max_steps": args.eval_max_steps} if args.eval_max_steps else None
    res = evaluate_trained(tr, tok, args.env, levels, lora=args.lora,
                           episodes=args.eval_episodes, seed=args.eval_seed,
                           max_new_tokens=args.eval_max_new_tokens, env_kwargs=env_kwargs)
    return {lvl: res[str(lvl)] for lvl in levels}, secs


def table_rows(method: str, spec: str, cells: dict, secs: float) -> list[dict]:
    rows = []
    for lvl, s in cells.items():
        if s is None:
            rows.append({"method": method, "train": spec, "eval_level": str(lvl), "episodes": 0,
                         "train_seconds": round(secs, 1),
                         "note": "n/a: different observation/action spaces"})
            continue
        lo, hi = s["correctness_ci95"]
        rows.append({"method": method, "train": spec, "eval_level": str(lvl),
                     "episodes": s["episodes"], "correctness": round(s["correctness"], 4),
                     "correctness_lo": round(lo, 4), "correctness_hi": round(hi, 4),
                     "safety": round(s["safety"], 4), "mean_steps": round(s["mean_steps"], 2),
                     "train_seconds": round(secs, 1), "note": ""})
    return rows


def write_tables(rows: list[dict], out: Path, title: str) -> tuple[Path, Path]:
    from netarena_gym.train.common import write_csv
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out / "generalisation.csv", out / "generalisation.md"
    write_csv(csv_path, rows, FIELDS)
    specs = list(dict.fromkeys(r["train"] for r in rows))
    levels = list(dict.fromkeys(r["eval_level"] for r in rows))
    lines = [f"# {title}", "",
             "Correctness (safety) of the trained agent per evaluation level; "
             f"{max((r['episodes'] for r in rows), default=0)} episodes per cell, "
             "Wilson 95% interval in brackets.", "",
             "| trained on | " + " | ".join(f"level {lv}" for lv in levels) + " |",
             "|---|" + "---|" * len(levels)]
    for spec in specs:
        cells = []
        for lv in levels:
            r = next(x for x in rows if x["train"] == spec and x["eval_level"] == lv)
            if r.get("note"):
                cells.append("n/a")
            else:
                cells.append(f"{100 * r['correctness']:.1f}% [{100 * r['correctness_lo']:.0f}-"
                             f"{100 * r['correctness_hi']:.0f}] ({100 * r['safety']:.0f}%)")
        lines.append(f"| {spec} | " + " | ".join(cells) + " |")
    md_path.write_text("\n".join(lines) + "\n")
    return csv_path, md_path


def main(argv: list[str] | None = None) -> list[dict]:
    return run(build_parser().parse_args(argv))


def run(args: argparse.Namespace) -> list[dict]:
    from netarena_gym.train.common import env_levels
    out = Path(args.out)
    levels = env_levels(args.env, args.eval_levels)
    if args.method == "sft":
        import gymnasium as gym
        e = gym.make(args.env, interface="text")
        levels = [lv for lv in levels if lv in e.unwrapped.levels]
        e.close()
    specs = args.train or [str(lv) for lv in levels]
    rows: list[dict] = []
    for spec in specs:
        run = run_ppo if args.method == "ppo" else run_sft
        cells, secs = run(args, spec, levels, out / f"train-{slug(spec)}")
        rows.extend(table_rows(args.method, spec, cells, secs))
        write_tables(rows, out, f"{args.env}: {args.method} cross-level generalisation")
        for r in rows[-len(cells):]:
            print(json.dumps(r), flush=True)
    print((out / "generalisation.md").read_text())
    return rows


if __name__ == "__main__":
    main()
