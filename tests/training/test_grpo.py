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
from netarena_gym.train.tiny import CALL_TOKENS

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
        # env-owned reward (success 1 - 0.01 per step) vs the idle rollout's stop: one
        # invalid step (-0.06), as evaluation plays a reply without a tool call
        assert 0.4 < h["rewards/RoutingTools/mean"] < 0.5
        assert h["reward"] == pytest.approx(h["rewards/RoutingTools/mean"])  # metrics weigh 0
        assert h["reward_std"] > 0.5 and h["frac_reward_zero_std"] == 0
        assert h["tools/call_frequency"] > 0 and h["tools/failure_frequency"] == 0
        assert h["netarena/acted"] == pytest.approx(0.5) and h["netarena/steps"] >= 1
        # each reward component is its own metric: the expert rollout earns success 1
        assert h["rewards/success/mean"] == pytest.approx(0.5)
        assert -0.1 < h["rewards/step/mean"] < 0
        assert h["rewards/invalid/mean"] == pytest.approx(-0.05 / 2)  # the idle one's stop
    assert driver.fake.state["calls"] > 2  # generation resumed after tool answers
    assert summary["rollout_correct"] == [0.5, 0.5]
    before, after = _weights(tiny_model), _weights(out / "final")
    changed = [k for k in before if not (before[k] == after[k]).all()]
    assert len(changed) == len(before), "every parameter tensor should move"


def test_grpo_report_to_tensorboard_and_resume(tiny_model, tmp_path):
    from transformers import AutoTokenizer
    grpo = load_script("grpo")
    tok = AutoTokenizer.from_pretrained(str(tiny_model))
    out = tmp_path / "run"
    argv = ["--model", str(tiny_model), "--episodes", "4", "--seed-base", str(SEED_BASE),
            "--set", "max_completion_length=4096", "--set", "save_strategy=steps",
            "--set", "save_steps=1", "--report-to", "tensorboard", "--out", str(out)]
    first = grpo.main(argv + ["--max-steps", "1"], patch_generate=_driver(tok))
    assert first["optimizer_steps"] == 1 and first["resumed_from"] is None
    assert list(out.rglob("events.out.tfevents.*"))
    again = grpo.main(argv + ["--max-steps", "2", "--resume"], patch_generate=_driver(tok))
    assert again["resumed_from"] == str(out / "checkpoint-1")
    # the checkpoint restores the first step's log; one more step was trained
    assert again["optimizer_steps"] == 2 and len(again["rollout_reward"]) == 2


def test_grpo_eval_uses_the_training_tool_call_limit(tiny_model, tmp_path):
    """The trained (random tiny) model never calls a tool, so every eval episode runs to
    the env's step limit: the training's 3 tool calls, not routing L1's own 15."""
    from transformers import AutoTokenizer
    grpo = load_script("grpo")
    tok = AutoTokenizer.from_pretrained(str(tiny_model))
    summary = grpo.main(["--model", str(tiny_model), "--episodes", "1", "--seed-base",
                         str(SEED_BASE), "--max-steps", "1", "--set",
                         "max_completion_length=4096", "--set", "max_tool_calling_iterations=3",
                         "--eval-episodes", "1", "--eval-max-new-tokens", "4",
                         "--out", str(tmp_path / "run")], patch_generate=_driver(tok))
    assert summary["max_tool_calling_iterations"] == 3
    assert summary["eval"]["1"]["mean_steps"] == 3
    # written as PPO and SFT write it
    written = json.loads((tmp_path / "run" / "eval.json").read_text())
    assert written == json.loads(json.dumps(summary["eval"])) and written["1"]["episodes"] == 1


def test_grpo_penalises_malformed_and_unknown_tool_calls_as_eval_does(tiny_model, tmp_path):
    """Every rollout makes a call with wrong argument names, then one of a tool that does
    not exist, then stops: each is one env step with the invalid-action penalty (TRL alone
    would answer both with an error and no step: reward 0, better than any real command),
    and the rollout's reward is what evaluation gives the same two calls and the reply
    without a tool call that ends it (played as its text, an invalid action)."""
    import gymnasium as gym
    from transformers import AutoTokenizer
    grpo = load_script("grpo")
    tok = AutoTokenizer.from_pretrained(str(tiny_model))
    calls = [("run", {"host": "r0", "cmd": "ip addr show"}), ("shell", {"machine": "r0"})]

    def reply(i, text, first_call):
        k = text.count("<tool_response>")
        if k >= len(calls):
            return "Done.<|im_end|>"
        name, args = calls[k]
        return ("<tool_call>\n" + json.dumps({"name": name, "arguments": args})
                + "\n</tool_call><|im_end|>")

    out = tmp_path / "run"
    grpo.main(["--model", str(tiny_model), "--episodes", "1", "--seed-base", str(SEED_BASE),
               "--max-steps", "1", "--set", "max_completion_length=4096", "--out", str(out)],
              patch_generate=lambda trainer: scripted_generate(tok, reply))
    step = next(json.loads(x) for x in (out / "log_history.jsonl").read_text().splitlines()
                if "rewards/RoutingTools/mean" in x)
    env = gym.make(tools.RoutingTools._env_id, level=1, interface="text")
    env.reset(seed=SEED_BASE)
    expected = sum(env.step(tools.env_action(tools.RoutingTools, n, a))[1] for n, a in calls)
    expected += env.step("Done.")[1]
    env.close()
    assert step["netarena/steps"] == 2 and step["rewards/invalid/mean"] < 0
    assert step["rewards/RoutingTools/mean"] == pytest.approx(expected) and expected < 0
    assert step["tools/failure_frequency"] == 0  # no call escaped the env as an error


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
    from netarena_gym.train.grpo import PRESETS, ROLLOUTS_PER_STEP, grpo_config
    assert set(PRESETS) == {"cpu-smoke", "single-gpu"}
    cfg = grpo_config("/tmp/x", "cpu-smoke")
    assert cfg.use_cpu and not cfg.bf16 and cfg.num_generations == 2
    # TRL 1.x needs whole groups per generation batch, not per micro-batch
    assert cfg.generation_batch_size % cfg.num_generations == 0
    # the GPU presets are valid configs (bf16 needs a GPU, so it is switched off here)
    cpu = {"bf16": False, "use_cpu": True}
    gpu = grpo_config("/tmp/x", "single-gpu", cpu, lora=True, use_vllm=True)
    assert gpu.generation_batch_size % gpu.num_generations == 0
    assert gpu.learning_rate == 1e-5 and gpu.use_vllm and gpu.vllm_mode == "colocate"
    assert gpu.model_init_kwargs == {"dtype": "bfloat16"}
    assert grpo_config("/tmp/x", "single-gpu", cpu, lora=False).learning_rate == 1e-6
    # the same rollouts per step at every level; level 3 gets the env's 40 calls
    for levels, calls, tokens in (((1,), 15, 4096), ((2,), 20, 8192), ((1, 3), 40, 16384)):
        c = grpo_config("/tmp/x", "single-gpu", cpu, use_vllm=True, levels=levels)
        assert c.max_tool_calling_iterations == calls and c.max_completion_length == tokens
        assert c.per_device_train_batch_size * c.gradient_accumulation_steps == ROLLOUTS_PER_STEP
        assert c.vllm_max_model_length > c.max_completion_length
    # overrides always win
    c = grpo_config("/tmp/x", "single-gpu", {**cpu, "max_tool_calling_iterations": 16},
                    levels=(3,))
    assert c.max_tool_calling_iterations == 16
    from netarena_gym.train.sft import sft_config
    s = sft_config("/tmp/x", "single-gpu", cpu)
    assert s.assistant_only_loss and s.max_length == 16384
    assert sft_config("/tmp/x", "cpu-smoke").use_cpu


def test_reward_weights_are_kept_or_rejected():
    from netarena_gym.train.grpo import METRIC_COLUMNS, reward_weights
    assert reward_weights({}) == [0.0] * len(METRIC_COLUMNS)
    mine = [1.0] + [0.0] * (len(METRIC_COLUMNS) - 1)
    assert reward_weights({"reward_weights": mine}) == mine
    with pytest.raises(ValueError, match="one per column"):
        reward_weights({"reward_weights": [1.0, 0.0]})


def test_dry_run_prints_plan_budget_and_memory(capsys):
    grpo = load_script("grpo")
    plan = grpo.main(["--preset", "single-gpu", "--model", "Qwen/Qwen3-1.7B", "--vllm",
                      "--level-mix", "1:0.5,2:0.3,3:0.2", "--params", "1.7e9", "--dry-run",
                      "--vocab-size", "151936"])
    assert json.loads(capsys.readouterr().out) == plan
    assert plan["levels"] == [1, 2, 3] and plan["lora"] and plan["dtype"] == "bfloat16"
    assert plan["max_tool_calling_iterations"] == 40 and plan["rollouts_per_step"] == 64
    assert plan["vllm_max_model_length"] == plan["tokens_per_rollout"]
    # logits alone: micro-batch x tokens x vocabulary x 2 bytes (bf16)
    assert plan["logits_gib"] == pytest.approx(
        plan["micro_batch"] * plan["tokens_per_rollout"] * 151936 * 2 / 2**30, abs=0.01)
    assert plan["estimate_gib"] > plan["logits_gib"] + plan["weights_gib"]


def test_training_env_and_eval_share_the_tool_call_limit():
    from netarena_gym.train.tools import make_environment_factory, make_limited_env
    e = make_environment_factory(tools.RoutingTools._env_id, max_calls=4)()
    e.reset(seed=5, level="3")
    assert e._env.unwrapped.max_steps == 4  # L3 allows 40: lowered to the trainer's limit
    e.reset(seed=5, level="1")
    assert e._env.unwrapped.max_steps == 4
    assert make_limited_env(tools.RoutingTools._env_id, 1, {}, 40).unwrapped.max_steps == 15


def test_an_explicit_env_max_steps_is_the_rollouts_tool_call_limit(tmp_path):
    """--env-kwargs '{"max_steps": 30}': the rollout env keeps 30 steps, so TRL must allow
    30 tool-calling turns too (it was the level's 15, or cpu-smoke's 4), as evaluation
    plays 30; a --set below it is refused."""
    from netarena_gym.train.grpo import grpo_config
    from netarena_gym.train.tools import make_limited_env
    kw = {"env_id": tools.RoutingTools._env_id, "levels": [1], "env_kwargs": {"max_steps": 30}}
    for preset, over in (("cpu-smoke", {}), ("single-gpu", {"bf16": False})):
        cfg = grpo_config(str(tmp_path / preset), preset, over, **kw)
        assert cfg.max_tool_calling_iterations == 30
        env = make_limited_env(kw["env_id"], 1, kw["env_kwargs"], cfg.max_tool_calling_iterations)
        assert env.unwrapped.max_steps == 30
        env.close()
    assert grpo_config(str(tmp_path / "d"), "cpu-smoke", env_id=kw["env_id"],
                       levels=[1]).max_tool_calling_iterations == 4  # no max_steps: capped
    with pytest.raises(ValueError, match="max_tool_calling_iterations=5 is below the env's "
                                         "max_steps=30"):
        grpo_config(str(tmp_path / "e"), "cpu-smoke", {"max_tool_calling_iterations": 5}, **kw)


# ------------------------------------------------------------------ direction tests
# A tiny model that calls each routing level-1 catalogue action in three tokens
# (<tool_call>, the call's body, </tool_call>); one GRPO rollout = one tool call = one env
# step (max_completion_length=CALL_TOKENS: TRL runs the call and ends the rollout, as
# benchmarks/bench_grpo_learning.py does). Completions are scripted, the rewards are the
# env's.

GOOD, BAD = "r0: flush filters", "r0: inspect"


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory):
    from netarena_gym.train.tiny import build_catalogue_model
    from netarena_gym.train.tools import catalogue_labels, make_catalogue_factory
    env_cls = make_catalogue_factory(tools.RoutingTools._env_id)
    labels = catalogue_labels(env_cls._env_id, seeds=range(1_000_000, 1_000_010))
    path = build_catalogue_model(tmp_path_factory.mktemp("cat") / "model", env_cls, labels,
                                 corpus_seeds=range(1_000_000, 1_000_020), hidden_size=16,
                                 vocab_size=600)
    return env_cls, labels, path


def _replay(env_cls, seed, label):
    e = env_cls()
    e.reset(seed=seed, level="1")
    e.act(label)
    return e.get_reward(), e._metrics()["correct"]


def _seeds(env_cls, want_good_solves: bool, n=1, start=1_000_000):
    """Training seeds where GOOD does (or does not) solve the scenario in one step."""
    out = []
    s = start
    while len(out) < n:
        if (_replay(env_cls, s, GOOD)[1] == 1.0) == want_good_solves:
            out.append(s)
        s += 1
    return out


def _trainer(env_cls, path, rows, *, batch, lr=0.0, optim="adamw_torch"):
    import os
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer
    from netarena_gym.train.grpo import metric_reward_funcs, reward_weights
    tok = AutoTokenizer.from_pretrained(str(path), padding_side="left")
    cfg = GRPOConfig(output_dir=str(path.parent / "run"), use_cpu=True, bf16=False,
                     per_device_train_batch_size=batch, num_generations=2, max_steps=1,
                     max_completion_length=CALL_TOKENS, max_tool_calling_iterations=1,
                     learning_rate=lr, optim=optim, beta=0.0, report_to="none",
                     save_strategy="no", logging_steps=1, reward_weights=reward_weights({}),
                     log_completions=True, num_completions_to_print=0,
                     chat_template_kwargs={"enable_thinking": False})
    trainer = GRPOTrainer(model=str(path), processing_class=tok, args=cfg,
                          reward_funcs=metric_reward_funcs(),
                          train_dataset=Dataset.from_list(rows), environment_factory=env_cls)
    return trainer, tok


def _scripted(choose):
    """``model.generate`` that appends one catalogue call per row: the token ids
    ``choose(i, input_ids_row)`` returns."""
    import torch
    seen = []

    def generate(*args, **kw):
        ids = kw.get("input_ids", args[0] if args else None)
        seen.append(ids.clone())
        picks = torch.tensor([choose(i, row) for i, row in enumerate(ids)])
        return torch.cat([ids, picks.to(ids.device)], dim=1)
    generate.seen = seen
    return generate


def _logp(model, prompt_ids, call):
    """log p of the body of ``call`` (its ids) after the prompt and ``<tool_call>``."""
    import torch
    with torch.no_grad():
        ctx = torch.cat([prompt_ids, torch.tensor(call[:1])])
        logits = model(input_ids=ctx[None]).logits[0, -1].float()
    return float(torch.log_softmax(logits, -1)[call[1]])


def test_one_grpo_step_raises_the_rewarded_call_and_lowers_the_penalised_one(catalogue):
    """Both rollouts see the same scenario; GOOD solves it (env reward ~ +0.99), BAD only
    inspects (-0.01). After one GRPO step, log p(GOOD | prompt) rises and log p(BAD |
    prompt) falls. Swapping rewards between rollouts, or an update of the wrong sign,
    makes both asserts fail."""
    from unittest.mock import patch
    from transformers import AutoModelForCausalLM
    from netarena_gym.train.tiny import catalogue_call_ids, catalogue_rows
    env_cls, labels, path = catalogue
    (seed,) = _seeds(env_cls, True)
    trainer, tok = _trainer(env_cls, path, catalogue_rows(env_cls, 1, seed_base=seed),
                            batch=2, lr=0.5, optim="sgd")
    good, bad = (catalogue_call_ids(tok, x) for x in (GOOD, BAD))
    gen = _scripted(lambda i, row: good if i % 2 == 0 else bad)
    with patch.object(trainer.model, "generate", side_effect=gen):
        trainer.train()
    prompt = gen.seen[0][0]
    assert (gen.seen[0][1] == prompt).all()  # one group: the same scenario twice
    before = AutoModelForCausalLM.from_pretrained(str(path))
    rewards = trainer._logs["rewards"][env_cls.__name__]
    assert list(rewards) == pytest.approx([_replay(env_cls, seed, GOOD)[0],
                                           _replay(env_cls, seed, BAD)[0]])
    assert rewards[0] > 0.9 and rewards[1] < 0
    adv = list(trainer._logs["advantages"])
    assert adv[0] > 0 > adv[1]
    trainer.model.eval()
    assert _logp(trainer.model, prompt, good) > _logp(before, prompt, good) + 1e-3
    assert _logp(trainer.model, prompt, bad) < _logp(before, prompt, bad) - 1e-3


def test_each_rollout_is_scored_by_its_own_env(catalogue):
    """Two scenarios x two rollouts, each rollout a different action (a fix, an
    inspection, an action the episode lacks: invalid, the same fix on a scenario it does
    not solve), so the four env rewards differ. Every logged reward equals a fresh replay
    of that rollout's own scenario and action; correctness likewise."""
    from unittest.mock import patch
    from netarena_gym.train.tiny import catalogue_call_ids, catalogue_rows
    env_cls, labels, path = catalogue
    (s1,) = _seeds(env_cls, True)
    (s2,) = _seeds(env_cls, False)
    masked = labels[-1]  # the last slot (highest interface): not every scenario has it
    masked_seed = next(s for s in (s1, s2) if _replay(env_cls, s, masked)[0] < -0.05)
    rows = catalogue_rows(env_cls, 1, seed_base=s1) + catalogue_rows(env_cls, 1, seed_base=s2)
    trainer, tok = _trainer(env_cls, path, rows, batch=4)
    tid = {x: catalogue_call_ids(tok, x) for x in (GOOD, BAD, masked)}
    obs = {}
    for s in (s1, s2):
        e = env_cls()
        obs[s] = e.reset(seed=s, level="1")

    def choose(i, row):
        text = tok.decode(row)
        seed = next(s for s in (s1, s2) if obs[s].strip() in text)
        if seed == masked_seed and i % 2 == 1:
            return tid[masked]
        return tid[GOOD] if i % 2 == 0 else tid[BAD]

    with patch.object(trainer.model, "generate", side_effect=_scripted(choose)):
        trainer.train()
    logs = trainer._logs
    rewards = list(logs["rewards"][env_cls.__name__])
    correct = list(logs["rewards"]["correct"])
    assert len(rewards) == 4 and len(set(round(r, 6) for r in rewards)) >= 3
    for prompt, completion, r, c in zip(logs["prompt"], logs["completion"], rewards, correct):
        seed = next(s for s in (s1, s2) if prompt[-1]["content"].endswith(obs[s]))
        label = completion[0]["tool_calls"][0]["function"]["arguments"]["action"]
        want_r, want_c = _replay(env_cls, seed, label)
        assert r == pytest.approx(want_r) and c == want_c, (seed, label)
