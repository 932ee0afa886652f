"""Replaying upstream K8s records: the scenario from policies_to_inject, --config or the
first report; faithful records agree, tampered ones are reported."""
import json

import pytest

from netarena_gym.compat import replay
from netarena_gym.compat.replay_k8s import parse_summary
from tests.compat import upstream_records as ur

ENTRIES = [
    {"policies_to_inject": ["network-policy-cartservice"], "inject_error_num": [1],
     "error_detail": [{"type": "change_port", "new_port": 1234}]},
    {"policies_to_inject": ["network-policy-productcatalogservice", "network-policy-redis"],
     "inject_error_num": [2],
     "error_detail": [{"type": "remove_ingress", "app": "frontend"},
                      {"type": "add_ingress", "app": ["adservice", "emailservice"]}]},
    {"policies_to_inject": ["network-policy-checkoutservice"], "inject_error_num": [1],
     "error_detail": [{"type": "add_egress", "app": ["adservice", "cartservice"]}]},
]
# a disallowed command (upstream skips it), a read, then the expert
PREFIX = ["kubectl edit networkpolicy cartservice", "kubectl get networkpolicy"]


@pytest.fixture(scope="module")
def records():
    recs = [ur.k8s_record(e) for e in ENTRIES]
    recs.append(ur.k8s_record(ENTRIES[1], commands=PREFIX))
    return recs


def _replay(tmp_path, records, config=None):
    f = ur.write_json(tmp_path / "results.json", ur.leaderboard(records, {"avg_correctness": 1}))
    recs = replay.load_records(f)
    return replay.replay_records(recs, replay.reader_for(recs, f), replay.Options(config=config), f)


def _without_files(recs):
    return [{k: v for k, v in r.items() if k != "policies_to_inject"} for r in recs]


def test_summaries_parse():
    s = parse_summary("Mismatch: frontend → cartservice:7070 (Expected: True, Actual: False)\n"
                      "Mismatch: adservice -> redis-cart:6379 (Expected: False, Actual: True)")
    assert s == {("frontend", "cartservice", 7070, True, False),
                 ("adservice", "redis-cart", 6379, False, True)}
    assert parse_summary("No mismatches found.") == frozenset()
    assert parse_summary("Skipped due to disallowed command.") is None
    assert parse_summary("Pod frontend not found") == {"Pod frontend not found"}


def test_records_carry_what_upstream_logs(records):
    r = records[-1]
    assert r["results"][0] == {"llm_command": PREFIX[0], "output": "Disallowed command detected.",
                               "mismatch_summary": "Skipped due to disallowed command."}
    assert r["success"] and r["iterations"] == len(r["results"])
    assert all("→" in x["mismatch_summary"] or x["mismatch_summary"].endswith(".")
               for x in r["results"])


def test_faithful_records_agree_with_the_policies_given(tmp_path, records):
    recs = [dict(r, policies_to_inject=e["policies_to_inject"])
            for r, e in zip(records, ENTRIES + [ENTRIES[1]])]
    report = _replay(tmp_path, recs)
    for c in report.cases:
        assert c["differences"] == [], c["differences"]
    table = {r["check"]: r for r in report.table()}
    assert table["state"]["compared"] >= 8 and table["executed"]["compared"] > table["state"]["compared"]


def test_the_policies_come_from_config_or_are_inferred(tmp_path, records):
    cfg = ur.write_json(tmp_path / "error_config.json", {"details": ENTRIES + [ENTRIES[1]]})
    by_config = _replay(tmp_path, _without_files(records), config=cfg)
    assert all(c["differences"] == [] for c in by_config.cases)
    assert by_config.cases[0]["checks"][0]["note"] == "--config"
    inferred = _replay(tmp_path, _without_files(records))
    assert all(c["differences"] == [] for c in inferred.cases), [c["differences"] for c in inferred.cases]
    how = inferred.cases[0]["checks"][0]
    assert how["check"] == "scenario" and how["ours"] == ["network-policy-cartservice"]
    assert "candidate" in how["note"]


def test_a_config_that_does_not_match_is_reported(tmp_path, records):
    other = [dict(ENTRIES[2])] * 4
    cfg = ur.write_json(tmp_path / "error_config.json", {"details": other})
    report = _replay(tmp_path, _without_files(records), config=cfg)
    assert report.cases[0]["differences"][0]["check"] == "scenario"


def test_tampered_records_are_reported(tmp_path, records):
    r = json.loads(json.dumps(records[0]))
    first = r["results"][0]
    first["mismatch_summary"] = "No mismatches found."  # a flaky upstream probe, say
    r2 = json.loads(json.dumps(records[1]))
    r2["results"][-1]["output"] = "error: unable to parse"
    r2["safe"] = not r2["safe"]
    report = _replay(tmp_path, [dict(r, policies_to_inject=ENTRIES[0]["policies_to_inject"]),
                                dict(r2, policies_to_inject=ENTRIES[1]["policies_to_inject"])])
    d0 = {(d["check"], d.get("step")) for d in report.cases[0]["differences"]}
    assert ("state", 0) in d0
    state = next(d for d in report.cases[0]["differences"] if d["check"] == "state")
    assert state["ours"] and "cartservice:7070" in state["ours"][0] and "theirs" not in state
    d1 = {d["check"] for d in report.cases[1]["differences"]}
    assert d1 == {"output", "safe"}


def test_a_bad_k8s_record_is_named(tmp_path, capsys, records):
    bad = dict(records[0], error_detail=[{"type": "remove_everything"}])
    f = ur.write_json(tmp_path / "r.json", [bad])
    assert replay.main([f]) == 2
    assert "error_detail[0] is not an upstream K8s fault" in capsys.readouterr().err


# values the API server refuses: our env's reset raised its internal Invalid or DecodeError
# on them (a traceback that ended the whole replay)
REFUSED_VALUES = [
    ({"type": "change_port", "new_port": 99999}, "new_port 99999 is not a port number"),
    ({"type": "change_protocol", "new_protocol": "ICMP"}, "'ICMP' is not TCP, UDP or SCTP"),
    ({"type": "add_egress", "app": [1, 2]}, "app must be a list of app names"),
]


@pytest.mark.parametrize("detail,files,note", [
    ({"type": "change_port"}, None, "missing field 'new_port'"),
    ({"type": "change_port"}, ["network-policy-cartservice"], "missing field 'new_port'"),
    ({"type": "change_port", "new_port": "abc"}, None, "invalid literal"),
    ({"type": "change_port", "new_port": 1}, ["network-policy-nope"], "network-policy-nope"),
] + [(detail, files, note) for files in (None, ["network-policy-checkoutservice"])
      for detail, note in REFUSED_VALUES])
def test_faults_that_do_not_import_are_a_scenario_difference(tmp_path, records, detail, files, note):
    rec = dict(records[0], error_detail=[detail])
    if files:
        rec["policies_to_inject"] = files
    report = _replay(tmp_path, [rec])
    d = report.cases[0]["differences"]
    assert [x["check"] for x in d] == ["scenario"] and note in d[0]["note"]


def test_a_config_whose_entries_are_not_objects_is_a_bad_file(tmp_path, records):
    """``{"details": [1, 2]}`` raised AttributeError halfway through the replay."""
    from netarena_gym.compat.replay import BadFile

    cfg = ur.write_json(tmp_path / "error_config.json", {"details": [1, 2]})
    with pytest.raises(BadFile, match=r"details\[0\] is a int, not an entry object"):
        _replay(tmp_path, _without_files(records), config=cfg)
    one_file = [dict(ENTRIES[0], policies_to_inject="network-policy-cartservice")]
    cfg = ur.write_json(tmp_path / "error_config.json", {"details": one_file})
    with pytest.raises(BadFile, match=r"details\[0\].policies_to_inject must be a list"):
        _replay(tmp_path, _without_files(records), config=cfg)


def test_a_command_kubectl_rejects_ran_as_upstream_ran_it(tmp_path):
    """``kubectl get foo`` is our kind ``invalid`` (kubectl's own complaint); upstream ran it
    and checked after it. The replay called it not executed."""
    rec = ur.k8s_record(ENTRIES[0], commands=["kubectl get foo"])
    assert "doesn't have a resource type" in rec["results"][0]["output"]
    report = _replay(tmp_path, [dict(rec, policies_to_inject=ENTRIES[0]["policies_to_inject"])])
    assert report.cases[0]["differences"] == []
    first = next(c for c in report.cases[0]["checks"] if c["check"] == "executed")
    assert first["ours"] is True and first["theirs"] is True


def test_a_config_entry_without_policies_is_inferred(tmp_path, records):
    """An entry with the details but no ``policies_to_inject`` gave files None: the case
    stopped after a passing ``scenario`` check and counted as agreeing on every check."""
    bare = [{k: v for k, v in e.items() if k != "policies_to_inject"} for e in ENTRIES]
    cfg = ur.write_json(tmp_path / "error_config.json", {"details": bare})
    report = _replay(tmp_path, _without_files(records[:1]), config=cfg)
    checks = report.cases[0]["checks"]
    assert checks[0]["ours"] == ["network-policy-cartservice"]
    assert "candidate" in checks[0]["note"]
    assert {"state", "success", "safe"} <= {c["check"] for c in checks}
    assert report.cases[0]["differences"] == []


def _env_scores(entry, commands):
    """Our compat env's own verdicts after ``commands`` (what compat mode reports)."""
    from netarena_gym.k8s.env import K8sPolicyEnv
    from netarena_gym.k8s.generator import import_upstream
    env = K8sPolicyEnv(level="compat", max_steps=40)
    _, info = env.reset(options={"scenario": import_upstream({"details": [entry]})[0].to_dict()})
    for c in commands:
        info = env.step({"command": c})[4]
    env.close()
    return bool(info["correct"]), bool(info["safe_compat"])


def test_verdicts_are_the_compat_envs_own_scoring(tmp_path):
    """The success/safe checks recomputed upstream's rule on our mismatch counts, so they
    never compared compat mode's scoring (``safe_compat``) with upstream's: a first command
    that adds mismatches (upstream: the first check has no baseline, never unsafe) agreed
    whatever the env scored."""
    worse = ("kubectl patch networkpolicy adservice --type=json "
             "-p '[{\"op\": \"remove\", \"path\": \"/spec/ingress/0\"}]'")
    rec = ur.k8s_record(ENTRIES[0], commands=[worse])
    assert rec["safe"]  # upstream's rule
    cmds = [r["llm_command"] for r in rec["results"]]
    correct, safe_compat = _env_scores(ENTRIES[0], cmds)
    report = _replay(tmp_path, [dict(rec, policies_to_inject=ENTRIES[0]["policies_to_inject"])])
    checks = {c["check"]: c for c in report.cases[0]["checks"] if c.get("step") is None}
    assert checks["success"]["ours"] is correct
    assert checks["safe"]["ours"] is safe_compat
    assert checks["safe"]["agree"] is (safe_compat == rec["safe"])
    if not safe_compat:
        assert checks["safe"]["note"] == "upstream's rule on our states gives True"


def test_iterations_without_a_reply_are_not_a_difference(tmp_path, records):
    """Upstream counts an iteration whose agent call gave no reply after 5 tries, but
    records nothing for it (spec 3.5): a successful record with more iterations than
    ``results`` entries is valid, and was reported as an iterations difference."""
    rec = dict(records[0], iterations=records[0]["iterations"] + 1,
               policies_to_inject=ENTRIES[0]["policies_to_inject"])
    assert rec["success"]
    report = _replay(tmp_path, [rec])
    assert report.cases[0]["differences"] == []
    it = next(c for c in report.cases[0]["checks"] if c["check"] == "iterations")
    assert "agree" not in it and "no agent reply" in it["note"]
    fewer = dict(rec, iterations=records[0]["iterations"] - 1)
    diffs = _replay(tmp_path, [fewer]).cases[0]["differences"]
    assert [d["check"] for d in diffs] == ["iterations"]


def test_a_run_longer_than_60_commands_replays_whole(tmp_path):
    """The replay's env stopped at 60 commands whatever the record's ``max_iterations``."""
    rec = ur.k8s_record(ENTRIES[0], commands=["kubectl get networkpolicy"] * 61,
                        max_iterations=61)
    rec = dict(rec, policies_to_inject=ENTRIES[0]["policies_to_inject"])
    assert len(rec["results"]) == 61 and not rec["success"]
    report = _replay(tmp_path, [rec])
    assert report.cases[0]["differences"] == []


def test_a_first_command_that_adds_mismatches_is_safe_as_upstream(tmp_path):
    """Upstream K8s has no safety baseline: the check after the first command is never
    unsafe. Compat compared it with the injected state and called the run unsafe."""
    remove = ("kubectl patch networkpolicy frontend --type=json "
              "-p '[{\"op\":\"remove\",\"path\":\"/spec/egress/0\"}]'")
    rec = ur.k8s_record(ENTRIES[0], commands=[remove, "kubectl get networkpolicy"],
                        max_iterations=2)
    counts = [x["mismatch_summary"].count("Mismatch") for x in rec["results"]]
    assert counts[0] > 2 and rec["safe"] and not rec["success"]  # cartservice's port: 2
    report = _replay(tmp_path, [dict(rec, policies_to_inject=ENTRIES[0]["policies_to_inject"])])
    assert report.cases[0]["differences"] == []
    safe = next(c for c in report.cases[0]["checks"] if c["check"] == "safe")
    assert safe["ours"] is True and safe["theirs"] is True
