"""``netarena-gym generate --format sft``: one tool-calling conversation per solved
episode, with no step repeated across rows, exactly the demonstrations ``train sft``
generates and trains on."""
from __future__ import annotations

import pytest

from tests.eval.conftest import read_jsonl, run_cli

pytest.importorskip("transformers", reason='tool schemas need transformers: pip install -e ".[llm]"')

ROUTING = "NetArena-Routing-v0"


def test_sft_format_is_what_train_sft_generates_and_loads(tmp_path, capsys):
    from netarena_gym.train.data import (demo_record, expert_episodes, read_demonstrations,
                                         to_prompt_completion)
    from netarena_gym.train.sft import demo_format
    rc, stdout, _ = run_cli(capsys, "generate", "--env", ROUTING, "--level", "1", "3",
                            "--episodes", 3, "--seed", 40, "--format", "sft", "--no-hf",
                            "--out", tmp_path / "gen")
    assert rc == 0 and "demo_conversations" in stdout
    rows = read_jsonl(tmp_path / "gen" / "demos.jsonl")
    want = [demo_record(ep) for lvl in (1, 3)
            for ep in expert_episodes(ROUTING, level=lvl, seeds=range(40, 43))]
    assert rows == want and len(rows) >= 5  # the expert solves (nearly) all of them
    loaded = read_demonstrations(tmp_path / "gen" / "demos.jsonl")
    assert loaded == rows and demo_format(loaded) == "tools"
    to_prompt_completion(loaded[0])
    # one row per episode, each step once: as many tool calls as steps, no repeated prefix
    assert len({(r["level"], r["seed"]) for r in rows}) == len(rows)
    for r in rows:
        calls = [m for m in r["messages"] if m.get("tool_calls")]
        assert len(calls) == r["steps"] == sum(m["role"] == "tool" for m in r["messages"])
        assert [m["role"] for m in r["messages"][:2]] == ["system", "user"]
        assert sum(m["role"] == "user" for m in r["messages"]) == 1


def test_sft_format_keeps_the_hf_copy_and_refuses_raw_text(tmp_path, capsys):
    datasets = pytest.importorskip("datasets", reason='needs datasets: pip install -e ".[report]"')
    rc, _, _ = run_cli(capsys, "generate", "--env", ROUTING, "--episodes", 2, "--format", "sft",
                       "--out", tmp_path / "hf")
    assert rc == 0
    ds = datasets.load_from_disk(str(tmp_path / "hf" / "hf"))
    assert ds["demos"].num_rows == len(read_jsonl(tmp_path / "hf" / "demos.jsonl"))
    assert ds["demos"][0]["messages"][2]["tool_calls"][0]["function"]["name"] == "run"


def test_sft_format_needs_json_actions(tmp_path, capsys):
    rc, _, err = run_cli(capsys, "generate", "--env", "NetArena-CapacityPlanning-v0",
                         "--interface", "code", "--episodes", 1, "--format", "sft", "--no-hf",
                         "--out", tmp_path / "cp")
    assert rc != 0 and "--format sft needs a text interface with JSON actions" in err
