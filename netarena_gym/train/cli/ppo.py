"""PPO baselines on the discrete interface: stable-baselines3 PPO or sb3-contrib
MaskablePPO on vectorised envs.

    netarena-gym train ppo --env NetArena-Routing-v0 --level 1 --algo maskable_ppo \\
        --timesteps 200000 --out runs/ppo-routing-l1
    netarena-gym train ppo --level 1,2 --timesteps 20000 --eval-every 5000 \\
        --eval-episodes 20 --out runs/ppo-mix

Writes ``OUT/policy.zip`` (the policy), ``OUT/learning_curve.csv`` and ``.png`` (every
``--eval-every`` steps: deterministic correctness/safety on the fixed evaluation seeds,
and the success rate of recent training episodes), ``OUT/eval.json`` (the final
evaluation on ``--final-episodes`` episodes, seeds ``--eval-seed + i``, through
``agents.episode.play_episode``: the same numbers as ``NETARENA_POLICY=OUT/policy.zip
netarena-gym eval --agent netarena_gym.train.ppo:SB3Agent --interface discrete --level L --episodes N --seed
S --format json`` when the env options are the defaults) and ``OUT/config.json``.

``--level`` takes a mix (``1,2`` or ``1:0.7,2:0.3``: each vectorised env gets one level)
as long as the levels share observation and action spaces (routing 1 and 2 do; 3 is
larger). On 2 CPU cores PPO runs at roughly 1-2 k steps/s on routing (see
docs/training.md#ppo-benchmark-figures). ``--algo ppo`` trains without masks: masked actions are then invalid
actions that the env penalises.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from netarena_gym.train.cli.common import HelpFormatter, TrainParser, examples, plain


def build_parser(*, add_help: bool = True) -> argparse.ArgumentParser:
    """The options of ``netarena-gym train ppo`` (defaults shown by ``--help``)."""
    p = TrainParser(prog="netarena-gym train ppo", add_help=add_help,
                    description=plain(__doc__.split("\n\n")[0]),
                    epilog=examples(__doc__),
                    formatter_class=HelpFormatter)
    p.add_argument("--env", default="NetArena-Routing-v0")
    p.add_argument("--level", default="1", help="a level or a mix of levels with equal spaces")
    p.add_argument("--algo", default="maskable_ppo", choices=("maskable_ppo", "ppo"))
    p.add_argument("--timesteps", type=int, default=200_000)
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--vec", default="dummy", choices=("dummy", "subproc"),
                   help="DummyVecEnv (best on few cores) or SubprocVecEnv")
    p.add_argument("--history", action=argparse.BooleanOptionalAction, default=True,
                   help="add the agent's own action history to the observation")
    p.add_argument("--observability", default="partial", choices=("partial", "full"))
    p.add_argument("--drop", default="", help="observation keys the policy does not see, "
                                               "e.g. reachability")
    p.add_argument("--env-kwargs", default=None, help="JSON for gym.make (e.g. reward weights)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="PPO hyperparameter override, e.g. learning_rate=3e-4")
    p.add_argument("--net", default=None, help="hidden layer sizes, e.g. 128,128")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-every", type=int, default=25_000)
    p.add_argument("--eval-episodes", type=int, default=100,
                   help="episodes per learning-curve point")
    p.add_argument("--final-episodes", type=int, default=200)
    p.add_argument("--eval-seed", type=int, default=0)
    p.add_argument("--out", default="runs/ppo")
    p.add_argument("--quiet", action="store_true", help="no progress lines or bar")
    p.add_argument("--progress", action="store_true",
                   help="a progress bar (timesteps, rate, time left) even when stderr is not "
                        "a terminal")
    return p


def level_list(spec: str, n_envs: int, seed: int) -> list:
    """One level per vectorised env, in the proportions of the mix."""
    from netarena_gym.train.data import level_plan, parse_level_mix
    return level_plan(parse_level_mix(spec), n_envs, seed)


def main(argv: list[str] | None = None) -> dict:
    return run(build_parser().parse_args(argv))


def run(args: argparse.Namespace) -> dict:
    from netarena_gym.train.common import parse_overrides
    from netarena_gym.train.ppo import SB3Agent, evaluate, train, write_curve, write_json

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env_kwargs = json.loads(args.env_kwargs) if args.env_kwargs else {}
    if args.observability != "partial":
        env_kwargs["observability"] = args.observability
    levels = level_list(args.level, args.n_envs, args.seed)
    eval_level = levels[0] if len(set(levels)) == 1 else None
    hyper = parse_overrides(sets=args.set)
    net = [int(x) for x in args.net.split(",")] if args.net else None

    def progress(row):
        if not args.quiet:
            print(f"{row['timesteps']:>8d} steps  {row['wall_seconds']:8.1f} s  "
                  f"eval correct {row['eval_correctness']:.3f}  safe {row['eval_safety']:.3f}  "
                  f"steps {row['eval_mean_steps']:.2f}  train correct {row['train_correct']:.3f}",
                  flush=True)

    t0 = time.perf_counter()
    model, rows = train(algo=args.algo, env_id=args.env, level=levels, timesteps=args.timesteps,
                        n_envs=args.n_envs, seed=args.seed, hyper=hyper, net_arch=net,
                        env_kwargs=env_kwargs or None, history=args.history,
                        drop=tuple(k for k in args.drop.split(",") if k),
                        subproc=args.vec == "subproc", eval_every=args.eval_every,
                        eval_episodes=args.eval_episodes, eval_seed=args.eval_seed,
                        on_record=progress,
                        progress_bar=not args.quiet and (args.progress or sys.stderr.isatty()))
    train_seconds = time.perf_counter() - t0
    model.save(out / "policy.zip")
    title = f"{args.algo} {args.env} level {args.level}"
    write_curve(rows, out, title=title)
    agent = SB3Agent(path=str(out / "policy.zip"))
    final = {}
    for lvl in sorted(set(levels), key=str) if eval_level is None else [eval_level]:
        final[str(lvl)] = evaluate(args.env, agent, level=lvl, episodes=args.final_episodes,
                                   seed=args.eval_seed, env_kwargs=env_kwargs or None)
    cfg = {k: v for k, v in vars(args).items()}
    cfg.update(levels_per_env=[str(x) for x in levels], hyper=hyper,
               train_seconds_incl_curve_evals=round(train_seconds, 2),
               train_seconds=rows[-1]["wall_seconds"] if rows else None,
               timesteps_done=int(model.num_timesteps))
    write_json(cfg, out / "config.json")
    write_json(final, out / "eval.json")
    for lvl, s in final.items():
        print(f"final level {lvl}: correctness {s['correctness']:.3f} "
              f"[{s['correctness_ci95'][0]:.3f}, {s['correctness_ci95'][1]:.3f}]  "
              f"safety {s['safety']:.3f}  mean steps {s['mean_steps']:.2f}  "
              f"({s['episodes']} episodes, seeds {args.eval_seed}..)")
    return {"final": final, "curve": rows, "config": cfg}


if __name__ == "__main__":
    main()
