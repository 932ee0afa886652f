"""Supervised fine-tuning on expert demonstrations (the library side of
``netarena-gym train sft``): TRL ``SFTTrainer`` on the tool-calling conversations of
:mod:`netarena_gym.train.data` (or on ``netarena-gym generate``'s JSON-reply chats),
loss on the assistant turns only (tool calls, replies; observations are context;
demonstrations longer than ``max_length`` are left out with a warning, since TRL would cut
off their last steps: :func:`fit_max_length`), then
evaluation of the tuned model as an agent through ``agents.episode.play_episode`` with the
same seeds as ``netarena-gym eval``.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

PRESETS: dict[str, dict[str, Any]] = {
    # Tiny local model on 2 CPU cores: a few optimizer steps over a few demonstrations.
    "cpu-smoke": dict(use_cpu=True, bf16=False, gradient_checkpointing=False,
                      per_device_train_batch_size=1, max_steps=3, learning_rate=1e-2,
                      logging_steps=1, save_strategy="no", report_to="none",
                      max_length=None),
    # One GPU, a 0.6-4B instruct model: 2 epochs over a few thousand demonstrations.
    "single-gpu": dict(bf16=True, gradient_checkpointing=True, per_device_train_batch_size=2,
                       gradient_accumulation_steps=8, num_train_epochs=2, learning_rate=1e-5,
                       lr_scheduler_type="cosine", warmup_steps=0.03, logging_steps=10,
                       save_strategy="epoch", report_to="none", max_length=16384),
}


def sft_config(output_dir: str, preset: str = "cpu-smoke", overrides: dict | None = None,
               *, seed: int = 0):
    from trl import SFTConfig
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; known: {sorted(PRESETS)}")
    kw = dict(PRESETS[preset])
    kw.update(overrides or {})
    kw.setdefault("assistant_only_loss", True)
    kw.setdefault("seed", seed)
    return SFTConfig(output_dir=output_dir, **kw)


def demo_format(demos: list[dict]) -> str:
    """``"tools"``: tool-calling conversations (:mod:`netarena_gym.train.data`);
    ``"chat"``: JSON-reply chats without tool schemas (``netarena-gym generate``'s
    ``demos.jsonl``, one line per expert step)."""
    if not demos:
        raise ValueError("no demonstrations")
    with_tools = sum("tools" in d for d in demos)
    if with_tools == len(demos):
        return "tools"
    if with_tools == 0 and all("messages" in d for d in demos):
        return "chat"
    raise ValueError("demonstrations mix tool-calling conversations and plain chats")


def demo_lengths(demos: list[dict], tokenizer, *, assistant_only_loss: bool = True) -> list[int]:
    """Each demonstration's length in tokens as ``SFTTrainer`` (TRL 1.16) tokenizes it
    before cutting at ``max_length``: the chat template with the demonstration's tool
    schemas; with ``assistant_only_loss``, TRL's training template when the tokenizer's
    own has no generation markers."""
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers
    template = None
    if assistant_only_loss and not has_generation_markers(tokenizer.chat_template):
        template = get_training_chat_template(tokenizer)
    out = []
    for d in demos:
        kw = {"tools": json.loads(d["tools"])} if d.get("tools") else {}
        ids = tokenizer.apply_chat_template(d["messages"], tokenize=True, return_dict=True,
                                            chat_template=template, **kw)["input_ids"]
        out.append(len(ids))
    return out


def fit_max_length(demos: list[dict], tokenizer, max_length: int | None, *,
                   assistant_only_loss: bool = True) -> list[dict]:
    """The demonstrations that fit ``max_length`` tokens. TRL cuts a longer one from the
    end without a word, so its last steps (the final fixes of a long level-3 episode)
    would never be trained; they are left out instead, with a warning that says how many
    (raise ``max_length`` to keep them). ValueError when none fits."""
    if not max_length or tokenizer is None:
        return demos
    lengths = demo_lengths(demos, tokenizer, assistant_only_loss=assistant_only_loss)
    keep = [d for d, n in zip(demos, lengths) if n <= max_length]
    if not keep:
        raise ValueError(f"all {len(demos)} demonstrations are longer than max_length="
                         f"{max_length} tokens (the shortest has {min(lengths)}); raise it "
                         "(--set max_length=N)")
    if len(keep) < len(demos):
        warnings.warn(f"{len(demos) - len(keep)} of {len(demos)} demonstrations are longer "
                      f"than max_length={max_length} tokens (the longest has {max(lengths)}) "
                      "and are left out: truncated, their last steps would never be "
                      "trained; raise max_length (--set max_length=N) to keep them",
                      UserWarning, stacklevel=2)
    return keep


def sft_dataset(demos: list[dict]):
    """A ``datasets.Dataset`` with the columns SFTTrainer reads: ``messages`` (and
    ``tools`` for tool-calling demonstrations)."""
    from datasets import Dataset
    if demo_format(demos) == "tools":
        return Dataset.from_list([{"messages": d["messages"], "tools": d["tools"]} for d in demos])
    return Dataset.from_list([{"messages": d["messages"]} for d in demos])


def build_trainer(*, model, tokenizer=None, demos: list[dict], output_dir: str,
                  preset: str = "cpu-smoke", overrides: dict | None = None,
                  lora: bool = False, lora_r: int = 16, seed: int = 0):
    from trl import SFTTrainer
    from netarena_gym.train.grpo import lora_config
    if isinstance(model, Path):
        model = str(model)
    if isinstance(model, str) and tokenizer is None:
        from transformers import AutoTokenizer
        tokenizer = AutoTokenizer.from_pretrained(model)
    args = sft_config(output_dir, preset, overrides, seed=seed)
    demos = fit_max_length(demos, tokenizer, args.max_length,
                           assistant_only_loss=args.assistant_only_loss)
    return SFTTrainer(model=model, processing_class=tokenizer, args=args,
                      train_dataset=sft_dataset(demos),
                      peft_config=lora_config(r=lora_r, alpha=2 * lora_r) if lora else None)
