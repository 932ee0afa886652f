"""GRPO for LLM agents on NetArena envs, with TRL's ``environment_factory``.

Each training row is a seeded scenario; every rollout is a multi-turn tool-calling
episode in its own env instance (routing: ``run(machine, command)``; K8s:
``kubectl(command)``) and is scored by the env's own episode reward (``get_reward``:
the selected reward components). Correctness and safety of the rollouts are logged
(``rewards/correct/mean``, ``rewards/safe/mean``, ``netarena/steps`` ...) next to the reward.

CPU smoke run (tiny model built locally, no download, ~1 minute on 2 cores)::

    netarena-gym train grpo --preset cpu-smoke --model tiny --out runs/grpo-smoke

One GPU (a tool-calling instruct model, LoRA, vLLM colocated); ``--dry-run`` prints the
plan, the token budget and a memory estimate without loading anything::

    netarena-gym train grpo --preset single-gpu --model Qwen/Qwen3-1.7B --lora --vllm \\
        --level-mix 1:0.5,2:0.3,3:0.2 --episodes 2048 --out runs/grpo-qwen3-1.7b \\
        --eval-episodes 100 --dry-run

``--report-to tensorboard|wandb`` sends TRL's logs (every reward component is its own
``rewards/<component>/mean``) there; ``--resume`` resumes from the last
``OUT/checkpoint-N`` (``single-gpu`` saves every 50 steps; ``cpu-smoke`` saves none: add
``--set save_strategy=steps --set save_steps=N``).

``--curriculum [EPISODES=]MIX`` (repeatable) trains level mixes in stages counted in
training scenarios, read in order (``netarena_gym/train/curriculum.py``), e.g.
``--curriculum 1 --curriculum 512=1:0.3,2:0.7 --curriculum 1536=2:0.3,3:0.7``.

``--config file.json`` overrides any GRPOConfig field of the preset (``--set key=value``
does the same for one field). After training, ``--eval-episodes N`` plays the model as an
agent on every level of the mix through ``agents.episode.play_episode`` (seeds
``--eval-seed + i``, as ``netarena-gym eval``) and writes ``OUT/eval.json`` (per level:
the ``netarena-gym eval --format json`` summary, as ``train ppo`` and ``train sft`` write it).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from netarena_gym.train.cli.common import (HelpFormatter, TrainParser, add_tracking_args,
                                           examples, plain, tracking)


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
    p.add_argument("--curriculum", action="append", default=[], metavar="[EPISODES=]MIX",
                   help="a level-mix stage from training scenario EPISODES on (repeatable; "
                        "replaces --level-mix; the dataset is read in order), e.g. "
                        "--curriculum 1 --curriculum 32=1:0.3,2:0.7")
    p.add_argument("--episodes", type=int, default=64, help="scenarios in the training set")
    p.add_argument("--seed-base", type=int, default=None,
                   help="first training seed (default: netarena_gym.train.data.TRAIN_SEED_BASE)")
    p.add_argument("--reward-components", default=None,
                   help="comma-separated env reward components get_reward adds up "
                        "(default: all; e.g. success,safety,step)")
    p.add_argument("--env-kwargs", default=None,
                   help='JSON for gym.make, e.g. \'{"reward": {"progress": 0.5}, "history": 2}\'')
    p.add_argument("--lora", action=argparse.BooleanOptionalAction, default=None,
                   help="train LoRA adapters (peft); default: on for single-gpu, off for cpu-smoke")
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--vllm", action="store_true", help="generate with vLLM (colocated; GPU)")
    p.add_argument("--max-steps", type=int, default=None, help="optimizer steps (overrides preset)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/grpo")
    p.add_argument("--eval-episodes", type=int, default=0,
                   help="after training, evaluate the model on N episodes per level")
    p.add_argument("--eval-seed", type=int, default=0)
    p.add_argument("--eval-max-new-tokens", type=int, default=256)
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan, token budget and memory estimate; train nothing")
    p.add_argument("--vocab-size", type=int, default=None,
                   help="--dry-run: the model's vocabulary (default: read from a local "
                        "config, else Qwen3's 151,936)")
    p.add_argument("--params", type=float, default=None,
                   help="--dry-run: the model's parameter count (e.g. 1.7e9; default: read "
                        "from a local model, else none)")
    add_tracking_args(p)
    return p


def main(argv: list[str] | None = None, *, patch_generate=None) -> dict:
    return run(build_parser().parse_args(argv), patch_generate=patch_generate)


def run(args: argparse.Namespace, *, patch_generate=None) -> dict:
    """Run; returns a summary dict. ``patch_generate`` (tests) replaces
    ``model.generate`` during training with a scripted function."""
    from netarena_gym.train.common import evaluate_trained, parse_overrides, report, resolve_model
    from netarena_gym.train.data import TRAIN_SEED_BASE, parse_level_mix
    from netarena_gym.train.grpo import build_trainer, write_log
    from netarena_gym.train.tools import ALL_COMPONENTS

    from netarena_gym.train.curriculum import parse_curriculum
    curriculum = parse_curriculum(args.curriculum)
    if curriculum is not None:
        args.level_mix = ",".join(str(lvl) for lvl in curriculum.levels)  # eval, dry run
    if args.dry_run:
        return dry_run(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    track = tracking(args, out)
    model, tok = resolve_model(args.model, out, args.env)
    comps = args.reward_components.split(",") if args.reward_components else None
    env_kwargs = json.loads(args.env_kwargs) if args.env_kwargs else None
    t0 = time.perf_counter()
    trainer = build_trainer(env_id=args.env, model=model, tokenizer=tok, output_dir=str(out),
                            preset=args.preset,
                            overrides={**track.trainer_overrides(),
                                       **parse_overrides(args.config, args.set, args.max_steps)},
                            episodes=args.episodes, level_mix=args.level_mix,
                            seed_base=TRAIN_SEED_BASE if args.seed_base is None else args.seed_base,
                            components=comps, env_kwargs=env_kwargs, lora=args.lora,
                            lora_r=args.lora_r, use_vllm=args.vllm, seed=args.seed,
                            curriculum=curriculum)
    if patch_generate is not None:
        from unittest.mock import patch
        with patch.object(trainer.model, "generate", side_effect=patch_generate(trainer)):
            trainer.train(**track.train_kwargs())
    else:
        trainer.train(**track.train_kwargs())
    train_seconds = time.perf_counter() - t0
    trainer.save_model(str(out / "final"))
    tok.save_pretrained(str(out / "final"))
    write_log(trainer, out / "log_history.jsonl")
    steps = [h for h in trainer.state.log_history if "rewards/correct/mean" in h]
    summary = {"env": args.env, "model": args.model, "preset": args.preset,
               "level_mix": args.level_mix, "report_to": track.report_to,
               "curriculum": curriculum.to_list() if curriculum is not None else None,
               "resumed_from": str(track.resume_from) if track.resume_from else None,
               "max_tool_calling_iterations": trainer.args.max_tool_calling_iterations,
               "max_completion_length": trainer.args.max_completion_length,
               "train_seconds": round(train_seconds, 2),
               "optimizer_steps": trainer.state.global_step,
               "rollout_correct": [h["rewards/correct/mean"] for h in steps],
               "rollout_safe": [h["rewards/safe/mean"] for h in steps],
               "rollout_reward": [h["reward"] for h in steps],
               "tool_call_frequency": [h.get("tools/call_frequency") for h in steps],
               "reward_components": {c: [h.get(f"rewards/{c}/mean") for h in steps]
                                     for c in ALL_COMPONENTS}}
    if args.eval_episodes > 0:
        summary["eval"] = evaluate_like_training(trainer, tok, args, env_kwargs)
        (out / "eval.json").write_text(json.dumps(summary["eval"], indent=2) + "\n")
    report(summary, out)
    return summary

def evaluate_like_training(trainer, tok, args, env_kwargs: dict | None) -> dict:
    """Per level of the mix, the model played as in its rollouts: the env's ``max_steps``
    lowered to the tool-call limit of training (as the rollouts' envs were), and the
    conversation capped at the prompt + completion budget of training."""
    from netarena_gym.train.common import evaluate_llm
    from netarena_gym.train.data import parse_level_mix
    from netarena_gym.train.grpo import PROMPT_TOKENS
    from netarena_gym.train.tools import make_limited_env
    calls = trainer.args.max_tool_calling_iterations
    model = trainer.model
    if getattr(model, "peft_config", None):
        model = model.merge_and_unload()  # LoRA adapters merged once, for every level
    model.eval()
    out = {}
    for lvl in parse_level_mix(args.level_mix):
        kw = dict(env_kwargs or {})
        if "max_steps" not in kw:
            env = make_limited_env(args.env, lvl, kw, calls)
            kw["max_steps"] = env.unwrapped.max_steps
            env.close()
        out.update(evaluate_llm(model, tok, args.env, [lvl], episodes=args.eval_episodes,
                                seed=args.eval_seed, max_new_tokens=args.eval_max_new_tokens,
                                env_kwargs=kw,
                                max_prompt_tokens=PROMPT_TOKENS
                                + trainer.args.max_completion_length))
    return out


def dry_run(args: argparse.Namespace) -> dict:
    """The plan of a run without loading the model: the GRPOConfig fields that matter,
    the token budget and a memory estimate (``netarena_gym.train.grpo.memory_plan``)."""
    from netarena_gym.train.common import parse_overrides
    from netarena_gym.train.data import parse_level_mix
    from netarena_gym.train.grpo import LORA_BY_DEFAULT, grpo_config, memory_plan
    levels = list(parse_level_mix(args.level_mix))
    lora = LORA_BY_DEFAULT[args.preset] if args.lora is None else args.lora
    overrides = parse_overrides(args.config, args.set, args.max_steps)
    cfg = grpo_config(str(Path(args.out)), args.preset,
                      {"bf16": False, "use_cpu": True, **overrides}
                      if args.preset == "cpu-smoke" else {"bf16": False, **overrides},
                      use_vllm=args.vllm, seed=args.seed, lora=lora, env_id=args.env,
                      levels=levels,
                      env_kwargs=json.loads(args.env_kwargs) if args.env_kwargs else None)
    vocab, params = args.vocab_size, int(args.params) if args.params else None
    if vocab is None or params is None:
        v, n = _local_model_size(args.model)
        vocab, params = vocab or v or 151936, params or n
    plan = {"env": args.env, "model": args.model, "preset": args.preset, "levels": levels,
            "lora": lora, "vllm": args.vllm, "learning_rate": cfg.learning_rate,
            "dtype": (cfg.model_init_kwargs or {}).get("dtype", "float32"),
            **memory_plan(cfg, vocab_size=vocab, params=params, lora=lora)}
    print(json.dumps(plan, indent=2))
    return plan


def _local_model_size(name: str) -> tuple[int | None, int | None]:
    """(vocabulary, parameters) from a local or cached config; (None, None) offline."""
    try:
        from transformers import AutoConfig
        cfg = AutoConfig.from_pretrained(name, local_files_only=True)
    except Exception:  # noqa: BLE001 -- not cached, or not a model: the estimate says so
        return None, None
    h, n, v = cfg.hidden_size, cfg.num_hidden_layers, cfg.vocab_size
    inter = getattr(cfg, "intermediate_size", 4 * h)
    params = v * h + n * (4 * h * h + 3 * h * inter)
    return v, params


if __name__ == "__main__":
    main()
