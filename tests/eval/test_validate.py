"""Checks of command-line values: levels each once; output directories."""
from __future__ import annotations

import json

from netarena_gym.eval import EvalSpec
from netarena_gym.eval.validate import check_levels
from tests.eval.conftest import read_jsonl, run_cli

ENV = "NetArena-Routing-v0"


def test_a_repeated_level_is_played_once():
    assert check_levels(ENV, ["1", 1, "2", "1"]) == (1, 2)
    spec = EvalSpec(ENV, levels=(1, "1", 2, 1), episodes=2)
    assert spec.levels == (1, 2) and len(spec.jobs()) == 4


def test_eval_and_generate_with_level_1_1_play_each_episode_once(tmp_path, capsys):
    rc, out, err = run_cli(capsys, "eval", "--env", ENV, "--level", 1, 1, "--episodes", 2,
                           "--format", "json", "--quiet", "--out", tmp_path / "run")
    assert rc == 0, err
    assert json.loads(out)["episodes"] == 2
    assert len(read_jsonl(tmp_path / "run" / "episodes.jsonl")) == 2
    rc, _, err = run_cli(capsys, "generate", "--env", ENV, "--level", 1, 1, "--episodes", 2,
                         "--no-demos", "--no-hf", "--quiet", "--out", tmp_path / "gen")
    assert rc == 0, err
    assert len(read_jsonl(tmp_path / "gen" / "queries.jsonl")) == 2
