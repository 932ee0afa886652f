"""``netarena-gym``: the command-line entry point.

    netarena-gym eval --env NetArena-Routing-v0 --agent expert --level 3 --episodes 1000 \\
        --seed 1 --format json
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import gymnasium as gym

import netarena_gym
from netarena_gym.agents import make_agent
from netarena_gym.core.runner import run_episode, summarize


def _level(v: str):
    return v if v == "compat" else int(v)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="netarena-gym", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=netarena_gym.__version__)
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("eval", help="run episodes and print a summary")
    e.add_argument("--env", required=True, choices=sorted(netarena_gym.ENV_IDS))
    e.add_argument("--agent", default="expert", help="expert | random | module:Class")
    e.add_argument("--level", type=_level, default=1, help="1, 2, 3 or compat")
    e.add_argument("--episodes", type=int, default=100)
    e.add_argument("--seed", type=int, default=0, help="episode i uses seed + i")
    e.add_argument("--backend", default="sim")
    e.add_argument("--interface", default="text", choices=("text", "discrete"))
    e.add_argument("--max-steps", type=int, default=None)
    e.add_argument("--format", default="table", choices=("table", "json"))
    e.add_argument("--out", default=None, help="write one JSON line per episode to this file")
    return p


def cmd_eval(a) -> int:
    if a.episodes < 1:
        print("netarena-gym: --episodes must be >= 1", file=sys.stderr)
        return 2
    env = gym.make(a.env, level=a.level, backend=a.backend, interface=a.interface,
                   max_steps=a.max_steps)
    try:
        agent = make_agent(a.agent, env, seed=a.seed)
    except ValueError as e:
        print(f"netarena-gym: {e}", file=sys.stderr)
        return 2
    results = []
    t0 = time.perf_counter()
    out = open(a.out, "w") if a.out else None
    try:
        for i in range(a.episodes):
            r = run_episode(env, agent, seed=a.seed + i)
            results.append(r)
            if out:
                out.write(json.dumps(r.to_dict()) + "\n")
    finally:
        env.close()
        if out:
            out.close()
    s = summarize(results)
    summary = {"env": a.env, "level": a.level, "backend": a.backend, "interface": a.interface,
               "agent": a.agent, "seed": a.seed, **s,
               "wall_seconds": time.perf_counter() - t0}
    if a.format == "json":
        print(json.dumps(summary))
    else:
        _print_table(summary)
    return 0


def _print_table(s: dict) -> None:
    def pct(x):
        return f"{100 * x:6.2f}%"

    print(f"{s['env']}  level={s['level']}  backend={s['backend']}  agent={s['agent']}  "
          f"episodes={s['episodes']}")
    lo, hi = s["correctness_ci95"]
    print(f"correctness   {pct(s['correctness'])}  [{pct(lo)}, {pct(hi)}]")
    lo, hi = s["safety_ci95"]
    print(f"safety        {pct(s['safety'])}  [{pct(lo)}, {pct(hi)}]")
    print(f"safety_compat {pct(s['safety_compat'])}")
    print(f"mean steps    {s['mean_steps']:.2f}   mean agent s {s['mean_agent_seconds']:.5f}")
    print()
    print(f"{'category':48s} {'n':>5s} {'correct':>8s} {'safe':>8s} {'steps':>6s}")
    for k, b in s["by_category"].items():
        print(f"{k:48s} {b['episodes']:5d} {pct(b['correctness'])} {pct(b['safety'])} "
              f"{b['mean_steps']:6.2f}")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "eval":
        return cmd_eval(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
