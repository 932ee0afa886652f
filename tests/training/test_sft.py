"""SFT on expert demonstrations with the tiny local model, and the evaluation agent."""
import functools
import json

import pytest

from netarena_gym.routing.expert import RoutingExpert
from netarena_gym.train.tools import RoutingTools
from netarena_gym.train import tools

from .conftest import ROUTING, expert_reply, load_script, requires_llm, scripted_generate

pytestmark = requires_llm


def test_sft_trains_on_assistant_turns_and_evaluates(tiny_model, tmp_path):
    from safetensors.torch import load_file
    sft = load_script("sft")
    out = tmp_path / "sft"
    summary = sft.main(["--model", str(tiny_model), "--n", "4", "--level-mix", "1:0.5,2:0.5",
                        "--seed-base", "1000002", "--max-steps", "2", "--out", str(out),
                        "--eval-levels", "1", "--eval-episodes", "1", "--eval-max-steps", "2",
                        "--eval-max-new-tokens", "4"])
    demos = [json.loads(x) for x in (out / "demos.jsonl").read_text().splitlines()]
    assert len(demos) == 4 and sorted({d["level"] for d in demos}) == [1, 2]
    assert summary["demo_levels"] == ["1", "2"]
    assert len(summary["loss"]) == 2 and all(x > 0 for x in summary["loss"])
    before = load_file(str(tiny_model / "model.safetensors"))
    after = load_file(str(out / "final" / "model.safetensors"))
    assert all(not (before[k] == after[k]).all() for k in before)
    ev = json.loads((out / "eval.json").read_text())
    assert set(ev) == {"1"}
    s = ev["1"]
    # the random tiny model cannot repair anything: the eval protocol still runs to the end
    assert s["episodes"] == 1 and s["correctness"] == 0.0 and s["mean_steps"] == 2
    assert {"correctness_ci95", "safety", "mean_reward", "by_category"} <= set(s)


def test_sft_loss_masks_observations(tiny_model):
    """Only the assistant turns (the tool calls and the closing message) are trained on."""
    from transformers import AutoTokenizer
    from netarena_gym.train.data import generate_demonstrations
    from netarena_gym.train.sft import build_trainer
    tok = AutoTokenizer.from_pretrained(str(tiny_model))
    demos = generate_demonstrations(ROUTING, n=1, seed_base=1000002)
    tr = build_trainer(model=str(tiny_model), tokenizer=tok, demos=demos, output_dir="/tmp/unused")
    row = tr.train_dataset[0]
    labels = [i for i, m in zip(row["input_ids"], row.get("assistant_masks") or
                                [1 if lab != -100 else 0 for lab in row.get("labels", [])]) if m]
    text = tok.decode(labels)
    calls = [m for m in demos[0]["messages"] if m.get("tool_calls")]
    assert text.count("<tool_call>") == len(calls) and "Done." in text
    assert "Pingall result" not in text and "You are a network operator" not in text


def test_tool_agent_executes_tool_calls_in_the_env(tiny_model):
    """The evaluation agent parses the model's Qwen3 tool calls into env actions: with
    generation scripted to the expert's calls it solves every episode."""
    from unittest.mock import patch
    from netarena_gym.agents.hf import HFToolAgent, load_model
    from netarena_gym.train.common import evaluate
    model, tok = load_model(str(tiny_model))
    agent = HFToolAgent(model, tok, ROUTING, max_new_tokens=64)

    def reply(i, text, first_call):
        return expert_reply(text, RoutingExpert, functools.partial(tools.call_of_action, RoutingTools))

    with patch.object(model, "generate", side_effect=scripted_generate(tok, reply)):
        s = evaluate(ROUTING, agent, level=1, episodes=2, seed=2, interface="text")
    assert s["correctness"] == 1.0 and s["safety"] == 1.0
    assert agent.tool_calls == agent.turns > 0
    # a reply without a tool call is an invalid action, and the env's answer comes back
    agent.reset()

    def idle(i, text, first_call):
        return "I will not act.<|im_end|>"
    with patch.object(model, "generate", side_effect=scripted_generate(tok, idle)):
        s = evaluate(ROUTING, agent, level=1, episodes=1, seed=2, interface="text",
                     env_kwargs={"max_steps": 2})
    assert s["correctness"] == 0.0 and s["mean_steps"] == 2
    last_user = agent.messages[-2]
    assert last_user["role"] == "user" and "invalid action" in last_user["content"]


def test_sft_on_generate_chat_demos_evaluates_with_the_llm_agent(tiny_model, tmp_path):
    """``netarena-gym generate``'s JSON-reply demonstrations train too; the tuned model is
    then played by the JSON-reply agent of netarena_gym.llm (its local backend)."""
    gen = pytest.importorskip("netarena_gym.eval.generate")
    pytest.importorskip("netarena_gym.llm")
    res = gen.generate(ROUTING, levels=(1,), episodes=2, seed=1_000_000,
                       out=str(tmp_path / "gen"), hf=False)  # not the evaluation's seeds
    sft = load_script("sft")
    out = tmp_path / "sft"
    summary = sft.main(["--model", str(tiny_model), "--demos", res["demos"], "--max-steps", "1",
                        "--out", str(out), "--eval-levels", "1", "--eval-episodes", "1",
                        "--eval-max-steps", "2", "--eval-max-new-tokens", "4"])
    assert summary["demo_format"] == "chat" and summary["demonstrations"] == res["demo_steps"]
    ev = summary["eval"]["1"]
    assert ev["episodes"] == 1 and ev["mean_steps"] == 2 and ev["correctness"] == 0.0


def test_tool_agent_keeps_the_task_when_the_context_overflows(tiny_model):
    from unittest.mock import patch
    from netarena_gym.agents.hf import HFToolAgent, load_model
    from netarena_gym.train.common import evaluate
    model, tok = load_model(str(tiny_model))
    agent = HFToolAgent(model, tok, ROUTING, max_new_tokens=8, max_prompt_tokens=2500)
    lengths = []

    def reply(i, text, first_call):
        lengths.append(len(tok(text)["input_ids"]))
        return ('<tool_call>\n{"name": "run", "arguments": {"machine": "r0", "command": '
                '"ip -d addr show"}}\n</tool_call><|im_end|>')
    with patch.object(model, "generate", side_effect=scripted_generate(tok, reply)):
        evaluate(ROUTING, agent, level=1, episodes=1, seed=1, interface="text",
                 env_kwargs={"max_steps": 6})
    assert len(lengths) == 6 and max(lengths) <= 2500 and lengths[-1] < 2 * lengths[1]
    assert agent.messages[1]["role"] == "user" and "Current state:" in agent.messages[1]["content"]
    assert len(agent.messages) < 2 + 2 * 6


def test_sft_reports_to_tensorboard_and_resumes(tiny_model, tmp_path):
    """``--report-to tensorboard`` writes the loss as a scalar; ``--resume`` continues from
    the last checkpoint-N (its optimizer step count) rather than from scratch."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    sft = load_script("sft")
    out = tmp_path / "sft"
    common = ["--model", str(tiny_model), "--n", "2", "--eval-levels", "none",
              "--set", "save_strategy=steps", "--set", "save_steps=2", "--out", str(out)]
    first = sft.main([*common, "--max-steps", "2", "--report-to", "tensorboard"])
    assert first["optimizer_steps"] == 2 and (out / "checkpoint-2").is_dir()
    events = list(out.rglob("events.out.tfevents*"))
    assert events
    assert "train/loss" in EventAccumulator(str(events[0].parent)).Reload().Tags()["scalars"]
    state = out / "checkpoint-2" / "trainer_state.json"
    marked = json.loads(state.read_text())
    marked["log_history"][0]["loss"] = 123.0  # a mark: only a resumed run reads it back
    state.write_text(json.dumps(marked))
    again = sft.main([*common, "--max-steps", "4", "--resume"])
    assert again["resumed_from"] == str(out / "checkpoint-2")
    assert again["optimizer_steps"] == 4
    assert again["loss"][:2] == [123.0, first["loss"][1]] and len(again["loss"]) == 4


def test_sft_trains_on_generate_sft_format_as_on_its_own_demos(tiny_model, tmp_path):
    """``generate --format sft`` rows are exactly what ``train sft`` trains on: same
    format, same conversations, one per episode, and the tool-calling evaluation."""
    from netarena_gym.eval.generate import generate
    from netarena_gym.train.data import generate_demonstrations
    res = generate(ROUTING, levels=(1,), episodes=3, seed=1_000_000, out=str(tmp_path / "gen"),
                   hf=False, demo_format="sft")
    sft = load_script("sft")
    summary = sft.main(["--model", str(tiny_model), "--demos", res["demos"], "--max-steps", "1",
                        "--out", str(tmp_path / "sft"), "--eval-levels", "1",
                        "--eval-episodes", "1", "--eval-max-steps", "1",
                        "--eval-max-new-tokens", "4"])
    assert summary["demo_format"] == "tools"
    assert summary["demonstrations"] == res["demo_conversations"] == 3
    used = [json.loads(x) for x in (tmp_path / "sft" / "demos.jsonl").read_text().splitlines()]
    assert used == generate_demonstrations(ROUTING, n=3, level_mix="1")  # TRAIN_SEED_BASE seeds
    assert summary["eval"]["1"]["episodes"] == 1


def test_demos_longer_than_max_length_are_left_out_with_a_warning(tiny_model):
    """TRL cuts a demonstration longer than max_length from the end, silently: the last
    steps of a long episode (its final fixes) were never trained. Such demonstrations
    are left out, and a warning says how many; the ones kept are trained whole."""
    import copy
    from transformers import AutoTokenizer
    from netarena_gym.train.data import generate_demonstrations
    from netarena_gym.train.sft import build_trainer, demo_lengths
    tok = AutoTokenizer.from_pretrained(str(tiny_model))
    demos = generate_demonstrations(ROUTING, n=2, seed_base=1000002)
    long = copy.deepcopy(demos[0])
    long["messages"][3]["content"] += "\nip addr show" * 400  # a long tool answer
    length = [len(tok.apply_chat_template(d["messages"], tools=json.loads(d["tools"]),
                                          tokenize=True, return_dict=True)["input_ids"])
              for d in demos + [long]]
    # exactly the longer kept one, as SFTTrainer counts it: one token too few would cut it
    max_length = max(demo_lengths(demos, tok))
    assert max_length >= max(length[:2]) and length[2] > max_length
    with pytest.warns(UserWarning, match=r"1 of 3 demonstrations are longer than "
                                         rf"max_length={max_length} tokens"):
        tr = build_trainer(model=str(tiny_model), tokenizer=tok, demos=demos + [long],
                           output_dir="/tmp/unused", overrides={"max_length": max_length})
    assert len(tr.train_dataset) == 2
    for row in tr.train_dataset:  # each kept demonstration ends with its closing turn
        assert tok.decode(row["input_ids"]).rstrip().endswith(("Done.<|im_end|>", "Done."))
    with pytest.raises(ValueError, match="all 1 demonstrations are longer than max_length"):
        build_trainer(model=str(tiny_model), tokenizer=tok, demos=[long],
                      output_dir="/tmp/unused", overrides={"max_length": max_length})


def test_sft_refuses_demonstrations_of_the_evaluation_episodes(tmp_path):
    """``netarena-gym generate --format sft`` starts at seed 0 and ``train sft`` evaluates
    seeds 0.. by default: training on them is refused before anything is trained."""
    from netarena_gym.train.data import generate_demonstrations, write_jsonl
    sft = load_script("sft")
    path = tmp_path / "demos.jsonl"
    write_jsonl(path, generate_demonstrations(ROUTING, n=2, seed_base=0))
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"2 of the 2 demonstrations come from evaluation episodes "
                                         r"\(level 1 seed 0, level 1 seed 1\)"):
        sft.main(["--demos", str(path), "--eval-levels", "1", "--eval-episodes", "5",
                  "--out", str(out)])
    assert not (out / "final").exists()
    demos = [json.loads(x) for x in path.read_text().splitlines()]
    assert sft.eval_overlap(demos, [1], 1, 5) == [(1, 1)]
    assert sft.eval_overlap(demos, [1], 2, 100) == []  # other seeds
    assert sft.eval_overlap(demos, [2], 0, 100) == []  # another level: other scenarios
