"""The ``transformers`` backend with a tiny randomly initialised Qwen3 built here (no hub)."""
from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch", reason="needs torch (pip install torch==2.13.0, the CPU "
                                            "wheel)")
transformers = pytest.importorskip("transformers", reason="needs transformers")
tokenizers = pytest.importorskip("tokenizers", reason="needs tokenizers")

from netarena_gym.eval import EvalSpec, evaluate  # noqa: E402

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    import gymnasium as gym
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    env = gym.make("NetArena-Routing-v0")
    corpus = [env.reset(seed=s)[0] for s in range(5)] + [
        '{"machine": "r0", "command": "ip addr show"}', "sysctl -w net.ipv4.ip_forward=1"]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tok.train_from_iterator(corpus * 4, trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", bos_token=None)
    fast.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    cfg = Qwen3Config(vocab_size=len(fast), hidden_size=16, intermediate_size=32,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      head_dim=4, max_position_embeddings=8192,
                      eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    model = Qwen3ForCausalLM(cfg)
    path = tmp_path_factory.mktemp("tiny-qwen3")
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return str(path)


def test_tiny_local_model_plays_episodes_and_records_its_calls(tiny_model, tmp_path):
    spec = EvalSpec("NetArena-Routing-v0", levels=(1,), episodes=2, agent="llm", max_steps=2,
                    agent_options={"provider": "transformers", "model": tiny_model,
                                   "max_tokens": 6, "history": 1})
    s = evaluate(spec, out=str(tmp_path / "tiny"))
    assert s["episodes"] == 2 and s["episodes_with_errors"] == 0
    assert s["llm"]["calls"] == 4 and s["llm"]["failed_calls"] == 0
    with open(tmp_path / "tiny" / "episodes.jsonl") as f:
        rec = json.loads(f.readline())
    call = rec["trajectory"][0]["llm"]
    assert call["prompt_tokens"] > 100 and 1 <= call["completion_tokens"] <= 6
    assert call["latency_s"] > 0 and isinstance(call["reply"], str)
    assert rec["steps"] == 2
    # a random model's babble does not parse: an invalid action, penalised by the env
    for t in rec["trajectory"]:
        if not t["llm"]["parsed"]:
            assert t["kind"] == "invalid" and t["components"]["invalid"] < 0
