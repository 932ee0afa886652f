"""``netarena-gym report`` on small runs: one episode, one shared episode, labels."""
from __future__ import annotations

import json

from netarena_gym.eval import EvalSpec, evaluate
from tests.eval.conftest import run_cli

ENV = "NetArena-Routing-v0"


def test_report_on_runs_sharing_exactly_one_episode(tmp_path, capsys):
    """sample_sizes(1) was [2, 1]: 'Cannot take a larger sample than population'; and a
    one-episode run has no interval of its mean steps."""
    evaluate(EvalSpec(ENV, episodes=1, agent="expert"), out=str(tmp_path / "a"))
    evaluate(EvalSpec(ENV, episodes=3, agent="random"), out=str(tmp_path / "b"))
    rc, _, err = run_cli(capsys, "report", tmp_path / "a", tmp_path / "b", "--no-figures",
                         "--subsamples", 5, "--out", tmp_path / "r")
    assert rc == 0, err
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["overlap"][ENV]["correct"]["n"] == [1]
    assert data["runs"][0]["summary"]["steps_ci95"] == [None, None]
    assert "Traceback" not in err


def test_more_labels_than_runs_is_an_error(tmp_path, capsys):
    evaluate(EvalSpec(ENV, episodes=2), out=str(tmp_path / "a"))
    rc, _, err = run_cli(capsys, "report", tmp_path / "a", "--label", "A", "--label", "B",
                         "--no-figures", "--out", tmp_path / "r")
    assert rc == 2 and "argument --label: 2 labels for 1 run" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "r").exists()
    rc, _, err = run_cli(capsys, "report", tmp_path / "a", "--label", "A", "--no-figures",
                         "--out", tmp_path / "r")
    assert rc == 0, err
    assert json.loads((tmp_path / "r" / "report.json").read_text())["runs"][0]["label"] == "A"
