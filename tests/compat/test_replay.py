"""The compat-replay core: reading results files, the loop, the table, the JSONL, the CLI."""
import json

import pytest

from netarena_gym import cli
from netarena_gym.compat import replay
from tests.compat import upstream_records as ur


def _run(capsys, *argv):
    rc = cli.main(["compat-replay", *map(str, argv), "--quiet"])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("content,fragment", [
    ("", "not JSON"),
    ("{\"x\": 1}", "without 'results'"),
    ("{\"results\": 3}", "'results' must be a list"),
    ("{\"results\": [1]}", "results[0] is a int"),
    ("{\"results\": [{\"avg_correctness\": 1}]}", "no records"),
    ("{\"results\": [{\"foo\": 1}]}", "not an upstream route, K8s or MALT record"),
    ("{\"results\": [{\"error_type\": \"remove_ip\", \"log_content\": 3}]}", "missing 'error_detail'"),
    ("{\"a\": 1}\n{\"b\": [}\n", "neither JSON nor JSONL (line 2"),
])
def test_a_bad_file_is_one_line_and_exit_status_2(tmp_path, capsys, content, fragment):
    f = tmp_path / "results.json"
    f.write_text(content)
    rc, out, err = _run(capsys, f)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and fragment in err and "Traceback" not in err
    assert err.startswith("compat-replay: ") and str(f) in err


def test_a_missing_file_is_named(tmp_path, capsys):
    rc, _, err = _run(capsys, tmp_path / "nope.json")
    assert rc == 2 and "nope.json: no such file" in err


def test_bad_field_types_name_the_record_and_key(tmp_path, capsys, route_faithful):
    rec = dict(route_faithful[0], success="yes")
    f = ur.write_json(tmp_path / "r.json", ur.leaderboard([route_faithful[0], rec], {}))
    rc, _, err = _run(capsys, f)
    assert rc == 2 and "results[1]: 'success' must be bool, got str" in err


def test_mixed_tasks_are_refused(tmp_path, capsys, route_faithful):
    malt = {"Query": "List all the child nodes of ju1.a1.m1. Return a list of child node names.",
            "LLM code": "", "Result-Correctness": "Fail", "Result-Safety": "Fail"}
    f = ur.write_json(tmp_path / "r.json", [route_faithful[0], malt])
    rc, _, err = _run(capsys, f)
    assert rc == 2 and "several tasks" in err


def test_faithful_file_agrees_and_writes_jsonl_and_summary(tmp_path, capsys, route_faithful):
    f = ur.write_json(tmp_path / "r.json", ur.leaderboard(route_faithful, {"avg_correctness": 1.0}))
    rc, out, _ = _run(capsys, f, "--out", tmp_path / "out")
    assert rc == 0
    assert out.splitlines()[0] == f"compat-replay: routing, 2 case(s) from {f}"
    assert "cases agreeing on every check: 2/2" in out
    rows = [json.loads(x) for x in (tmp_path / "out" / "differences.jsonl").read_text().splitlines()]
    assert [r["agree"] for r in rows] == [True, True] and all(r["differences"] == [] for r in rows)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["cases"] == 2 and summary["cases_agreeing"] == 2
    checks = {c["check"]: c for c in summary["checks"]}
    assert set(checks) >= {"initial", "state", "output", "executed", "success", "safe", "iterations"}
    assert all(c["differ"] == 0 and c["compared"] > 0 for c in checks.values())


def test_differences_exit_0_and_are_counted(tmp_path, capsys, route_faithful):
    bad = dict(route_faithful[0], safe=not route_faithful[0]["safe"])
    f = ur.write_json(tmp_path / "r.json", [bad])
    rc, out, _ = _run(capsys, f, "--out", tmp_path / "o")
    assert rc == 0 and "cases agreeing on every check: 0/1" in out
    row = json.loads((tmp_path / "o" / "differences.jsonl").read_text())
    assert row["agree"] is False
    assert [d["check"] for d in row["differences"]] == ["safe"]


def test_jsonl_input_and_bare_lists_are_read(tmp_path, route_faithful):
    f = tmp_path / "r.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in route_faithful) + "\n")
    assert replay.load_records(f) == route_faithful
    f2 = ur.write_json(tmp_path / "r2.json", route_faithful)
    assert replay.load_records(f2) == route_faithful


def test_normalise_output_and_prefixes():
    assert replay.strip_prefix("p42_r0-eth1 and p7_h3 but not up42_x") == "r0-eth1 and h3 but not up42_x"
    assert replay.normalise_output("a   b  \n\n p42_r0 \n") == "a b\nr0"
    assert replay.normalise_output(None) == ""
    obs = "Pingall result:\n...\n\nMachine: r0\nCommand: x\nOutput:\nline1\nline2\n\nSteps left: 3\n"
    assert replay.output_of(obs) == "line1\nline2"
    assert replay.output_of("...\nOutput:\n(no output)\n\nSteps left: 1\n") == ""


def test_progress_bar_counts_cases_on_stderr(tmp_path, capsys, route_faithful):
    f = ur.write_json(tmp_path / "r.json", ur.leaderboard(route_faithful, {"avg_correctness": 1.0}))
    assert cli.main(["compat-replay", str(f), "--progress"]) == 0
    captured = capsys.readouterr()
    assert "compat-replay" in captured.err and "2/2" in captured.err and "case/s" in captured.err
    assert "2/2" not in captured.out.splitlines()[0]  # the table on stdout stays clean
    assert cli.main(["compat-replay", str(f), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_a_lone_record_is_a_file_of_one_case(tmp_path, capsys, route_faithful):
    """A one-query JSONL file is one JSON object; it was refused for lacking 'results'."""
    f = tmp_path / "one.jsonl"
    f.write_text(json.dumps(route_faithful[0]) + "\n")
    rc, out, _ = _run(capsys, f)
    assert rc == 0 and "1 case(s)" in out and "cases agreeing on every check: 1/1" in out


@pytest.mark.parametrize("argv, says", [
    (["--hosts-per-subnet", "0"], "argument --hosts-per-subnet: must be >= 1"),
    (["--num-switches", "0"], "argument --num-switches: must be >= 1"),
    (["--num-switches", "100000"], "argument --num-switches: must be <= 8"),
    (["--hosts-per-subnet", "-1"], "argument --hosts-per-subnet: must be >= 1"),
])
def test_topology_flags_out_of_range_are_usage_errors(tmp_path, capsys, route_faithful,
                                                      argv, says):
    """0 divided by zero; others made every case 'differ' and exited 0."""
    f = ur.write_json(tmp_path / "r.json", ur.leaderboard(route_faithful, {}))
    rc, _, err = _run(capsys, f, *argv)
    assert rc == 2 and says in err


@pytest.mark.parametrize("field, value, says", [
    ("num_switches", "two", "'num_switches' must be an integer 1..8"),
    ("num_switches", 2.5, "'num_switches' must be an integer 1..8"),
    ("num_hosts_per_subnet", 0, "'num_hosts_per_subnet' must be an integer 1..4"),
    ("error_type", [1], "'error_type' must be a string or a list of strings"),
])
def test_bad_record_topology_and_types_are_bad_files(tmp_path, capsys, route_faithful,
                                                     field, value, says):
    rec = dict(route_faithful[0], **{field: value})
    if field == "error_type":
        rec["error_detail"] = [{}]
    f = ur.write_json(tmp_path / "r.json", ur.leaderboard([rec], {}))
    rc, _, err = _run(capsys, f)
    assert rc == 2 and says in err and "Traceback" not in err


def test_out_that_is_a_file_is_refused_before_the_replay(tmp_path, capsys, route_faithful):
    f = ur.write_json(tmp_path / "r.json", ur.leaderboard(route_faithful, {}))
    (tmp_path / "afile").write_text("")
    rc, out, err = _run(capsys, f, "--out", tmp_path / "afile")
    assert rc == 2 and "exists and is not a directory" in err and out == ""


def test_out_through_a_file_or_under_a_missing_parent_is_refused(tmp_path, capsys,
                                                                 route_faithful):
    """compat-replay made any missing parents (eval's --out makes them only inside the
    working directory), and an --out through a file was a NotADirectoryError traceback."""
    f = ur.write_json(tmp_path / "r.json", ur.leaderboard(route_faithful, {}))
    (tmp_path / "afile").write_text("")
    rc, out, err = _run(capsys, f, "--out", tmp_path / "afile" / "sub")
    assert rc == 2 and "afile is not a directory" in err and out == ""
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    rc, out, err = _run(capsys, f, "--out", tmp_path / "no" / "such" / "dir")
    assert rc == 2 and "does not exist" in err and not (tmp_path / "no").exists()
    rc, out, err = _run(capsys, f, "--out", tmp_path / "made", "--quiet")
    assert rc == 0 and (tmp_path / "made" / "differences.jsonl").is_file()
