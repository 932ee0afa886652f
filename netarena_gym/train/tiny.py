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
                    episodes: int = 2, extra_tokens: tuple[str, ...] | list[str] = (),
                    corpus: list[str] | None = None, across_words: bool = False):
    """A byte-level BPE ``PreTrainedTokenizerFast`` with Qwen3's control tokens and template.

    ``extra_tokens`` become single (non-special) tokens, e.g. the bodies of tool calls, so a
    model can choose a tool call in one token between the call's control tokens (see
    :func:`build_catalogue_model` and ``benchmarks/bench_grpo_learning.py``).
    ``corpus`` replaces the default training text (the expert's conversations);
    ``across_words`` lets merges span spaces and punctuation, so text that repeats in the
    corpus (a system prompt, a tool schema, rows of a pingall) becomes few, long tokens
    and sequences get several times shorter."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False,
                                                  use_regex=not across_words)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus if corpus is not None else _corpus(env_ids, episodes),
                            trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", padding_side="left")
    fast.add_tokens(list(ADDED), special_tokens=False)
    if extra_tokens:
        fast.add_tokens(list(extra_tokens), special_tokens=False)
    fast.chat_template = qwen3_chat_template()
    return fast


def build_tiny_model(out_dir: str | Path, env_ids: list[str] | None = None, *,
                     hidden_size: int = 16, layers: int = 2, heads: int = 4,
                     kv_heads: int = 2, vocab_size: int = 600, seed: int = 0,
                     extra_tokens: tuple[str, ...] | list[str] = (),
                     corpus: list[str] | None = None, across_words: bool = False) -> Path:
    """Write a tiny ``Qwen3ForCausalLM`` and its tokenizer to ``out_dir``; return the path.
    ``extra_tokens``, ``corpus`` and ``across_words`` as in :func:`build_tokenizer`."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(env_ids, vocab_size=vocab_size, extra_tokens=extra_tokens,
                          corpus=corpus, across_words=across_words)
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


CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"


def tool_call_body(name: str, arguments: dict) -> str:
    """What a Qwen3 tool call holds between its ``<tool_call>`` and ``</tool_call>`` tokens."""
    return "\n" + json.dumps({"name": name, "arguments": arguments}) + "\n"


def tool_call_text(name: str, arguments: dict) -> str:
    """A Qwen3 tool call as the model writes it."""
    return CALL_OPEN + tool_call_body(name, arguments) + CALL_CLOSE


CALL_TOKENS = 3
"""Tokens of one catalogue call of :func:`build_catalogue_model`'s model."""


def catalogue_call_ids(tok, label: str) -> list[int]:
    """The token ids of the catalogue call ``act(label)`` for a model of
    :func:`build_catalogue_model`: ``<tool_call>``, the call's body, ``</tool_call>``."""
    ids = [tok.convert_tokens_to_ids(t) for t in
           (CALL_OPEN, tool_call_body("act", {"action": label}), CALL_CLOSE)]
    if any(i is None or i == tok.unk_token_id for i in ids):
        raise KeyError(f"{label!r} is not one of this tokenizer's catalogue calls")
    return ids


def constrain_to_catalogue(model, tok, labels: list[str]) -> None:
    """Make ``model.generate`` write only catalogue calls: ``<tool_call>``, the body of one
    of ``labels``' calls, ``</tool_call>``, then the end of the message, through
    ``generate``'s ``prefix_allowed_tokens_fn`` (the tokens allowed at each position)."""
    calls = [catalogue_call_ids(tok, x) for x in labels]
    steps = [[calls[0][0]], [c[1] for c in calls], [calls[0][2]], [tok.eos_token_id]]
    generate = model.generate

    def constrained(*args, **kw):
        ids = kw.get("input_ids", args[0] if args else None)
        start = ids.shape[-1]

        def allowed(batch_id, sent):
            return steps[min(sent.shape[-1] - start, len(steps) - 1)]
        return generate(*args, prefix_allowed_tokens_fn=allowed, **kw)
    model.generate = constrained


def catalogue_rows(env_cls, n: int, *, level=1, seed_base: int) -> list[dict]:
    """``n`` GRPO dataset rows (seeds ``seed_base + i``) for a catalogue tool class
    (:func:`netarena_gym.train.tools.make_catalogue_factory`), with its system prompt."""
    from netarena_gym.train.data import TASK_PROMPT
    from netarena_gym.train.tools import system_prompt
    return [{"env_id": env_cls._env_id, "level": str(level), "seed": seed_base + i,
             "prompt": [{"role": "system", "content": system_prompt(env_cls)},
                        {"role": "user", "content": TASK_PROMPT}]} for i in range(n)]


def prompt_text(tok, env, row: dict) -> str:
    """Reset ``env`` (a catalogue tool env) to ``row`` and return the prompt text a GRPO
    rollout of that row sees (TRL appends the first observation to the last message and
    renders the tools with the chat template)."""
    first = env.reset(**row)
    msgs = [row["prompt"][0], {"role": "user", "content": row["prompt"][1]["content"] + first}]
    return tok.apply_chat_template(msgs, tools=[env.act], add_generation_prompt=True,
                                   enable_thinking=False, tokenize=False)


def build_catalogue_model(out_dir: str | Path, env_cls, labels: list[str], *, level=1,
                          corpus_seeds=range(1_000_000, 1_000_300), vocab_size: int = 2000,
                          **model_kw) -> Path:
    """A tiny model that can call each catalogue action of ``labels`` in three tokens
    (:func:`catalogue_call_ids`): the ``<tool_call>`` control token, one token for the
    call's body (``tool_call_body("act", {"action": label})``), ``</tool_call>``. The
    control tokens are the model's own ids, as a real Qwen3 writes them: response parsers
    of transformers >= 5.13 find a call only between those ids, never in the spelling of
    an ordinary token. Its tokenizer is trained on the prompts
    of the ``corpus_seeds`` scenarios with merges across words, so a routing level-1
    prompt is ~100 tokens instead of ~1,100; pass training seeds only."""
    template = build_tokenizer([env_cls._env_id], vocab_size=300, corpus=["x"])
    env = env_cls()
    seeds = list(corpus_seeds)
    corpus = [prompt_text(template, env, r)
              for r in catalogue_rows(env_cls, len(seeds), level=level, seed_base=seeds[0])]
    return build_tiny_model(out_dir, [env_cls._env_id], vocab_size=vocab_size,
                            extra_tokens=[tool_call_body("act", {"action": x}) for x in labels],
                            corpus=corpus, across_words=True, **model_kw)


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
