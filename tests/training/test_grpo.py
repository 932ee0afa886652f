"""GRPO with environment_factory on the tiny local model: scripted completions drive the
rollouts (one rollout per group follows the expert through real tool calls, the other
answers without calling a tool), so the env's reward, correctness and safety must reach
the trainer, and the group's reward difference must move the weights."""
import functools
import json

import pytest

from netarena_gym.routing.expert import RoutingExpert
from netarena_gym.train.tools import RoutingTools
from netarena_gym.train import tools

from .conftest import expert_reply, load_script, requires_llm, scripted_generate

pytestmark = requires_llm

# two small level-1 scenarios (short inspection outputs keep the sequences short on CPU)
SEED_BASE = 1_000_002


def _weights(path):
    from safetensors.torch import load_file
    return load_file(str(path / "model.safetensors"))


def _driver(tok):
    def reply(i, text, first_call):
        if first_call and i % 2 == 1:
            return "Nothing to do here.<|im_end|>"
        return expert_reply(text, RoutingExpert, functools.partial(tools.call_of_action, RoutingTools))

    def make(trainer):
        fake = scripted_generate(tok, reply)
        make.fake = fake
        return fake
    return make


def test_grpo_env_reward_and_tool_calls_reach_the_trainer(tiny_model, tmp_path):
    from transformers import AutoTokenizer
    grpo = load_script("grpo")
    tok = AutoTokenizer.from_pretrained(str(tiny_model))
    driver = _driver(tok)
    out = tmp_path / "run"
    summary = grpo.main(["--model", str(tiny_model), "--preset", "cpu-smoke",
                         "--episodes", "2", "--seed-base", str(SEED_BASE), "--max-steps", "2",
                         "--set", "max_completion_length=4096", "--out", str(out)],
                        patch_generate=driver)
    log = [json.loads(x) for x in (out / "log_history.jsonl").read_text().splitlines()]
    steps = [h for h in log if "rewards/correct/mean" in h]
    assert len(steps) == 2
    for h in steps:
        # the expert rollout solved its scenario through tool calls, the idle one did not
        assert h["rewards/correct/mean"] == pytest.approx(0.5)
        assert h["rewards/safe/mean"] == pytest.approx(1.0)
        # env-owned reward (success 1 - 0.01 per step) vs 0 for the idle rollout
        assert 0.4 < h["rewards/RoutingTools/mean"] < 0.5
        assert h["reward"] == pytest.approx(h["rewards/RoutingTools/mean"])  # metrics weigh 0
        assert h["reward_std"] > 0.5 and h["frac_reward_zero_std"] == 0
        assert h["tools/call_frequency"] > 0 and h["tools/failure_frequency"] == 0
        assert h["netarena/acted"] == pytest.approx(0.5) and h["netarena/steps"] >= 1
    assert driver.fake.state["calls"] > 2  # generation resumed after tool answers
    assert summary["rollout_correct"] == [0.5, 0.5]
    before, after = _weights(tiny_model), _weights(out / "final")
    changed = [k for k in before if not (before[k] == after[k]).all()]
    assert len(changed) == len(before), "every parameter tensor should move"


def test_grpo_lora_trains_adapters_only(tiny_model, tmp_path):
    from transformers import AutoTokenizer
    grpo = load_script("grpo")
    tok = AutoTokenizer.from_pretrained(str(tiny_model))
    out = tmp_path / "lora"
    grpo.main(["--model", str(tiny_model), "--episodes", "1", "--seed-base", str(SEED_BASE),
               "--max-steps", "1", "--lora", "--lora-r", "2", "--reward-components",
               "success,safety", "--set", "max_completion_length=4096",
               "--set", "learning_rate=0.1", "--out", str(out)],
              patch_generate=_driver(tok))
    assert (out / "final" / "adapter_config.json").exists()
    log = [json.loads(x) for x in (out / "log_history.jsonl").read_text().splitlines()]
    step = next(h for h in log if "rewards/RoutingTools/mean" in h)
    # only success counts: the expert rollout earns exactly 1, the idle one 0
    assert step["rewards/RoutingTools/mean"] == pytest.approx(0.5)
    from safetensors.torch import load_file
    adapters = load_file(str(out / "final" / "adapter_model.safetensors"))
    lora_b = [v for k, v in adapters.items() if "lora_B" in k]
    assert lora_b and any(v.abs().sum() > 0 for v in lora_b)  # B starts at zero


def test_grpo_cli_rejects_unknown_env_and_preset(tmp_path):
    grpo = load_script("grpo")
    with pytest.raises(SystemExit):
        grpo.main(["--preset", "nope", "--out", str(tmp_path)])
    with pytest.raises(ValueError, match="no tool environment"):
        from netarena_gym.train.grpo import build_trainer
        build_trainer(env_id="NetArena-Nope-v0", model="unused", tokenizer=object(),
                      output_dir=str(tmp_path))


def test_presets_document_cpu_and_gpu():
    from netarena_gym.train.grpo import PRESETS, grpo_config
    assert set(PRESETS) == {"cpu-smoke", "single-gpu"}
    cfg = grpo_config("/tmp/x", "cpu-smoke")
    assert cfg.use_cpu and not cfg.bf16 and cfg.num_generations == 2
    assert cfg.per_device_train_batch_size % cfg.num_generations == 0
    g = PRESETS["single-gpu"]
    assert g["per_device_train_batch_size"] % g["num_generations"] == 0
    # the GPU presets are valid configs (bf16 needs a GPU, so it is switched off here)
    cpu = {"bf16": False, "use_cpu": True}
    gpu = grpo_config("/tmp/x", "single-gpu", cpu, lora=True, use_vllm=True)
    assert gpu.generation_batch_size % gpu.num_generations == 0
    assert gpu.learning_rate == 1e-5 and gpu.use_vllm and gpu.vllm_mode == "colocate"
    assert grpo_config("/tmp/x", "single-gpu", cpu).learning_rate == 1e-6
    from netarena_gym.train.sft import sft_config
    s = sft_config("/tmp/x", "single-gpu", cpu)
    assert s.assistant_only_loss and s.max_length == 16384
    assert sft_config("/tmp/x", "cpu-smoke").use_cpu
