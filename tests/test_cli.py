"""``netarena-gym``: help texts, one-line usage errors with status 2, counts, --out."""
from __future__ import annotations

import json

import pytest

from netarena_gym.cli import main
from netarena_gym.eval.table import episodes_text

ROUTING = "NetArena-Routing-v0"


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("argv, names", [
    (["eval", "--env", ROUTING, "--env-option", "foo=1"],
     ["--env-option", "'foo'", "valid keys:", "probe_timeout", "fault_types"]),
    (["eval", "--env", ROUTING, "--env-option", "max_steps=abc"],
     ["--env-option", "max_steps", "takes int"]),
    (["eval", "--env", ROUTING, "--env-option", "probe_timeout=fast"],
     ["--env-option", "probe_timeout", "takes float"]),
    (["eval", "--env", "NetArena-K8sPolicy-v0", "--env-option", "fault_types=3"],
     ["--env-option", "fault_types", "a JSON list"]),
    (["eval", "--env", ROUTING, "--env-option", "novalue"], ["--env-option", "KEY=VALUE"]),
    (["eval", "--env", ROUTING, "--level", "9"], ["--level", "9", "valid: 1, 2, 3, compat"]),
    (["eval", "--env", "NetArena-CapacityPlanning-v0", "--level", "5"],
     ["--level", "valid: 1, 2, 3, 4, compat"]),
    (["eval", "--env", ROUTING, "--agent", "nope"], ["--agent", "expert, random"]),
    (["eval", "--env", "Nope-v0"], ["--env", "NetArena-Routing-v0"]),
    (["eval", "--env", ROUTING, "--interface", "voice"], ["--interface", "text, discrete"]),
    (["eval", "--env", ROUTING, "--episodes", "0"], ["--episodes", ">= 1"]),
    (["eval", "--env", ROUTING, "--seed", "-1"], ["--seed", ">= 0", "-1"]),
    (["generate", "--env", ROUTING, "--seed", "-1", "--out", "/tmp/na-gen-neg", "--no-hf"],
     ["--seed", ">= 0"]),
    (["eval", "--env", ROUTING, "--max-steps", "0"], ["--max-steps", ">= 1"]),
    (["eval", "--env", ROUTING, "--env-option", "reward=5", "--episodes", "1"],
     ["--env-option", "reward must be a RewardConfig"]),
    (["eval", "--env", ROUTING, "--env-option", 'topology={"routers": "2"}',
      "--episodes", "1"], ["--env-option", "topology routers must be"]),
    (["eval", "--env", ROUTING, "--backend", "nope", "--episodes", "1"],
     ["--backend", "'sim', 'mininet'"]),
    (["eval", "--env", ROUTING, "--env-option", "observability=none", "--episodes", "1"],
     ["--env-option", "'partial', 'full'"]),
    (["eval", "--env", ROUTING, "--episodes", "many"], ["--episodes", "invalid int"]),
    (["eval", "--env", ROUTING, "--by", "colour"], ["--by", "category", "type", "level"]),
    (["eval", "--env", ROUTING, "--out", "/nonexistent/deep/dir"],
     ["--out", "/nonexistent/deep", "does not exist"]),
    (["generate", "--env", ROUTING, "--out", "/nonexistent/deep/dir", "--no-hf"],
     ["--out", "does not exist"]),
    (["report", "/nonexistent/run", "--no-figures"], ["no such run"]),
    (["eval"], ["--env"]),
    (["frobnicate"], ["COMMAND", "eval"]),
])
def test_every_invalid_option_is_one_line_naming_it_with_status_2(capsys, argv, names):
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    line = one_error_line(err)
    assert line.startswith("netarena-gym")
    for name in names:
        assert name in line, (name, line)


def test_out_never_creates_a_deep_tree(tmp_path, capsys, monkeypatch):
    deep = tmp_path / "a" / "b"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # the target is outside the working directory
    rc, _, err = run(capsys, "eval", "--env", ROUTING, "--episodes", 1, "--out", deep)
    assert rc == 2 and not (tmp_path / "a").exists() and str(tmp_path / "a") in err
    rc, _, err = run(capsys, "eval", "--env", ROUTING, "--episodes", 1, "--out",
                     tmp_path / "a", "--quiet")
    assert rc == 0 and (tmp_path / "a" / "episodes.jsonl").exists()
    assert f"wrote {tmp_path / 'a' / 'episodes.jsonl'} (1 episodes)" in err


def test_out_creates_missing_parents_inside_the_working_directory(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, _, err = run(capsys, "eval", "--env", ROUTING, "--episodes", 1, "--out", "runs/expert",
                     "--quiet")
    assert rc == 0 and (tmp_path / "runs" / "expert" / "episodes.jsonl").exists()
    assert "wrote runs/expert/episodes.jsonl" in err


def test_help_shows_defaults_and_examples_without_rst(capsys):
    for argv in (["--help"], ["eval", "--help"], ["generate", "--help"], ["report", "--help"],
                 ["train", "--help"], ["train", "ppo", "--help"], ["train", "sft", "--help"]):
        rc, out, _ = run(capsys, *argv)
        assert rc == 0, argv
        assert "examples:\n  netarena-gym " in out, argv
        assert "``" not in out and ":class:" not in out, argv
    rc, out, _ = run(capsys, "eval", "--help")
    assert "(default: 100)" in out and "(default: category)" in out
    assert out.count("\n  netarena-gym eval ") >= 2
    rc, out, _ = run(capsys, "train", "ppo", "--help")
    assert "(default: 200000)" in out


def test_header_counts_episodes_per_level_and_in_total(capsys):
    rc, out, _ = run(capsys, "eval", "--env", ROUTING, "--agent", "random", "--level", 1, 2,
                     "--episodes", 3, "--quiet")
    assert rc == 0
    assert "episodes=3 per level, 6 total" in out.splitlines()[0]
    rc, out, _ = run(capsys, "eval", "--env", ROUTING, "--episodes", 2, "--quiet")
    assert out.splitlines()[0].endswith("episodes=2")
    uneven = {"levels": [1, 2], "episodes": 5, "episodes_per_level": 3,
              "by_level": {"1": {"episodes": 3}, "2": {"episodes": 2}}}
    assert episodes_text(uneven) == "episodes=3/2 per level, 5 total"


def test_env_options_reach_the_env_with_their_types(tmp_path, capsys):
    rc, out, _ = run(capsys, "eval", "--env", "NetArena-K8sPolicy-v0", "--episodes", 2,
                     "--env-option", 'fault_types=["change_port"]', "--format", "json",
                     "--quiet", "--out", tmp_path / "k")
    assert rc == 0
    recs = [json.loads(x) for x in (tmp_path / "k" / "episodes.jsonl").read_text().splitlines()]
    assert {r["category"] for r in recs} == {"change_port"}
    spec = json.loads((tmp_path / "k" / "run.json").read_text())
    assert spec["env_options"] == {"fault_types": ["change_port"]}


def test_generate_estimates_its_size_and_asks_for_yes(tmp_path, capsys):
    args = ("generate", "--env", ROUTING, "--episodes", 3, "--no-hf", "--quiet")
    rc, out, err = run(capsys, *args, "--out", tmp_path / "g", "--size-limit", 0.001)
    assert rc == 2 and "--yes" in one_error_line(err) and "kB" in err
    assert not (tmp_path / "g").exists()  # refused before writing anything
    rc, out, err = run(capsys, *args, "--out", tmp_path / "g", "--size-limit", 0.001, "--yes")
    assert rc == 0 and f"wrote {tmp_path / 'g'}" in err
    lines = dict(x.split(": ", 1) for x in out.splitlines())
    assert lines["query_count"] == "3"
    est, real = int(lines["estimated_bytes"]), int(lines["bytes"])
    assert 0.5 * real <= est <= 2 * real  # the sample extrapolates to the right order


def test_a_run_with_env_options_resumes(tmp_path, capsys):
    args = ("eval", "--env", "NetArena-K8sPolicy-v0", "--env-option",
            'fault_types=["change_port"]', "--quiet", "--out", tmp_path / "r")
    assert run(capsys, *args, "--episodes", 2)[0] == 0
    rc, out, err = run(capsys, *args, "--episodes", 3, "--format", "json")
    assert rc == 0, err
    s = json.loads(out)
    assert s["episodes_resumed"] == 2 and s["episodes_played"] == 1


@pytest.mark.parametrize("flag, value, says", [
    ("--timeout", "0", "must be > 0"), ("--timeout", "-1", "must be > 0"),
    ("--max-tokens", "0", "must be >= 1"), ("--temperature", "-3", "must be >= 0"),
    ("--temperature", "nan", "must be a finite number"), ("--history", "-1", "must be >= 0"),
    ("--max-retries", "-1", "must be >= 0")])
def test_llm_settings_out_of_range_are_usage_errors(flag, value, says, capsys):
    """They were passed on: every model call failed and the run exited 0 at 0%."""
    rc = main(["eval", "--env", "NetArena-Routing-v0", "--agent", "llm", "--model", "m",
               "--base-url", "http://127.0.0.1:9/v1", "--episodes", "1", flag, value])
    err = capsys.readouterr().err
    assert rc == 2 and f"argument {flag}: {says}" in err


@pytest.mark.parametrize("setup, says", [
    ("missing", "NETARENA_KUBECONFIG is {tmp}/nope.yaml, which is not a file"),
    ("malformed", "the kubernetes backend could not be set up (ParserError"),
    ("option", "--env-option kubeconfig is {tmp}/gone, which is not a file"),
])
def test_a_kubernetes_backend_without_a_usable_kubeconfig_is_one_line(
        tmp_path, capsys, monkeypatch, setup, says):
    """FileNotFoundError and yaml tracebacks; a missing NETARENA_KUBECONFIG file was
    reported as 'set NETARENA_KUBECONFIG'."""
    argv = ["eval", "--env", "NetArena-K8sPolicy-v0", "--backend", "kubernetes",
            "--episodes", 1, "--quiet"]
    if setup == "missing":
        monkeypatch.setenv("NETARENA_KUBECONFIG", str(tmp_path / "nope.yaml"))
    elif setup == "malformed":
        (tmp_path / "kc.yaml").write_text("garbage: [\n")
        monkeypatch.setenv("NETARENA_KUBECONFIG", str(tmp_path / "kc.yaml"))
    else:
        monkeypatch.delenv("NETARENA_KUBECONFIG", raising=False)
        argv += ["--env-option", f"kubeconfig={tmp_path / 'gone'}"]
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and out == ""
    assert says.format(tmp=tmp_path) in one_error_line(err)


@pytest.mark.parametrize("command", ["eval", "generate", "report"])
def test_out_through_a_file_is_one_line(tmp_path, capsys, monkeypatch, command):
    """Inside the working directory, where --out's missing parents are made: a
    NotADirectoryError traceback."""
    from pathlib import Path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    out = Path("afile") / "sub"
    if command == "report":
        assert run(capsys, "eval", "--env", ROUTING, "--episodes", 1, "--quiet",
                   "--out", tmp_path / "r")[0] == 0
        argv = ["report", tmp_path / "r", "--no-figures"]
    else:
        argv = [command, "--env", ROUTING, "--episodes", 1, "--quiet"]
        argv += ["--no-hf"] if command == "generate" else []
    for o in (out, out / "deeper", Path("afile") / "run.jsonl"):
        if command != "eval" and o.suffix == ".jsonl":
            continue
        rc, _, err = run(capsys, *argv, "--out", o)
        assert rc == 2 and "afile" in one_error_line(err) and "directory" in err


def test_a_closed_stdout_ends_quietly(tmp_path):
    """`eval ... | head` printed a BrokenPipeError traceback."""
    import os
    import subprocess
    import sys

    r, w = os.pipe()
    os.close(r)  # the reader is gone before anything is written
    try:
        p = subprocess.run([sys.executable, "-m", "netarena_gym.cli", "eval", "--env", ROUTING,
                            "--episodes", "2", "--quiet"], stdout=w, stderr=subprocess.PIPE,
                           text=True, timeout=300)
    finally:
        os.close(w)
    assert p.returncode == 141 and p.stderr == "", p.stderr
