"""``netarena-gym eval``: records, summaries, workers, resume, progress, errors."""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from netarena_gym.eval import EvalSpec, evaluate, load_run
from netarena_gym.eval.progress import Progress
from netarena_gym.eval.store import RunStore
from tests.eval.conftest import comparable, first_level, read_jsonl, run_cli

RECORD_KEYS = {"key", "env", "level", "seed", "agent", "scenario", "category", "trajectory",
               "errors", "correct", "safe", "safe_compat", "steps", "total_reward",
               "reward_components", "agent_seconds", "env_seconds", "metrics",
               "initial_observation", "max_steps"}


@pytest.mark.parametrize("agent", ["expert", "random"])
def test_eval_writes_records_and_summary_on_every_env(env_id, agent, tmp_path, capsys):
    level = first_level(env_id)
    out = tmp_path / agent
    rc, stdout, _ = run_cli(capsys, "eval", "--env", env_id, "--agent", agent, "--level", level,
                            "--episodes", 6, "--seed", 3, "--out", out, "--format", "json",
                            "--quiet")
    assert rc == 0
    s = json.loads(stdout)
    for k in ("env", "level", "episodes", "correctness", "safety", "safety_compat",
              "mean_steps", "mean_agent_seconds", "by_category", "by_level", "upstream"):
        assert k in s, k
    assert s["env"] == env_id and s["level"] == level and s["episodes"] == 6
    assert json.loads((out / "summary.json").read_text())["correctness"] == s["correctness"]
    recs = read_jsonl(out / "episodes.jsonl")
    assert sorted(r["seed"] for r in recs) == list(range(3, 9))
    for r in recs:
        assert RECORD_KEYS <= set(r)
        assert r["scenario"]["task"] and r["initial_observation"]
        assert len(r["trajectory"]) == r["steps"] >= 1
        step = r["trajectory"][0]
        assert step["action"] and step["observation"] and isinstance(step["components"], dict)
        assert r["errors"] == []
        assert abs(sum(t["reward"] for t in r["trajectory"]) - r["total_reward"]) < 1e-9
    corr = sum(r["correct"] for r in recs) / 6
    assert s["correctness"] == pytest.approx(corr)
    lo, hi = s["correctness_ci95"]
    assert lo <= s["correctness"] <= hi
    if agent == "expert":
        assert s["correctness"] >= 5 / 6  # every env's expert solves (nearly) everything


def test_levels_summary_has_each_level_and_category(tmp_path, capsys):
    rc, stdout, _ = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent", "random",
                            "--level", "1", "2", "--episodes", 8, "--out", tmp_path / "r",
                            "--format", "json", "--quiet")
    assert rc == 0
    s = json.loads(stdout)
    assert s["level"] == [1, 2] and s["episodes"] == 16
    assert set(s["by_level"]) == {"1", "2"}
    for b in s["by_level"].values():
        assert b["episodes"] == 8
        assert sum(c["episodes"] for c in b["by_category"].values()) == 8
        for key in ("correctness", "safety", "safety_compat"):
            lo, hi = b[f"{key}_ci95"]
            assert 0 <= lo <= b[key] <= hi <= 1
    up = s["upstream"]
    assert up["avg_correctness"] == s["correctness"]
    assert up["avg_safety"] == s["safety_compat"]
    assert up["score"] == pytest.approx(50 * (s["correctness"] + s["safety_compat"]))


def test_table_output_is_readable(capsys):
    rc, stdout, _ = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent", "expert",
                            "--level", "1", "--episodes", 3, "--quiet")
    assert rc == 0
    assert "correctness   100.00%" in stdout and "(all)" in stdout


@pytest.mark.parametrize("agent", ["expert", "random"])
def test_two_workers_give_the_same_episodes_as_one(agent, tmp_path, capsys):
    runs = {}
    for w in (1, 2):
        out = tmp_path / f"w{w}"
        rc, _, _ = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent", agent,
                           "--level", "1", "3", "--episodes", 6, "--seed", 11,
                           "--workers", w, "--out", out, "--quiet")
        assert rc == 0
        runs[w] = {r["key"]: comparable(r) for r in read_jsonl(out / "episodes.jsonl")}
    assert len(runs[1]) == 12
    assert runs[1] == runs[2]
    s1 = json.loads((tmp_path / "w1" / "summary.json").read_text())
    s2 = json.loads((tmp_path / "w2" / "summary.json").read_text())
    assert s2["executor"] == "processes"
    for k in ("correctness", "safety", "safety_compat", "mean_steps"):
        assert s1[k] == s2[k]
    cats = {w: {c: (b["episodes"], b["correctness"], b["safety"], b["mean_steps"])
                for c, b in s["by_category"].items()} for w, s in ((1, s1), (2, s2))}
    assert cats[1] == cats[2]


def test_resume_skips_finished_episodes_and_repairs_a_torn_line(tmp_path):
    spec = EvalSpec("NetArena-Routing-v0", levels=(1,), episodes=10, seed=5, agent="random")
    out = tmp_path / "run"

    seen = []

    def interrupt_after_4(rec):
        seen.append(rec["key"])
        if len(seen) == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evaluate(spec, out=str(out), on_record=interrupt_after_4)
    recs = read_jsonl(out / "episodes.jsonl")
    assert len(recs) == 4 and not (out / "summary.json").exists()
    with open(out / "episodes.jsonl", "a") as f:  # a kill in the middle of a write
        f.write('{"key": "NetArena-Routing-v0|1|99", "trunc')
    s = evaluate(spec, out=str(out))
    assert s["episodes_resumed"] == 4 and s["episodes_played"] == 6 and s["episodes"] == 10
    recs = read_jsonl(out / "episodes.jsonl")
    assert len(recs) == 10 and len({r["key"] for r in recs}) == 10
    fresh = evaluate(spec, out=str(tmp_path / "fresh"))
    assert fresh["correctness"] == s["correctness"] and fresh["safety"] == s["safety"]
    again = evaluate(spec, out=str(out))  # nothing left to play
    assert again["episodes_played"] == 0 and again["episodes"] == 10
    more = evaluate(EvalSpec(**{**spec.to_dict(), "episodes": 12, "levels": (1,)}), out=str(out))
    assert more["episodes_played"] == 2 and more["episodes"] == 12


def test_resume_after_the_process_is_killed(tmp_path):
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "netarena_gym.cli", "eval", "--env", "NetArena-Routing-v0",
           "--agent", "tests.eval.helper_agents:SlowExpert", "--level", "1", "--episodes", "40",
           "--out", str(out), "--quiet", "--format", "json"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    records = out / "episodes.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if records.exists() and records.read_text().count("\n") >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    n_before = records.read_text().count("\n")
    assert 3 <= n_before < 40
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    s = json.loads(res.stdout)
    assert s["episodes_resumed"] == n_before and s["episodes"] == 40
    assert s["episodes_played"] == 40 - n_before and s["correctness"] == 1.0
    keys = [r["key"] for r in read_jsonl(records)]
    assert len(keys) == len(set(keys)) == 40


def test_resume_into_another_configuration_is_refused(tmp_path, capsys):
    out = tmp_path / "r"
    assert run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent", "expert",
                   "--episodes", 2, "--out", out, "--quiet")[0] == 0
    rc, _, err = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent", "random",
                         "--episodes", 2, "--out", out, "--quiet")
    assert rc == 2 and "another configuration" in err
    rc, stdout, _ = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent", "random",
                            "--episodes", 2, "--out", out, "--quiet", "--overwrite",
                            "--format", "json")
    assert rc == 0 and json.loads(stdout)["agent"] == "random"


def test_out_as_jsonl_file_keeps_the_first_cli_behaviour(tmp_path, capsys):
    f = tmp_path / "episodes.jsonl"
    assert run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--episodes", 3,
                   "--out", f, "--quiet")[0] == 0
    assert len(read_jsonl(f)) == 3
    assert RunStore(f).summary_path.exists()


def test_an_agent_that_raises_is_recorded_not_fatal(tmp_path, capsys):
    rc, stdout, _ = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent",
                            "tests.eval.helper_agents:CrashOnSecondStep", "--level", "1",
                            "--episodes", 3, "--out", tmp_path / "c", "--format", "json",
                            "--quiet")
    assert rc == 0
    s = json.loads(stdout)
    assert s["episodes_with_errors"] == 3 and s["correctness"] == 0.0
    rec = read_jsonl(tmp_path / "c" / "episodes.jsonl")[0]
    assert rec["errors"][0]["where"] == "agent" and "step 2" in rec["errors"][0]["message"]
    assert rec["steps"] == 1


def test_bad_arguments_fail_with_a_message(capsys):
    rc, _, err = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent", "nope")
    assert rc == 2 and "unknown agent" in err
    rc, _, err = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--level", "9")
    assert rc == 2 and "level" in err
    rc, _, err = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent", "expert",
                         "--interface", "discrete")
    assert rc == 2 and "--interface text" in err
    rc, _, err = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--episodes", "0")
    assert rc == 2


def test_discrete_interface_records_the_rendered_command(tmp_path, capsys):
    rc, _, _ = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent", "random",
                       "--interface", "discrete", "--episodes", 2, "--out", tmp_path / "d",
                       "--quiet")
    assert rc == 0
    step = read_jsonl(tmp_path / "d" / "episodes.jsonl")[0]["trajectory"][0]
    assert isinstance(step["action"], int) and set(step["command"]) == {"machine", "command"}


def test_progress_bar_shows_counts_rate_and_eta_and_is_off_without_a_terminal(capsys):
    buf = io.StringIO()
    p = Progress(4, done=1, correct=1, safe=1, stream=buf, enabled=True, min_interval=0,
                 label="NetArena-Routing-v0 expert ")
    for ok in (False, True, True):
        p.update({"correct": ok, "safe": True})
    p.close()
    text = buf.getvalue()
    last = text.rsplit("\r", 1)[-1]  # rich redraws the line in place
    assert text.count("\r") >= 3 and "NetArena-Routing-v0 expert" in last
    assert "4/4" in last and "correct  75.0%" in last and "safe 100.0%" in last
    assert "ep/s" in last and "eta" in last
    quiet = io.StringIO()
    p = Progress(3, stream=quiet)  # enabled=None: only on a terminal
    p.update({"correct": True, "safe": True})
    p.close()
    assert quiet.getvalue() == ""
    rc, _, err = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--episodes", 2)
    assert rc == 0 and "\r" not in err and "ep/s" not in err  # stderr is no terminal here
    rc, _, err = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--episodes", 2,
                         "--progress")
    assert rc == 0 and "2/2" in err and "ep/s" in err  # --progress forces it


def test_loading_a_run_back(tmp_path):
    s = evaluate(EvalSpec("NetArena-Routing-v0", levels=(1,), episodes=3), out=str(tmp_path))
    summary, recs = load_run(tmp_path)
    assert summary["correctness"] == s["correctness"] and len(recs) == 3


def test_out_never_takes_over_a_file_that_is_not_a_run(tmp_path, capsys):
    """``--out other.jsonl`` appended to any JSONL file and cut it at its first bad line; a
    generate output's queries were read as finished episodes (KeyError traceback)."""
    other = tmp_path / "other.jsonl"
    text = '{"a": 1}\nnot json line\n{"b": 2}\n'
    other.write_text(text)
    rc, _, err = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--episodes", 1,
                         "--out", other, "--quiet")
    assert rc == 2 and "not a run of netarena-gym eval" in err
    assert other.read_text() == text and not other.with_suffix(".run.json").exists()


def test_a_bad_line_inside_a_run_refuses_resume_and_leaves_the_file(tmp_path, capsys):
    out = tmp_path / "run"
    assert run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--episodes", 2,
                   "--out", out, "--quiet")[0] == 0
    records = out / "episodes.jsonl"
    lines = records.read_text().splitlines(keepends=True)
    for bad in ("not json\n", '{"key": "x"}\n', "[1, 2]\n"):
        records.write_text(lines[0] + bad + lines[1])
        rc, _, err = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--episodes", 3,
                             "--out", out, "--quiet")
        assert rc == 2 and "episodes.jsonl:2" in err, err
        assert records.read_text() == lines[0] + bad + lines[1]


def test_load_run_names_what_is_not_a_run(tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"key": "k", "env": "e", "scenario": {}}\n')
    with pytest.raises(ValueError, match=r"q.jsonl:1: not an episode record .*'correct'"):
        load_run(queries)
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "episodes.jsonl").write_text("3\n")
    with pytest.raises(ValueError, match="a JSON int, not an object"):
        load_run(tmp_path / "r")
    (tmp_path / "r" / "summary.json").write_text("[1]")
    with pytest.raises(ValueError, match="not a run summary"):
        load_run(tmp_path / "r")


def test_report_refuses_what_is_not_a_run_and_zero_subsamples(tmp_path, capsys):
    run = tmp_path / "run"
    assert run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--episodes", 2,
                   "--out", run, "--quiet")[0] == 0
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"key": "k", "env": "NetArena-Routing-v0", "scenario": {}}\n')
    for args, says in [((run, run, "--subsamples", 0), "argument --subsamples: must be >= 1"),
                       ((run, run, "--subsamples", -5), "argument --subsamples: must be >= 1"),
                       ((queries,), "queries.jsonl:1: not an episode record")]:
        rc, _, err = run_cli(capsys, "report", *args, "--no-figures", "--out", tmp_path / "r")
        assert rc == 2 and says in err and "Traceback" not in err
