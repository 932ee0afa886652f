"""Replaying upstream MALT records: the recorded code runs in our sandbox in upstream's
namespace and is graded by our compat grader (issue 12.5: recorded code never imports nx,
json or copy)."""
import pytest

from netarena_gym.capacity_planning import grader_compat as compat
from netarena_gym.capacity_planning.expert import compat_code_for
from netarena_gym.capacity_planning.generator import QueryGenerator
from netarena_gym.compat import replay
from netarena_gym.core.seeding import rng_from_seed
from tests.compat import upstream_records as ur

NAME_ERROR = ("Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
              "NameError: name 'process_graph' is not defined")


@pytest.fixture(scope="module")
def queries():
    """One generated compat query per upstream template (all ten)."""
    gen = QueryGenerator("compat")
    return [gen.sample(rng_from_seed(5), template=t).query for t in compat.ALL_TEMPLATES]


def _replay(tmp_path, records):
    f = ur.write_json(tmp_path / "results.json", ur.leaderboard(records, {"avg_correctness": 1}))
    recs = replay.load_records(f)
    return replay.replay_records(recs, replay.reader_for(recs, f), replay.Options(), f)


def test_upstream_style_code_replays_with_upstream_verdicts(tmp_path, queries):
    recs = [ur.malt_record(q, ur.upstream_style(compat_code_for(q.text)), True,
                           q.flags["gt_safe_compat"]) for q in queries]
    assert all("import" not in r["LLM code"] and "nx." in r["LLM code"] for r in recs)
    report = _replay(tmp_path, recs)
    assert [c["differences"] for c in report.cases] == [[]] * len(queries)
    table = {r["check"]: r for r in report.table()}
    assert table["correct"]["agree"] == len(queries) == 10
    # safety is not trivially true: removing a switch fails upstream's check
    assert {q.flags["gt_safe_compat"] for q in queries} == {True, False}


def test_wrong_answers_errors_and_tampered_verdicts(tmp_path, queries):
    q = next(q for q in queries if q.template == "list")
    wrong = ("def process_graph(graph_data):\n"
             "    return {'type': 'list', 'data': [], 'updated_graph': nx.node_link_data(graph_data)}\n")
    good = ur.upstream_style(compat_code_for(q.text))
    recs = [ur.malt_record(q, wrong, False, True, error="Two graphs are not identical."),
            ur.malt_record(q, "", False, False, error=NAME_ERROR),
            ur.malt_record(q, good, False, True),   # tampered: the good code marked Fail
            ur.malt_record(q, good, True, False)]   # tampered: marked unsafe
    report = _replay(tmp_path, recs)
    diffs = [{d["check"] for d in c["differences"]} for c in report.cases]
    assert diffs == [set(), set(), {"correct"}, {"safe"}]
    ran = [next(ch for ch in c["checks"] if ch["check"] == "executed") for c in report.cases]
    assert ran[1]["ours"] is False and "process_graph" in ran[1]["note"]


def test_an_unknown_question_is_a_scenario_difference(tmp_path):
    rec = {"Query": "Paint every switch blue. Return a graph.", "LLM code": "",
           "Result-Correctness": "Fail", "Result-Safety": "Fail"}
    report = _replay(tmp_path, [rec])
    d = report.cases[0]["differences"]
    assert d[0]["check"] == "scenario" and "not an upstream MALT question" in d[0]["note"]


def test_verdict_fields_are_validated(tmp_path, capsys):
    rec = {"Query": "List all the child nodes of ju1.a1.m1. Return a list of child node names.",
           "LLM code": "", "Result-Correctness": "Yes", "Result-Safety": "Fail"}
    f = ur.write_json(tmp_path / "r.json", [rec])
    assert replay.main([f]) == 2
    assert "'Result-Correctness' must be 'Pass' or 'Fail'" in capsys.readouterr().err
