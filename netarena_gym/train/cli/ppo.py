"""PPO baselines on the discrete interface: stable-baselines3 PPO or sb3-contrib
MaskablePPO on vectorised envs.

    netarena-gym train ppo --env NetArena-Routing-v0 --level 1 --algo maskable_ppo \\
        --timesteps 200000 --out runs/ppo-routing-l1
    netarena-gym train ppo --level 1,2 --timesteps 20000 --eval-every 5000 \\
        --eval-episodes 20 --out runs/ppo-mix
    netarena-gym train ppo --level 2 --cost-limit 0 --env-kwargs '{"reward": {"safety": 0}}' \\
        --report-to tensorboard --out runs/ppo-lagrangian
    netarena-gym train ppo --level 3 --curriculum 1 --curriculum 100000=1:0.3,2:0.7 \\
        --curriculum 300000=2:0.3,3:0.7 --progress-shaping 0.5 --timesteps 2000000 \\
        --topology-of 3 --out runs/ppo-l3-curriculum
    netarena-gym train ppo --level 3 --observability full --drop reachability --no-history \
        --policy slots --fault-shaping 0.1 --progress-shaping 0.5 --topology-of 3 \
        --curriculum 1 --curriculum 20000=1:0.3,2:0.7 --curriculum 60000=1:0.1,2:0.3,3:0.6 \
        --timesteps 2000000 --out runs/ppo-l3-slots

Writes ``OUT/policy.zip`` (the policy), ``OUT/learning_curve.csv`` and ``.png`` (every
``--eval-every`` steps: deterministic correctness/safety on the fixed evaluation seeds,
and the success rate of recent training episodes), ``OUT/eval.json`` (the final
evaluation on ``--final-episodes`` episodes, seeds ``--eval-seed + i``, through
``agents.episode.play_episode``: the same numbers as ``NETARENA_POLICY=OUT/policy.zip
netarena-gym eval --agent netarena_gym.train.ppo:SB3Agent --interface discrete --level L --episodes N --seed
S --format json`` when the env options are the defaults) and ``OUT/config.json``.

Also ``OUT/progress.csv`` (SB3's logger, per rollout: each reward component summed over
an episode, ``reward/success`` ..., the episode cost ``cost/episode``, the Lagrange
multiplier; TensorBoard/W&B too with ``--report-to``) and ``OUT/checkpoint-N`` at every
curve point (the last two kept); ``--resume`` continues from the last one up to
``--timesteps`` in all.

``--cost-limit D`` trains Lagrangian PPO (:mod:`netarena_gym.train.lagrangian`): the
reward minus ``lambda`` x ``info["cost"]`` (over ``1 + lambda``), ``lambda`` learned so
that the mean episode cost stays under ``D``. ``--curriculum [STEPS=]MIX`` (repeatable) draws each training
episode's level from the stage's mix (:mod:`netarena_gym.train.curriculum`); the
learning curve and the final evaluation use ``--level``. ``--progress-shaping P`` sets the
reward's dense ``progress`` weight, ``--fault-shaping W`` adds ``W`` per anomaly of the
routing features a step clears (:class:`~netarena_gym.train.curriculum.FaultShaping`,
``--observability full``). ``--policy slots`` scores each routing catalogue action with
one shared network over that action's own slot of the observation
(:mod:`netarena_gym.train.ppo_slots`): the setting that learns level 3.

``--level`` takes a mix (``1,2`` or ``1:0.7,2:0.3``: each vectorised env gets one level)
as long as the levels share observation and action spaces (routing 1 and 2 do; 3 is
larger); ``--n-envs`` must give every level of the mix an env (``--level 1,2 --n-envs 1``
is an error). On 2 CPU cores PPO runs at roughly 1-2 k steps/s on routing (see
docs/training.md#ppo-benchmark-figures). ``--algo ppo`` trains without masks: masked actions are then invalid
actions that the env penalises.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from netarena_gym.errors import require
from netarena_gym.eval.validate import number
from netarena_gym.train.cli.common import (HelpFormatter, TrainParser, add_tracking_args,
                                           examples, plain, tracking)


def build_parser(*, add_help: bool = True) -> argparse.ArgumentParser:
    """The options of ``netarena-gym train ppo`` (defaults shown by ``--help``)."""
    p = TrainParser(prog="netarena-gym train ppo", add_help=add_help,
                    description=plain(__doc__.split("\n\n")[0]),
                    epilog=examples(__doc__),
                    formatter_class=HelpFormatter)
    p.add_argument("--env", default="NetArena-Routing-v0")
    p.add_argument("--level", default="1", help="a level or a mix of levels with equal spaces")
    p.add_argument("--algo", default="maskable_ppo", choices=("maskable_ppo", "ppo"))
    p.add_argument("--timesteps", type=number(int, at_least=1), default=200_000)
    p.add_argument("--n-envs", type=number(int, at_least=1), default=8)
    p.add_argument("--vec", default="dummy", choices=("dummy", "subproc", "batched"),
                   help="DummyVecEnv (all envs in this process), SubprocVecEnv (a process "
                        "per env) or the batched env (the envs over --workers processes, "
                        "several per process; same results as dummy)")
    p.add_argument("--workers", type=number(int, at_least=1), default=None,
                   help="processes of --vec batched (default: one per core)")
    p.add_argument("--history", action=argparse.BooleanOptionalAction, default=True,
                   help="add the agent's own action history to the observation")
    p.add_argument("--observability", default="partial", choices=("partial", "full"))
    p.add_argument("--drop", default="", help="observation keys the policy does not see, "
                                               "e.g. reachability")
    p.add_argument("--env-kwargs", default=None, help="JSON for gym.make (e.g. reward weights)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="PPO hyperparameter override, e.g. learning_rate=3e-4")
    p.add_argument("--net", default=None, help="hidden layer sizes, e.g. 128,128 (slots: the "
                   "scorer's width, e.g. 64)")
    p.add_argument("--policy", default="mlp", choices=("mlp", "slots"),
                   help="mlp: SB3's multi-input MLP; slots: one shared scorer per routing "
                        "catalogue slot (netarena_gym.train.ppo_slots; MaskablePPO)")
    p.add_argument("--fault-shaping", type=float, default=0.0, metavar="W",
                   help="routing, --observability full: W per anomaly the step cleared "
                        "(netarena_gym.train.curriculum.FaultShaping)")
    p.add_argument("--seed", type=number(int, at_least=0), default=0)
    p.add_argument("--curriculum", action="append", default=[], metavar="[STEPS=]MIX",
                   help="a curriculum stage, e.g. 1 then 50000=1:0.3,2:0.7 (repeatable)")
    p.add_argument("--topology-of", default=None, metavar="LEVEL",
                   help="routing: every level draws networks of this level's size (so that "
                        "a curriculum's levels share spaces, e.g. 3)")
    p.add_argument("--progress-shaping", type=float, default=None, metavar="P",
                   help="the reward's dense progress weight (default: the env's, 0)")
    p.add_argument("--cost-limit", type=float, default=None, metavar="D",
                   help="Lagrangian PPO: mean episode cost budget (off by default)")
    p.add_argument("--lagrange-lr", type=float, default=0.01, help="the multiplier's step size")
    p.add_argument("--lagrange-init", type=float, default=0.0, help="the multiplier's start")
    p.add_argument("--eval-every", type=number(int, at_least=1), default=25_000)
    p.add_argument("--eval-episodes", type=number(int, at_least=1), default=100,
                   help="episodes per learning-curve point")
    p.add_argument("--final-episodes", type=number(int, at_least=1), default=200)
    p.add_argument("--eval-seed", type=number(int, at_least=0), default=0)
    p.add_argument("--out", default="runs/ppo")
    p.add_argument("--quiet", action="store_true", help="no progress lines or bar")
    p.add_argument("--progress", action="store_true",
                   help="a progress bar (timesteps, rate, time left) even when stderr is not "
                        "a terminal")
    add_tracking_args(p)
    return p


def level_list(spec: str, n_envs: int, seed: int) -> list:
    """One level per vectorised env, in the proportions of the mix; ValueError when
    ``n_envs`` leaves a level of the mix without an env."""
    from netarena_gym.train.data import per_env_levels
    return per_env_levels(spec, n_envs, seed)


def level_topology(level) -> dict:
    """Routing: the network-size ranges of ``level`` (``topology`` for ``gym.make``)."""
    from netarena_gym.routing.generator import level_config
    from netarena_gym.train.data import parse_level
    cfg = level_config(parse_level(level))
    return {"routers": list(cfg.routers), "subnets": list(cfg.subnets), "hosts": list(cfg.hosts)}


def env_kwargs_of(args: argparse.Namespace) -> dict:
    """``gym.make`` keywords of ``--env-kwargs``, ``--observability``,
    ``--progress-shaping`` and ``--topology-of``; ValueError naming the flag otherwise."""
    try:
        env_kwargs = json.loads(args.env_kwargs) if args.env_kwargs else {}
    except json.JSONDecodeError as e:
        raise ValueError(f"argument --env-kwargs: not JSON ({e.msg})") from None
    if not isinstance(env_kwargs, dict):
        raise ValueError(f"argument --env-kwargs: a JSON object of gym.make keywords, "
                         f"got {args.env_kwargs}")
    if args.observability != "partial":
        env_kwargs["observability"] = args.observability
    if args.progress_shaping is not None:
        reward = env_kwargs.get("reward") or {}
        if not isinstance(reward, dict):
            raise ValueError("argument --progress-shaping: --env-kwargs' \"reward\" must be "
                             f"an object of weights to add progress to, got {reward!r}")
        env_kwargs["reward"] = {**reward, "progress": args.progress_shaping}
    if args.topology_of is not None:
        if args.env != "NetArena-Routing-v0":
            raise ValueError(f"argument --topology-of: routing only, not {args.env}")
        try:
            env_kwargs["topology"] = level_topology(args.topology_of)
        except (KeyError, ValueError):
            raise ValueError(f"argument --topology-of: a routing level 1, 2 or 3, got "
                             f"{args.topology_of!r}") from None
    return env_kwargs


def parse_curriculum(specs):
    """The :class:`~netarena_gym.train.curriculum.Curriculum` of ``--curriculum`` (or None)."""
    from netarena_gym.train.curriculum import parse_curriculum as parse
    return parse(specs)


def main(argv: list[str] | None = None) -> dict:
    return run(build_parser().parse_args(argv))


def run(args: argparse.Namespace) -> dict:
    from netarena_gym.train.common import parse_overrides
    from netarena_gym.train.ppo import SB3Agent, evaluate, train, write_curve, write_json

    if args.workers is not None and args.vec != "batched":
        build_parser().error(f"--workers is for --vec batched, not --vec {args.vec}")
    env_kwargs = env_kwargs_of(args)
    levels = level_list(args.level, args.n_envs, args.seed)  # a bad mix: before anything runs
    require("stable_baselines3", "train")  # before anything is written
    if args.algo == "maskable_ppo":
        require("sb3_contrib", "train")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    track = tracking(args, out)
    curriculum = parse_curriculum(args.curriculum)
    lagrangian = (None if args.cost_limit is None else
                  {"cost_limit": args.cost_limit, "lr": args.lagrange_lr,
                   "init": args.lagrange_init})
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
                        vec=args.vec, workers=args.workers, eval_every=args.eval_every,
                        eval_episodes=args.eval_episodes, eval_seed=args.eval_seed,
                        on_record=progress,
                        progress_bar=not args.quiet and (args.progress or sys.stderr.isatty()),
                        log_dir=out, report_to=track.report_to, checkpoint_dir=out,
                        resume_from=track.resume_from, curriculum=curriculum,
                        lagrangian=lagrangian, policy=args.policy,
                        fault_shaping=args.fault_shaping)
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
    cfg.update(levels_per_env=[str(x) for x in levels], hyper=hyper, env_kwargs=env_kwargs,
               curriculum=curriculum.to_list() if curriculum else None,
               resumed_from=str(track.resume_from) if track.resume_from else None,
               train_seconds_incl_curve_evals=round(train_seconds, 2),
               train_seconds=rows[-1]["wall_seconds"] if rows else None,
               timesteps_done=int(model.num_timesteps))
    write_json(cfg, out / "config.json")
    write_json(final, out / "eval.json")
    for lvl, s in final.items():
        print(f"final level {lvl}: correctness {s['correctness']:.3f} "
              f"[{s['correctness_ci95'][0]:.3f}, {s['correctness_ci95'][1]:.3f}]  "
              f"safety {s['safety']:.3f}  mean cost {s['mean_cost']:.2f}  "
              f"mean steps {s['mean_steps']:.2f}  "
              f"({s['episodes']} episodes, seeds {args.eval_seed}..)")
    return {"final": final, "curve": rows, "config": cfg}


if __name__ == "__main__":
    main()
