"""GRPO for LLM agents on NetArena envs, with TRL's ``environment_factory``.

Each training row is a seeded scenario; every rollout is a multi-turn tool-calling
episode in its own env instance (routing: ``run(machine, command)``; K8s:
``kubectl(command)``) and is scored by the env's own episode reward (``get_reward``:
the selected reward components). Correctness and safety of the rollouts are logged
(``rewards/correct/mean``, ``rewards/safe/mean``, ``netarena/steps`` ...) next to the reward.

CPU smoke run (tiny model built locally, no download, ~1 minute on 2 cores)::

    netarena-gym train grpo --preset cpu-smoke --model tiny --out runs/grpo-smoke

One GPU (a tool-calling instruct model, LoRA, vLLM colocated)::

    netarena-gym train grpo --preset single-gpu --model Qwen/Qwen3-1.7B --lora --vllm \\
        --level-mix 1:0.5,2:0.3,3:0.2 --episodes 2048 --out runs/grpo-qwen3-1.7b \\
        --eval-episodes 100

``--config file.json`` overrides any GRPOConfig field of the preset (``--set key=value``
does the same for one field). After training, ``--eval-episodes N`` plays the model as an
agent on every level of the mix through ``agents.episode.play_episode`` (seeds
``--eval-seed + i``, as ``netarena-gym eval``) and writes ``eval.json``.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from netarena_gym.train.cli.common import HelpFormatter, TrainParser, examples, plain


def build_parser(*, add_help: bool = True) -> argparse.ArgumentParser:
    """The options of ``netarena-gym train grpo`` (defaults shown by ``--help``)."""
    p = TrainParser(prog="netarena-gym train grpo", add_help=add_help,
                    description=plain(__doc__.split("\n\n")[0]),
                    epilog=examples(__doc__),
                    formatter_class=HelpFormatter)
    p.add_argument("--env", default="NetArena-Routing-v0")
    p.add_argument("--model", default="tiny",
                   help="hub id or local directory of a causal LM with a tool-calling chat "
                        "template, or 'tiny' to build a tiny random Qwen3 locally")
    p.add_argument("--preset", default="cpu-smoke", choices=("cpu-smoke", "single-gpu"))
    p.add_argument("--config", default=None, help="JSON file of GRPOConfig overrides")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="one GRPOConfig override (value parsed as JSON when it can be)")
    p.add_argument("--level-mix", default="1", help="'1', '1,2,3' or '1:0.5,2:0.3,3:0.2'")
    p.add_argument("--episodes", type=int, default=64, help="scenarios in the training set")
    p.add_argument("--seed-base", type=int, default=None,
                   help="first training seed (default: netarena_gym.train.data.TRAIN_SEED_BASE)")
    p.add_argument("--reward-components", default=None,
                   help="comma-separated env reward components get_reward adds up "
                        "(default: all; e.g. success,safety,step)")
    p.add_argument("--env-kwargs", default=None,
                   help='JSON for gym.make, e.g. \'{"reward": {"progress": 0.5}, "history": 2}\'')
    p.add_argument("--lora", action="store_true", help="train LoRA adapters (peft)")
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--vllm", action="store_true", help="generate with vLLM (colocated; GPU)")
    p.add_argument("--max-steps", type=int, default=None, help="optimizer steps (overrides preset)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/grpo")
    p.add_argument("--eval-episodes", type=int, default=0,
                   help="after training, evaluate the model on N episodes per level")
    p.add_argument("--eval-seed", type=int, default=0)
    p.add_argument("--eval-max-new-tokens", type=int, default=256)
    return p


def main(argv: list[str] | None = None, *, patch_generate=None) -> dict:
    return run(build_parser().parse_args(argv), patch_generate=patch_generate)


def run(args: argparse.Namespace, *, patch_generate=None) -> dict:
    """Run; returns a summary dict. ``patch_generate`` (tests) replaces
    ``model.generate`` during training with a scripted function."""
    from netarena_gym.train.common import evaluate_trained, parse_overrides, report, resolve_model
    from netarena_gym.train.data import TRAIN_SEED_BASE, parse_level_mix
    from netarena_gym.train.grpo import build_trainer, write_log

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model, tok = resolve_model(args.model, out, args.env)
    comps = args.reward_components.split(",") if args.reward_components else None
    env_kwargs = json.loads(args.env_kwargs) if args.env_kwargs else None
    t0 = time.perf_counter()
    trainer = build_trainer(env_id=args.env, model=model, tokenizer=tok, output_dir=str(out),
                            preset=args.preset,
                            overrides=parse_overrides(args.config, args.set, args.max_steps),
                            episodes=args.episodes, level_mix=args.level_mix,
                            seed_base=TRAIN_SEED_BASE if args.seed_base is None else args.seed_base,
                            components=comps, env_kwargs=env_kwargs, lora=args.lora,
                            lora_r=args.lora_r, use_vllm=args.vllm, seed=args.seed)
    if patch_generate is not None:
        from unittest.mock import patch
        with patch.object(trainer.model, "generate", side_effect=patch_generate(trainer)):
            trainer.train()
    else:
        trainer.train()
    train_seconds = time.perf_counter() - t0
    trainer.save_model(str(out / "final"))
    tok.save_pretrained(str(out / "final"))
    write_log(trainer, out / "log_history.jsonl")
    steps = [h for h in trainer.state.log_history if "rewards/correct/mean" in h]
    summary = {"env": args.env, "model": args.model, "preset": args.preset,
               "level_mix": args.level_mix, "train_seconds": round(train_seconds, 2),
               "optimizer_steps": trainer.state.global_step,
               "rollout_correct": [h["rewards/correct/mean"] for h in steps],
               "rollout_safe": [h["rewards/safe/mean"] for h in steps],
               "rollout_reward": [h["reward"] for h in steps],
               "tool_call_frequency": [h.get("tools/call_frequency") for h in steps]}
    if args.eval_episodes > 0:
        summary["eval"] = evaluate_trained(trainer, tok, args.env,
                                           list(parse_level_mix(args.level_mix)),
                                           lora=args.lora, episodes=args.eval_episodes,
                                           seed=args.eval_seed,
                                           max_new_tokens=args.eval_max_new_tokens,
                                           env_kwargs=env_kwargs)
    report(summary, out)
    return summary

if __name__ == "__main__":
    main()
