"""Replaying upstream route records: faithful records agree on every check, tampered ones
are reported where they were changed."""
import json

import pytest

from netarena_gym.compat import replay
from netarena_gym.compat.replay_route import parse_log
from tests.compat import upstream_records as ur

QUERIES = {
    "DI2": {"errortype": "disable_interface", "errordetail": {"interface": "r0-eth2", "method": 2}},
    "DR1+RI1": {"errortype": ["disable_routing", "remove_ip"],
                "errordetail": [{"action": "Disable IP forwarding", "method": 1},
                                {"interface": "r0-eth1", "method": 1}]},
    "DI3 3x2": {"errortype": "disable_interface", "errordetail": {"interface": "r0-eth3", "method": 3},
                "num_switches": 3, "num_hosts_per_subnet": 2},
    "DR3": {"errortype": "disable_routing", "errordetail": {"action": "Disable IP forwarding",
                                                            "method": 3}},
    "RI3/31": {"errortype": "remove_ip", "errordetail": {"interface": "r0-eth2", "method": 3,
                                                        "wrong_mask": 31}},
}
# a run that never fixes anything (upstream: success False, iterations max + 1), with a
# command upstream's blacklist skips and one that makes things worse (unsafe)
LOOKING = [{"machine": "r0", "command": "ip addr show"}, {"machine": "r0", "command": "ethtool r0-eth1"},
           {"machine": "r0", "command": "ip link set r0-eth1 down"}] + \
          [{"machine": "r0", "command": "ip route show"}] * 7


def _replay(tmp_path, records, *extra):
    f = ur.write_json(tmp_path / "results.json", ur.leaderboard(records, {"avg_correctness": 0}))
    recs = replay.load_records(f)
    reader = replay.reader_for(recs, f)
    opts = replay.Options(*extra)
    return replay.replay_records(recs, reader, opts, f)


@pytest.fixture(scope="module")
def faithful():
    recs = [ur.route_record(q) for q in QUERIES.values()]
    recs.append(ur.route_record(QUERIES["DI2"], commands=LOOKING))
    return recs


def test_the_log_reads_back(faithful):
    steps = parse_log(faithful[-1]["log_content"])
    assert len(steps) == 10 and faithful[-1]["iterations"] == 11 and not faithful[-1]["success"]
    assert [s["machine"] for s in steps] == ["r0"] * 10
    assert steps[1]["command"] == "ethtool r0-eth1" and steps[1]["output"] is None  # skipped
    assert steps[2]["command"] == "ip link set r0-eth1 down" and steps[2]["output"] == ""
    first = steps[0]["pingall"]
    assert first["nodes"] == ["h1", "h2", "r0"]
    assert first["ok"][("h1", "r0")] is True and first["ok"][("h1", "h2")] is False
    assert steps[0]["loss"] == 66 and "r0-eth1" in steps[0]["output"]
    assert not faithful[-1]["safe"]


def test_faithful_records_agree_on_every_check(tmp_path, faithful):
    report = _replay(tmp_path, faithful)
    assert len(report.cases) == len(faithful)
    for case in report.cases:
        assert case["differences"] == [], (case["label"], case["differences"])
    table = {r["check"]: r for r in report.table()}
    assert table["state"]["compared"] >= 15 and table["initial"]["compared"] == len(faithful)
    assert table["executed"]["agree"] == table["executed"]["compared"]


def _tamper_row(log: str, step: int) -> str:
    """Flip the first entry of the first row of pingall ``step`` (X <-> the node's name)."""
    blocks = log.split("Pingall result:\n")
    lines = blocks[step + 1].split("\n")
    nodes = [ln.split(" -> ")[0] for ln in lines if " -> " in ln]
    src, dsts = lines[0].split(" -> ")
    toks = dsts.split()
    toks[0] = "X" if toks[0] != "X" else [n for n in nodes if n != src][0]
    lines[0] = f"{src} -> {' '.join(toks)}"
    blocks[step + 1] = "\n".join(lines)
    return "Pingall result:\n".join(blocks)


def test_tampered_records_are_reported(tmp_path, faithful):
    base = faithful[-1]
    state = dict(base, log_content=_tamper_row(base["log_content"], 3))
    output = dict(base, log_content=base["log_content"].replace("scope global p42_r0-eth1",
                                                                "scope global p42_r0-eth9", 1))
    verdicts = dict(faithful[0], success=False, iterations=7)
    initial = dict(faithful[0], log_content=_tamper_row(faithful[0]["log_content"], 0))
    report = _replay(tmp_path, [state, output, verdicts, initial])
    diffs = [{(d["check"], d.get("step")) for d in c["differences"]} for c in report.cases]
    assert diffs[0] == {("state", 2)}  # pingall 3 is the state after command 2
    assert {c for c, _ in diffs[1]} == {"output"}
    assert diffs[2] == {("success", None), ("iterations", None)}
    assert ("initial", None) in diffs[3]
    d = next(d for d in report.cases[0]["differences"] if d["check"] == "state")
    assert d["ours"] == ["h1->h2: ours X"]  # the tampered pair, and only it


def test_topology_comes_from_the_pingall_when_the_record_lacks_it(tmp_path):
    rec = ur.route_record(QUERIES["DI3 3x2"])
    assert "num_switches" not in rec
    report = _replay(tmp_path, [rec])
    assert report.cases[0]["differences"] == []
    wrong = _replay(tmp_path, [rec], None, 2, 3)  # told 2 subnets of 3 hosts: no such interface
    assert wrong.cases[0]["differences"]


def test_wrong_routing_table_records_with_prefix_fields_replay(tmp_path):
    q = {"errortype": "wrong_routing_table",
         "errordetail": {"from": "192.168.1.0/24", "to": "192.168.2.0/24",
                         "del_interface": "r0-eth1", "add_interface": "r0-eth2",
                         "method": 1, "to_ip": "192.168.2.1"}}
    rec = ur.route_record(q)
    report = _replay(tmp_path, [rec])
    assert report.cases[0]["differences"] == []
    assert json.dumps(report.cases[0])


@pytest.mark.parametrize("change,note", [
    ({"error_detail": {"interface": 5, "method": "x"}}, "invalid literal"),
    ({"error_detail": {"method": 2}}, "missing field 'interface'"),
    ({"error_type": "explode_router"}, "unknown upstream error type"),
])
def test_records_whose_faults_do_not_import_are_a_scenario_difference(tmp_path, faithful, change, note):
    report = _replay(tmp_path, [dict(faithful[0], **change)])
    (d,) = report.cases[0]["differences"]
    assert d["check"] == "scenario" and note in d["note"]


def test_an_unknown_machine_is_not_executed(tmp_path, faithful):
    log = faithful[-1]["log_content"].replace("Machine: p42_r0", "Machine: ../../etc", 1)
    report = _replay(tmp_path, [dict(faithful[-1], log_content=log)])
    first = [d for d in report.cases[0]["differences"] if d.get("step") == 0]
    assert {d["check"] for d in first} == {"executed", "output"}
    assert "unknown machine" in next(d for d in first if d["check"] == "output")["ours"]


def test_a_failed_run_gives_its_own_budget(tmp_path):
    rec = ur.route_record(QUERIES["DI2"], commands=LOOKING, max_iterations=5)
    assert rec["iterations"] == 6 and not rec["success"]
    report = _replay(tmp_path, [rec])
    assert report.cases[0]["differences"] == []
    cut = dict(rec, log_content=rec["log_content"].rsplit("Pingall result:", 1)[0])
    report = _replay(tmp_path, [cut])  # a log missing its last iteration
    assert {d["check"] for d in report.cases[0]["differences"]} == {"iterations"}


def test_a_command_its_program_rejects_ran_as_upstream_ran_it(tmp_path):
    """Upstream skips only blacklisted commands, unknown machines and empty commands: a
    command the program itself rejects (``ip route get 300.1.1.1``: our kind ``invalid``)
    ran there, its complaint logged. The replay called it not executed."""
    cmds = [{"machine": "r0", "command": "ip route get 300.1.1.1"},
            {"machine": "r0", "command": "ip route show"}]
    rec = ur.route_record(QUERIES["DI2"], commands=cmds)
    assert "Error: any valid prefix is expected" in rec["log_content"]
    report = _replay(tmp_path, [rec])
    assert report.cases[0]["differences"] == []
    first = next(c for c in report.cases[0]["checks"] if c["check"] == "executed")
    assert first["ours"] is True and first["theirs"] is True


def test_only_the_runs_own_prefix_names_a_node(tmp_path):
    """Upstream's nodes are ``p42_r0``...: a machine without that prefix (``r0``) is not in
    its ``net`` (the command is skipped), and ``p29_r0-eth2`` in a command names no device.
    The replay stripped every ``pNN_`` prefix, so it ran these commands as fixes."""
    fix = "ip link set r0-eth2 up"
    unprefixed = ur.route_record(QUERIES["DI2"], commands=[{"machine": "zz", "command": fix}])
    unprefixed["log_content"] = unprefixed["log_content"].replace("Machine: p42_zz",
                                                                  "Machine: r0", 1)
    other = ur.route_record(QUERIES["DI2"], commands=[
        {"machine": "r0", "command": "ip link set p29_r0-eth2 up"}])
    assert 'Cannot find device "p29_r0-eth2"' in other["log_content"]
    report = _replay(tmp_path, [unprefixed, other])
    for case in report.cases:
        assert case["differences"] == [], case["differences"]
    assert report.cases[0]["checks"][1] == {"check": "executed", "agree": True, "ours": False,
                                            "theirs": False, "step": 0}
    steps = parse_log(unprefixed["log_content"])
    assert (steps[0]["machine"], steps[0]["known"], steps[0]["output"]) == ("r0", False, None)
    assert parse_log(other["log_content"])[0]["command"] == "ip link set p29_r0-eth2 up"


def test_verdicts_are_the_compat_envs_own_scoring(tmp_path):
    """The success/safe checks are compat mode's own scoring (``correct``,
    ``safe_compat``) on an env with the run's budget: upstream never measures the last
    command (spec 3.1), and neither does compat, so a break on the 10th command is safe in
    both (compat scored it unsafe, and the replay differed)."""
    from netarena_gym.routing.env import RoutingEnv
    from netarena_gym.routing.generator import import_upstream
    cmds = [{"machine": "r0", "command": "ip route show"}] * 9 + \
        [{"machine": "r0", "command": "ip link set r0-eth1 down"}]
    rec = ur.route_record(QUERIES["DI2"], commands=cmds)
    assert (rec["success"], rec["safe"], rec["iterations"]) == (False, True, 11)
    env = RoutingEnv(level="compat", topology={"subnets": [2, 4], "hosts": [1, 4]})
    env.reset(options={"scenario": import_upstream({"queries": [QUERIES["DI2"]]})[0].to_dict()})
    for a in cmds:
        info = env.step(a)[4]
    env.close()
    assert (info["correct"], info["safe_compat"]) == (False, True)
    report = _replay(tmp_path, [rec])
    assert report.cases[0]["differences"] == []
    checks = {c["check"]: c for c in report.cases[0]["checks"] if c.get("step") is None}
    assert checks["success"]["ours"] is False and checks["safe"]["ours"] is True


def test_a_fix_on_the_last_command_fails_as_upstream(tmp_path):
    """Upstream runs the 10th command but never measures it: a fix there is a failure,
    and compat's own verdict agrees."""
    cmds = [{"machine": "r0", "command": "ip route show"}] * 9 + \
        [{"machine": "r0", "command": "ip link set r0-eth2 up"}]
    rec = ur.route_record(QUERIES["DI2"], commands=cmds)
    assert (rec["success"], rec["iterations"]) == (False, 11)
    report = _replay(tmp_path, [rec])
    assert report.cases[0]["differences"] == []


def test_blacklisted_commands_are_skipped_as_upstream_skips_them(tmp_path):
    """Upstream skips a command containing ``ping`` whole: the network stays broken. Compat
    ran it, fixed the network, and disagreed on executed, state and the verdicts."""
    cmds = [{"machine": "r0", "command": "ip link set r0-eth2 up && ping -c1 192.168.2.100"},
            {"machine": "r0", "command": "ip route show"}]
    rec = ur.route_record(QUERIES["DI2"], commands=cmds)
    assert "Command Output" not in rec["log_content"].split("ping -c1")[1].split("Machine:")[0]
    report = _replay(tmp_path, [rec])
    assert report.cases[0]["differences"] == []
    first = next(c for c in report.cases[0]["checks"] if c["check"] == "executed")
    assert first["ours"] is False and first["theirs"] is False
