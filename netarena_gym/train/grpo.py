"""GRPO on the envs with TRL's ``environment_factory`` (the library side of
``netarena-gym train grpo``).

Each dataset row is one seeded scenario; GRPO samples ``num_generations`` rollouts of the
same scenario (same seed, so the group compares policies on one problem), each rollout
drives its own env instance through tool calls, and the env owns the reward
(``get_reward``: the episode's reward components, a selectable subset). Correctness and
safety of the rollouts are logged as reward columns of weight 0 (``rewards/correct/mean``,
``rewards/safe/mean``: they never change the advantage), plus ``netarena/*`` metrics.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from netarena_gym.train.data import TRAIN_SEED_BASE, scenario_rows
from netarena_gym.train.tools import make_environment_factory

#: GRPOConfig values of the two documented configurations; anything else is overridable
#: from the command line or a JSON config file.
PRESETS: dict[str, dict[str, Any]] = {
    # Tiny local model, 2 CPU cores: proves the loop (rollouts, tools, env reward,
    # gradients) in well under a minute. Not meant to learn anything.
    "cpu-smoke": dict(use_cpu=True, bf16=False, gradient_checkpointing=False,
                      per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=1024, max_tool_calling_iterations=4,
                      max_steps=2, learning_rate=1e-2, logging_steps=1,
                      save_strategy="no", report_to="none",
                      chat_template_kwargs={"enable_thinking": False}),
    # One GPU (24-80 GB), a 0.6-4B instruct model with tool calling (e.g. Qwen3-1.7B),
    # optionally LoRA and vLLM colocated: 8 scenarios x 8 rollouts per step.
    "single-gpu": dict(bf16=True, gradient_checkpointing=True,
                       per_device_train_batch_size=8, gradient_accumulation_steps=8,
                       num_generations=8, max_completion_length=6144,
                       max_tool_calling_iterations=15, learning_rate=1e-6,
                       beta=0.0, temperature=1.0, num_train_epochs=1, logging_steps=1,
                       save_steps=50, save_total_limit=3, report_to="none",
                       log_completions=True, num_completions_to_print=1,
                       chat_template_kwargs={"enable_thinking": False}),
}


#: learning rate of the single-GPU preset when only LoRA adapters train
LORA_LEARNING_RATE = 1e-5


def grpo_config(output_dir: str, preset: str = "cpu-smoke", overrides: dict | None = None,
                *, use_vllm: bool = False, seed: int = 0, lora: bool = False):
    """A ``GRPOConfig`` from a preset plus overrides."""
    from trl import GRPOConfig
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; known: {sorted(PRESETS)}")
    kw = dict(PRESETS[preset])
    if lora and preset == "single-gpu":
        kw["learning_rate"] = LORA_LEARNING_RATE
    kw.update(overrides or {})
    if use_vllm:
        kw.setdefault("use_vllm", True)
        kw.setdefault("vllm_mode", "colocate")
        kw.setdefault("vllm_gpu_memory_utilization", 0.3)
    kw.setdefault("seed", seed)
    return GRPOConfig(output_dir=output_dir, **kw)


def metric_reward_funcs() -> list:
    """Reward columns of weight 0 that log what the rollouts achieved.

    TRL logs each reward function's mean as ``rewards/<name>/mean``; with weight 0 they
    do not enter the advantage. ``netarena/*`` metrics add steps and invalid commands."""

    def correct(environments=None, log_metric=None, **_):
        ms = [e._metrics() for e in environments]
        if log_metric is not None and ms:
            for key in ("steps", "invalid", "refused"):
                log_metric(f"netarena/{key}", sum(m[key] for m in ms) / len(ms))
            log_metric("netarena/acted", sum(m["steps"] > 0 for m in ms) / len(ms))
        return [m["correct"] for m in ms]

    def safe(environments=None, **_):
        return [e._metrics()["safe"] for e in environments]

    return [correct, safe]


def grpo_dataset(env_id: str, *, episodes: int, level_mix="1", seed_base: int = TRAIN_SEED_BASE):
    from datasets import Dataset
    return Dataset.from_list(scenario_rows(env_id, n=episodes, level_mix=level_mix,
                                           seed_base=seed_base))


def lora_config(r: int = 16, alpha: int = 32, dropout: float = 0.05):
    from peft import LoraConfig
    return LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, task_type="CAUSAL_LM",
                      target_modules="all-linear")


def build_trainer(*, env_id: str, model, tokenizer=None, output_dir: str,
                  preset: str = "cpu-smoke", overrides: dict | None = None,
                  episodes: int = 64, level_mix="1", seed_base: int = TRAIN_SEED_BASE,
                  components: list[str] | None = None, env_kwargs: dict | None = None,
                  lora: bool = False, lora_r: int = 16, use_vllm: bool = False,
                  seed: int = 0):
    """A ready ``GRPOTrainer``: dataset of seeded scenarios, the task's tool environment,
    the env-owned reward and the correctness/safety columns."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOTrainer

    env_factory = make_environment_factory(env_id, components=components, env_kwargs=env_kwargs)
    args = grpo_config(output_dir, preset, dict(overrides or {}, reward_weights=[0.0, 0.0]),
                       use_vllm=use_vllm, seed=seed, lora=lora)
    if isinstance(model, (str, Path)) and tokenizer is None:
        from transformers import AutoTokenizer
        tokenizer = AutoTokenizer.from_pretrained(str(model), padding_side="left")
    if isinstance(model, Path):
        model = str(model)
    trainer = GRPOTrainer(
        model=model, processing_class=tokenizer, args=args,
        reward_funcs=metric_reward_funcs(),
        train_dataset=grpo_dataset(env_id, episodes=episodes, level_mix=level_mix,
                                   seed_base=seed_base),
        environment_factory=env_factory,
        peft_config=lora_config(r=lora_r, alpha=2 * lora_r) if lora else None)
    return trainer


def rollout_log(trainer) -> list[dict]:
    """The trainer's log history (one dict per logging step)."""
    return [dict(h) for h in trainer.state.log_history]


def write_log(trainer, path: str | Path) -> None:
    Path(path).write_text("\n".join(json.dumps(h) for h in rollout_log(trainer)) + "\n")
