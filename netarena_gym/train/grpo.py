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
from netarena_gym.train.tools import (ALL_COMPONENTS, finish_rollout, make_environment_factory,
                                      play_call)

#: GRPOConfig values of the two documented configurations; anything else is overridable
#: from the command line or a JSON config file. ``single-gpu`` gets its per-level fields
#: from :func:`level_settings`.
PRESETS: dict[str, dict[str, Any]] = {
    # Tiny local model, 2 CPU cores: proves the loop (rollouts, tools, env reward,
    # gradients) in well under a minute. Not meant to learn anything.
    "cpu-smoke": dict(use_cpu=True, bf16=False, gradient_checkpointing=False,
                      per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=1024, max_tool_calling_iterations=4,
                      max_steps=2, learning_rate=1e-2, logging_steps=1,
                      save_strategy="no", report_to="none",
                      chat_template_kwargs={"enable_thinking": False}),
    # One GPU, a 0.6-4B instruct model with tool calling (e.g. Qwen3-1.7B), LoRA by
    # default, optionally vLLM colocated: 8 scenarios x 8 rollouts per optimizer step.
    "single-gpu": dict(bf16=True, gradient_checkpointing=True,
                       model_init_kwargs={"dtype": "bfloat16"},
                       num_generations=8, learning_rate=1e-6,
                       beta=0.0, temperature=1.0, num_train_epochs=1, logging_steps=1,
                       save_steps=50, save_total_limit=3, report_to="none",
                       log_completions=True, num_completions_to_print=1,
                       chat_template_kwargs={"enable_thinking": False}),
}

#: presets that train LoRA adapters unless ``lora=False`` is asked for
LORA_BY_DEFAULT = {"cpu-smoke": False, "single-gpu": True}

#: learning rate of the single-GPU preset when only LoRA adapters train
LORA_LEARNING_RATE = 1e-5

#: rollouts per optimizer step in ``single-gpu`` (scenarios x ``num_generations``)
ROLLOUTS_PER_STEP = 64

#: tokens reserved for the prompt (system prompt, tool schemas, first observation; the
#: longest first observation, routing level 3, is ~3.6k characters)
PROMPT_TOKENS = 2048

#: ``single-gpu`` per level: the completion budget of one rollout (the model's turns *and*
#: the tool answers, as TRL counts it) and the micro-batch that keeps the logits in
#: memory. Expert episodes measured on routing (30 seeds, JSON characters / ~3.5): L1 up
#: to ~4k tokens, L2 ~6k, L3 ~9k on average and up to ~22k; the expert needs up to 2, 9
#: and 22 calls. The tool-call limit is the env's own ``max_steps`` at that level.
LEVEL_BUDGET: dict[Any, dict[str, int]] = {
    1: {"completion_tokens": 4096, "micro_batch": 2},
    2: {"completion_tokens": 8192, "micro_batch": 1},
    3: {"completion_tokens": 16384, "micro_batch": 1},
    4: {"completion_tokens": 4096, "micro_batch": 2},
    "compat": {"completion_tokens": 16384, "micro_batch": 1},
}


def env_max_steps(env_id: str, level, env_kwargs: dict | None = None) -> int:
    """The env's step limit at ``level`` (with ``env_kwargs``: an explicit ``max_steps``
    there is the limit)."""
    import gymnasium as gym
    env = gym.make(env_id, level=level, **(env_kwargs or {}))
    try:
        return int(env.unwrapped.max_steps)
    finally:
        env.close()


def level_settings(env_id: str, levels, preset: str = "single-gpu",
                   env_kwargs: dict | None = None) -> dict[str, Any]:
    """GRPOConfig fields that depend on the levels trained (the largest need wins).

    Every preset: ``max_tool_calling_iterations`` is at least the env's ``max_steps`` at
    the largest level (so a rollout may use the env's whole budget; routing: 15, 20, 40
    at L1-L3; an explicit ``max_steps`` in ``env_kwargs`` is that budget) unless the preset
    caps it (``cpu-smoke``: 4; an explicit ``max_steps`` is not capped, since the rollout
    env keeps it). ``single-gpu`` also sets
    the completion budget, the micro-batch, gradient accumulation (the same
    :data:`ROLLOUTS_PER_STEP` rollouts per step at every level) and
    ``vllm_max_model_length`` (prompt + completion)."""
    levels = list(levels)
    calls = max(env_max_steps(env_id, lvl, env_kwargs) for lvl in levels)
    if preset != "single-gpu":
        cap = PRESETS[preset].get("max_tool_calling_iterations")
        if "max_steps" in (env_kwargs or {}):
            cap = None
        return {"max_tool_calling_iterations": min(calls, cap) if cap else calls}
    budgets = [LEVEL_BUDGET.get(lvl, LEVEL_BUDGET[3]) for lvl in levels]
    completion = max(b["completion_tokens"] for b in budgets)
    micro = min(b["micro_batch"] for b in budgets)
    return {"max_tool_calling_iterations": calls, "max_completion_length": completion,
            "per_device_train_batch_size": micro,
            "gradient_accumulation_steps": ROLLOUTS_PER_STEP // micro,
            "vllm_max_model_length": PROMPT_TOKENS + completion}


def grpo_config(output_dir: str, preset: str = "cpu-smoke", overrides: dict | None = None,
                *, use_vllm: bool = False, seed: int = 0, lora: bool | None = None,
                env_id: str = "NetArena-Routing-v0", levels=(1,),
                env_kwargs: dict | None = None):
    """A ``GRPOConfig``: the preset, then its level settings (:func:`level_settings`, with
    the rollout envs' ``env_kwargs``), the LoRA learning rate, vLLM, then ``overrides``
    (which always win, except that ``max_tool_calling_iterations`` may not fall below an
    explicit ``max_steps`` in ``env_kwargs``: ValueError)."""
    from trl import GRPOConfig
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; known: {sorted(PRESETS)}")
    kw = dict(PRESETS[preset])
    kw.update(level_settings(env_id, levels, preset, env_kwargs))
    if lora is None:
        lora = LORA_BY_DEFAULT[preset]
    if lora and preset == "single-gpu":
        kw["learning_rate"] = LORA_LEARNING_RATE
    if use_vllm:
        kw.update(use_vllm=True, vllm_mode="colocate", vllm_gpu_memory_utilization=0.3)
    else:
        kw.pop("vllm_max_model_length", None)
    kw.update(overrides or {})
    kw.setdefault("seed", seed)
    explicit = (env_kwargs or {}).get("max_steps")
    if explicit is not None and kw["max_tool_calling_iterations"] < int(explicit):
        raise ValueError(
            f"max_tool_calling_iterations={kw['max_tool_calling_iterations']} is below the "
            f"env's max_steps={explicit} (--env-kwargs): rollouts would stop before the "
            "env's step budget, unlike evaluation; raise max_tool_calling_iterations or "
            "lower max_steps")
    return GRPOConfig(output_dir=output_dir, **kw)


#: the columns :func:`metric_reward_funcs` adds, in order (each logged by TRL as
#: ``rewards/<name>/mean`` and ``/std``)
METRIC_COLUMNS = ("correct", "safe") + ALL_COMPONENTS


def metric_reward_funcs() -> list:
    """Reward columns that log what the rollouts achieved: correctness, safety, and each
    reward component of the env's episode reward (``success``, ``safety``, ``step``,
    ``invalid``, ...) as its own metric.

    TRL logs each reward function's mean as ``rewards/<name>/mean``; their weights
    (``reward_weights``, one per column of :data:`METRIC_COLUMNS`) default to 0, so they
    do not enter the advantage: the env's own reward (``get_reward``, weight 1) does.
    ``netarena/*`` metrics add steps and invalid commands."""

    def correct(environments=None, log_metric=None, **_):
        for e in environments:
            finish_rollout(e)  # a rollout that stopped calling tools: one invalid step
        ms = [e._metrics() for e in environments]
        if log_metric is not None and ms:
            for key in ("steps", "invalid", "refused"):
                log_metric(f"netarena/{key}", sum(m[key] for m in ms) / len(ms))
            log_metric("netarena/acted", sum(m["steps"] > 0 for m in ms) / len(ms))
        return [m["correct"] for m in ms]

    def safe(environments=None, **_):
        for e in environments:
            finish_rollout(e)
        return [e._metrics()["safe"] for e in environments]

    def component(name):
        def f(environments=None, **_):
            for e in environments:
                finish_rollout(e)
            return [float(e._totals.get(name, 0.0)) for e in environments]
        f.__name__ = f.__qualname__ = name
        return f

    return [correct, safe] + [component(c) for c in ALL_COMPONENTS]


def reward_weights(overrides: dict) -> list[float]:
    """The weights of :func:`metric_reward_funcs`' columns: 0 each, or the user's
    ``reward_weights`` (one per column of :data:`METRIC_COLUMNS`; they add to the env's
    reward, which TRL always weighs 1). A list of another length is an error."""
    given = overrides.get("reward_weights")
    if given is None:
        return [0.0] * len(METRIC_COLUMNS)
    if not isinstance(given, (list, tuple)) or len(given) != len(METRIC_COLUMNS):
        raise ValueError(f"reward_weights needs {len(METRIC_COLUMNS)} numbers, one per column "
                         f"{list(METRIC_COLUMNS)} (the env's own reward always weighs 1); "
                         f"got {given!r}")
    return [float(w) for w in given]


def memory_plan(cfg, *, vocab_size: int, params: int | None = None, lora: bool = True,
                prompt_tokens: int = PROMPT_TOKENS) -> dict[str, Any]:
    """The token budget and a memory estimate of a config, for ``--dry-run``.

    Logits alone: micro-batch x (prompt + completion) tokens x vocabulary x bytes (2 in
    bf16, 4 in fp32) -- what one forward holds if it materialises them (TRL 1.16 computes
    the training log-probabilities in token x vocabulary tiles, so it is an upper bound
    there); weights at 2 bytes a parameter in bf16 (4 in fp32); optimizer state (AdamW:
    fp32 master copy and two moments, 12 bytes a trained parameter; ~1% trained with
    LoRA). Activations, the KV cache and vLLM's share come on top."""
    tokens = prompt_tokens + cfg.max_completion_length
    rollouts = cfg.per_device_train_batch_size * cfg.gradient_accumulation_steps
    gib = 1024 ** 3
    width = 2 if (cfg.bf16 or (cfg.model_init_kwargs or {}).get("dtype") == "bfloat16") else 4
    logits = cfg.per_device_train_batch_size * tokens * vocab_size * width
    out = {"rollouts_per_step": rollouts,
           "scenarios_per_step": rollouts // cfg.num_generations,
           "num_generations": cfg.num_generations,
           "micro_batch": cfg.per_device_train_batch_size,
           "gradient_accumulation_steps": cfg.gradient_accumulation_steps,
           "max_tool_calling_iterations": cfg.max_tool_calling_iterations,
           "prompt_tokens": prompt_tokens, "max_completion_length": cfg.max_completion_length,
           "tokens_per_rollout": tokens, "tokens_per_step": rollouts * tokens,
           "vllm_max_model_length": getattr(cfg, "vllm_max_model_length", None),
           "vocab_size": vocab_size, "bytes_per_value": width,
           "logits_gib": round(logits / gib, 2)}
    if params:
        trained = params // 100 if lora else params
        out.update(params=params, weights_gib=round(params * width / gib, 2),
                   optimizer_gib=round(trained * 12 / gib, 2),
                   estimate_gib=round((logits + params * width + trained * 12) / gib, 2))
    return out


def grpo_dataset(env_id: str, *, episodes: int, level_mix="1", seed_base: int = TRAIN_SEED_BASE,
                 curriculum=None):
    """The training scenarios; with a :class:`~netarena_gym.train.curriculum.Curriculum`,
    in stage order (its stages count scenarios)."""
    from datasets import Dataset
    if curriculum is not None:
        from netarena_gym.train.curriculum import curriculum_rows
        return Dataset.from_list(curriculum_rows(env_id, curriculum, n=episodes,
                                                 seed_base=seed_base))
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
                  lora: bool | None = None, lora_r: int = 16, use_vllm: bool = False,
                  seed: int = 0, curriculum=None):
    """A ready ``GRPOTrainer``: dataset of seeded scenarios, the task's tool environment,
    the env-owned reward and the correctness/safety columns. ``curriculum`` (a
    :class:`~netarena_gym.train.curriculum.Curriculum`, stages counted in scenarios)
    replaces ``level_mix``: the dataset is built stage by stage and read in order."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from netarena_gym.train.data import parse_level_mix
    from netarena_gym.train.tools import tool_class
    tool_class(env_id)  # an unknown task fails here, with the known ones listed
    overrides = dict(overrides or {})
    overrides["reward_weights"] = reward_weights(overrides)
    if lora is None:
        lora = LORA_BY_DEFAULT[preset]
    levels = curriculum.levels if curriculum is not None else list(parse_level_mix(level_mix))
    if curriculum is not None:
        overrides["shuffle_dataset"] = False  # the stages are trained in order
    args = grpo_config(output_dir, preset, overrides, use_vllm=use_vllm, seed=seed, lora=lora,
                       env_id=env_id, levels=levels, env_kwargs=env_kwargs)
    env_factory = make_environment_factory(env_id, components=components, env_kwargs=env_kwargs,
                                           max_calls=args.max_tool_calling_iterations)
    if isinstance(model, (str, Path)) and tokenizer is None:
        from transformers import AutoTokenizer
        tokenizer = AutoTokenizer.from_pretrained(str(model), padding_side="left")
    if isinstance(model, Path):
        model = str(model)
    trainer = env_trainer_class()(
        model=model, processing_class=tokenizer, args=args,
        reward_funcs=metric_reward_funcs(),
        train_dataset=grpo_dataset(env_id, episodes=episodes, level_mix=level_mix,
                                   seed_base=seed_base, curriculum=curriculum),
        environment_factory=env_factory,
        peft_config=lora_config(r=lora_r, alpha=2 * lora_r) if lora else None)
    return trainer


class _AnyTool(dict):
    """A rollout's tool table in which every name is a tool: a name the env lacks is
    played through :func:`~netarena_gym.train.tools.play_call` (an invalid action of the
    env, as in evaluation) instead of TRL's ``"Tool X not found"`` error, which never
    reaches the env and so carries no penalty."""

    def __init__(self, tools: dict, env):
        super().__init__(tools)
        self.env = env

    def __contains__(self, name) -> bool:
        return True

    def __missing__(self, name):
        return lambda **arguments: play_call(self.env, name, arguments)


def env_trainer_class():
    """``GRPOTrainer`` whose tool calls of an unknown name reach the env
    (:class:`_AnyTool`). It wraps the per-rollout tool tables of TRL 1.16's
    ``_tool_call_loop`` (the version ``pyproject.toml`` pins; ``tests/training/test_grpo.py``
    fails if that changes)."""
    from trl import GRPOTrainer

    class EnvGRPOTrainer(GRPOTrainer):
        def _tool_call_loop(self, *args, **kwargs):
            if self.environments:
                self._sync_tool_dicts = [d if isinstance(d, _AnyTool) else _AnyTool(d, env)
                                         for d, env in zip(self._sync_tool_dicts,
                                                           self.environments)]
            return super()._tool_call_loop(*args, **kwargs)
    return EnvGRPOTrainer


def rollout_log(trainer) -> list[dict]:
    """The trainer's log history (one dict per logging step)."""
    return [dict(h) for h in trainer.state.log_history]


def write_log(trainer, path: str | Path) -> None:
    Path(path).write_text("\n".join(json.dumps(h) for h in rollout_log(trainer)) + "\n")
