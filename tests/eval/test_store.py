"""The files of a run: run.json is the run, malformed ones are refused in one line, and
loading a run back keeps only the jobs of its run.json."""
from __future__ import annotations

import json

import pytest

from netarena_gym.eval import EvalSpec, evaluate, load_run
from netarena_gym.eval.store import RunMismatch, read_spec

from tests.eval.conftest import run_cli

ENV = "NetArena-Routing-v0"


def test_a_run_resumed_smaller_loads_back_as_its_run_json_says(tmp_path):
    """A resume with fewer episodes or levels rewrites run.json and summarises only those
    jobs; episodes.jsonl keeps the earlier lines, which load_run (and report) left in."""
    evaluate(EvalSpec(ENV, levels=(1, 2), episodes=3, agent="random"), out=str(tmp_path))
    small = evaluate(EvalSpec(ENV, levels=(2,), episodes=2, agent="random"), out=str(tmp_path))
    assert len((tmp_path / "episodes.jsonl").read_text().splitlines()) == 6
    summary, recs = load_run(tmp_path)
    assert sorted(r["key"] for r in recs) == [f"{ENV}|2|0", f"{ENV}|2|1"]
    assert summary["episodes"] == small["episodes"] == len(recs) == 2


def test_report_shows_the_numbers_of_run_json_after_a_smaller_resume(tmp_path, capsys):
    run = tmp_path / "run"
    for args in (("--level", 1, 2, "--episodes", 4), ("--level", 2, "--episodes", 2)):
        assert run_cli(capsys, "eval", "--env", ENV, "--agent", "random", *args,
                       "--out", run, "--quiet")[0] == 0
    summary = json.loads((run / "summary.json").read_text())
    rc, _, err = run_cli(capsys, "report", run, run, "--no-figures", "--out", tmp_path / "r")
    assert rc == 0, err
    got = json.loads((tmp_path / "r" / "report.json").read_text())["runs"][0]["summary"]
    for k in ("episodes", "correctness", "safety", "safety_compat", "mean_steps"):
        assert got[k] == summary[k], k
    assert list(got["by_level"]) == ["2"]


@pytest.mark.parametrize("text", ["[]", "{}", '{"env": "NetArena-Routing-v0", "colour": 1}',
                                  "not json", '{"env": "NetArena-Routing-v0", "levels": 3}'])
def test_a_malformed_run_json_is_one_line_not_a_traceback(tmp_path, capsys, text):
    run = tmp_path / "run"
    assert run_cli(capsys, "eval", "--env", ENV, "--episodes", 1, "--out", run,
                   "--quiet")[0] == 0
    (run / "run.json").write_text(text)
    with pytest.raises(RunMismatch, match="not a run.json of netarena-gym eval"):
        read_spec(run / "run.json")
    rc, out, err = run_cli(capsys, "eval", "--env", ENV, "--episodes", 1, "--out", run,
                           "--quiet")
    assert rc == 2 and "not a run.json of netarena-gym eval" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    rc, _, err = run_cli(capsys, "report", run, "--no-figures", "--out", tmp_path / "r")
    assert rc == 2 and "not a run.json" in err and len(err.strip().splitlines()) == 1
    assert run_cli(capsys, "eval", "--env", ENV, "--episodes", 1, "--out", run, "--quiet",
                   "--overwrite")[0] == 0
