"""Supervised fine-tuning of an LLM agent on expert demonstrations (TRL ``SFTTrainer``),
then evaluation of the tuned model as an agent on every level.

Demonstrations are multi-turn tool-calling conversations (see
``netarena_gym/train/data.py``): they come from ``--demos FILE`` (this format, or any
JSONL of episode records with ``scenario`` + ``trajectory``, e.g. ``netarena-gym eval
--out``, which are replayed and converted) or are generated here from the env's expert
with the level mix of ``--level-mix``. ``netarena-gym generate --format sft`` writes
this format (one conversation per episode). ``--demos`` also takes ``generate``'s default
``demos.jsonl`` (``--format chat``: JSON-reply chats, one per expert step): the tuned model is then
evaluated with the JSON-reply agent of ``netarena_gym.agents.llm`` (``--chat-prompt``,
``--chat-history`` as used by generate) (upstream found single-level SFT overfits; a mix
generalises: ``netarena-gym train cross-level`` measures it). The loss is on the assistant
turns.

CPU smoke run (tiny model built locally, no download)::

    netarena-gym train sft --preset cpu-smoke --model tiny --n 8 --out runs/sft-smoke \\
        --eval-levels 1 --eval-episodes 2 --eval-max-steps 3

One GPU::

    netarena-gym train sft --preset single-gpu --model Qwen/Qwen3-1.7B --n 2000 \\
        --level-mix 1:0.4,2:0.3,3:0.3 --out runs/sft-mix --eval-episodes 100

Writes ``OUT/demos.jsonl`` (the demonstrations used), ``OUT/final`` (model or LoRA
adapter + tokenizer), ``OUT/log_history.jsonl`` and ``OUT/eval.json`` (per level: the
``netarena-gym eval --format json`` summary of the tuned model; seeds ``--eval-seed + i``).

Demonstrations of evaluation episodes (seeds ``--eval-seed`` .. ``--eval-seed +
--eval-episodes - 1`` on an evaluated level; ``netarena-gym generate`` starts at seed 0)
are refused with an error. Demonstrations longer than ``max_length`` tokens are left out
with a warning (TRL would cut off their last steps); the summary's
``demonstrations_trained`` counts the rest.

``--report-to tensorboard|wandb`` sets SFTConfig's ``report_to`` (a ``--set report_to=``
overrides it); ``--resume`` resumes from the last ``OUT/checkpoint-N`` that the trainer
saved (the presets save per epoch, or not at all for ``cpu-smoke``: add ``--set
save_strategy=steps --set save_steps=N``).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from netarena_gym.train.cli.common import (HelpFormatter, TrainParser, add_tracking_args,
                                           examples, plain, tracking)


def build_parser(*, add_help: bool = True) -> argparse.ArgumentParser:
    """The options of ``netarena-gym train sft`` (defaults shown by ``--help``)."""
    p = TrainParser(prog="netarena-gym train sft", add_help=add_help,
                    description=plain(__doc__.split("\n\n")[0]),
                    epilog=examples(__doc__),
                    formatter_class=HelpFormatter)
    p.add_argument("--env", default="NetArena-Routing-v0")
    p.add_argument("--model", default="tiny", help="hub id, local directory, or 'tiny'")
    p.add_argument("--preset", default="cpu-smoke", choices=("cpu-smoke", "single-gpu"))
    p.add_argument("--config", default=None, help="JSON file of SFTConfig overrides")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--demos", default=None, help="JSONL of demonstrations or episode records")
    p.add_argument("--n", type=int, default=64, help="demonstrations to generate (no --demos)")
    p.add_argument("--level-mix", default="1", help="'1', '1,2,3' or '1:0.5,3:0.5'")
    p.add_argument("--seed-base", type=int, default=None)
    p.add_argument("--lora", action="store_true")
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/sft")
    p.add_argument("--eval-levels", default="all",
                   help="levels to evaluate on: 'all' (the env's levels), 'none', or '1,2,3'")
    p.add_argument("--eval-episodes", type=int, default=20)
    p.add_argument("--eval-seed", type=int, default=0)
    p.add_argument("--eval-max-new-tokens", type=int, default=256)
    p.add_argument("--eval-max-steps", type=int, default=None,
                   help="env max_steps during evaluation (default: the level's)")
    p.add_argument("--chat-prompt", default="zeroshot",
                   help="JSON-reply demonstrations: the prompt style they were made with")
    p.add_argument("--chat-history", type=int, default=6,
                   help="JSON-reply demonstrations: the history window they were made with")
    add_tracking_args(p)
    return p


def load_or_generate(args) -> list[dict]:
    from netarena_gym.train.data import (TRAIN_SEED_BASE, generate_demonstrations,
                                         read_demonstrations)
    if args.demos:
        return read_demonstrations(args.demos, env_id=args.env)
    return generate_demonstrations(args.env, n=args.n, level_mix=args.level_mix,
                                   seed_base=TRAIN_SEED_BASE if args.seed_base is None
                                   else args.seed_base)


def eval_overlap(demos: list[dict], levels, seed: int, episodes: int) -> list[tuple]:
    """``(level, seed)`` of each demonstration that is an episode of the evaluation
    (seeds ``seed .. seed + episodes - 1`` on ``levels``)."""
    lv = {str(x) for x in levels}
    return [(d.get("level"), d["seed"]) for d in demos
            if isinstance(d.get("seed"), int) and seed <= d["seed"] < seed + episodes
            and (d.get("level") is None or str(d["level"]) in lv)]


def check_eval_overlap(demos: list[dict], levels, seed: int, episodes: int) -> None:
    """ValueError when demonstrations are episodes the tuned model is evaluated on
    (``netarena-gym generate`` and ``--seed-base`` default to seed 0, the evaluation's)."""
    hit = eval_overlap(demos, levels, seed, episodes)
    if hit:
        episodes_hit = list(dict.fromkeys(hit))  # chat demonstrations: one per step
        shown = ", ".join(f"level {lvl} seed {s}" for lvl, s in episodes_hit[:5])
        raise ValueError(
            f"{len(hit)} of the {len(demos)} demonstrations come from evaluation episodes "
            f"({shown}{', ...' if len(episodes_hit) > 5 else ''}): --eval-seed {seed} "
            f"--eval-episodes {episodes} plays seeds {seed}..{seed + episodes - 1}, so the "
            "evaluation would measure memorised episodes. Make the demonstrations from "
            "training seeds (netarena-gym generate --seed 1000000; train sft without "
            "--demos does), or evaluate on other seeds (--eval-seed) or not at all "
            "(--eval-episodes 0)")


def main(argv: list[str] | None = None) -> dict:
    return run(build_parser().parse_args(argv))


def run(args: argparse.Namespace) -> dict:
    from netarena_gym.train.common import (env_levels, evaluate_chat_model, evaluate_trained,
                                           parse_overrides, report, resolve_model)
    from netarena_gym.train.data import write_jsonl
    from netarena_gym.train.sft import build_trainer, demo_format

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    demos = load_or_generate(args)
    lv = env_levels(args.env, args.eval_levels)
    if lv and args.eval_episodes > 0:
        check_eval_overlap(demos, lv, args.eval_seed, args.eval_episodes)
    fmt = demo_format(demos)
    write_jsonl(out / "demos.jsonl", demos)
    model, tok = resolve_model(args.model, out, args.env)
    track = tracking(args, out)
    t0 = time.perf_counter()
    trainer = build_trainer(model=model, tokenizer=tok, demos=demos, output_dir=str(out),
                            preset=args.preset,
                            overrides={**track.trainer_overrides(),
                                       **parse_overrides(args.config, args.set, args.max_steps)},
                            lora=args.lora, lora_r=args.lora_r, seed=args.seed)
    trainer.train(**track.train_kwargs())
    train_seconds = time.perf_counter() - t0
    trainer.save_model(str(out / "final"))
    tok.save_pretrained(str(out / "final"))
    (out / "log_history.jsonl").write_text(
        "\n".join(json.dumps(h) for h in trainer.state.log_history) + "\n")
    levels = sorted({str(d["level"]) for d in demos})
    summary = {"env": args.env, "model": args.model, "preset": args.preset,
               "demonstrations": len(demos), "demo_format": fmt, "demo_levels": levels,
               "demonstrations_trained": len(trainer.train_dataset),
               "report_to": track.report_to,
               "resumed_from": str(track.resume_from) if track.resume_from else None,
               "train_seconds": round(train_seconds, 2),
               "optimizer_steps": trainer.state.global_step,
               "loss": [h["loss"] for h in trainer.state.log_history if "loss" in h]}
    if lv and args.eval_episodes > 0:
        env_kwargs = {"max_steps": args.eval_max_steps} if args.eval_max_steps else None
        if fmt == "tools":
            summary["eval"] = evaluate_trained(trainer, tok, args.env, lv, lora=args.lora,
                                               episodes=args.eval_episodes, seed=args.eval_seed,
                                               max_new_tokens=args.eval_max_new_tokens,
                                               env_kwargs=env_kwargs)
        else:  # the JSON-reply agent of agents.llm, on a full model directory
            path = out / "final"
            if args.lora:
                path = out / "merged"
                trainer.model.merge_and_unload().save_pretrained(str(path))
                tok.save_pretrained(str(path))
            summary["eval"] = evaluate_chat_model(
                str(path), args.env, lv, episodes=args.eval_episodes, seed=args.eval_seed,
                prompt=args.chat_prompt, history=args.chat_history,
                max_new_tokens=args.eval_max_new_tokens, env_kwargs=env_kwargs)
        (out / "eval.json").write_text(json.dumps(summary["eval"], indent=2) + "\n")
    report(summary, out)
    return summary

if __name__ == "__main__":
    main()
