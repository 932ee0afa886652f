"""A tiny tool-calling causal LM built locally, for tests and CPU smoke runs.

No hub download: a byte-level BPE tokenizer is trained with ``tokenizers`` on text the
training scripts actually produce (the system prompts, tool schemas, observations and
expert commands of the registered envs), the chat template is TRL's bundled Qwen3 one
(so TRL recognises the family, attaches its tool-call response parser and its training
template), and the model is a randomly initialised ``Qwen3ForCausalLM`` of a few
thousand parameters. It cannot solve anything; it exercises every code path.

    python -m netarena_gym.train.tiny /tmp/tiny-qwen3
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

# Qwen3's control tokens: the first three are special (never produced by splitting
# text), the rest are ordinary added tokens, as in the real Qwen3 tokenizer, so decoding
# keeps them and TRL's response parser can find tool calls.
SPECIAL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
ADDED = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>",
         "</think>")


def qwen3_chat_template() -> str:
    """TRL's bundled Qwen3 chat template (tool calling, prefix preserving)."""
    from trl.chat_template_utils import qwen3_chat_template as tpl
    return tpl


def _corpus(env_ids: list[str] | None, episodes: int) -> list[str]:
    """Text the tokenizer should segment well: what the envs and the expert produce."""
    from netarena_gym.train.data import expert_episodes, render_conversation
    from netarena_gym.train.tools import TOOL_CLASSES
    import netarena_gym
    out = [json.dumps({"name": "run", "arguments": {"machine": "r0", "command": "ip addr show"}})]
    for env_id in env_ids or sorted(netarena_gym.ENV_IDS):
        if env_id not in TOOL_CLASSES:
            continue
        for level in (1, 3):
            for ep in expert_episodes(env_id, level=level, seeds=range(episodes)):
                out.append(json.dumps(render_conversation(ep, env_id)))
    return out


def build_tokenizer(env_ids: list[str] | None = None, *, vocab_size: int = 600,
                    episodes: int = 2):
    """A byte-level BPE ``PreTrainedTokenizerFast`` with Qwen3's control tokens and template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(_corpus(env_ids, episodes), trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", padding_side="left")
    fast.add_tokens(list(ADDED), special_tokens=False)
    fast.chat_template = qwen3_chat_template()
    return fast


def build_tiny_model(out_dir: str | Path, env_ids: list[str] | None = None, *,
                     hidden_size: int = 16, layers: int = 2, heads: int = 4,
                     kv_heads: int = 2, vocab_size: int = 600, seed: int = 0) -> Path:
    """Write a tiny ``Qwen3ForCausalLM`` and its tokenizer to ``out_dir``; return the path."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(env_ids, vocab_size=vocab_size)
    torch.manual_seed(seed)
    cfg = Qwen3Config(vocab_size=len(tok), hidden_size=hidden_size,
                      intermediate_size=2 * hidden_size, num_hidden_layers=layers,
                      num_attention_heads=heads, num_key_value_heads=kv_heads,
                      head_dim=hidden_size // heads, max_position_embeddings=32768,
                      tie_word_embeddings=True, bos_token_id=None,
                      eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    model = Qwen3ForCausalLM(cfg)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m netarena_gym.train.tiny OUT_DIR", file=sys.stderr)
        return 2
    path = build_tiny_model(argv[0])
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
