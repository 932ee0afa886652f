"""benchmarks/bench_ablation.py: a replayed function serves exactly what was recorded,
never runs, and a replay that changes the trajectory fails the row (the figures are
measured by the benchmark, never asserted here)."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_ablation  # noqa: E402
from netarena_gym.errors import NetArenaError  # noqa: E402

GRADE = "netarena_gym.capacity_planning.backends.sim:grade"


def test_a_replay_serves_the_recorded_results_in_order_without_running_the_function():
    from netarena_gym.capacity_planning.backends import sim
    original = sim.grade
    replay = bench_ablation.Replay(GRADE)
    env = bench_ablation.gym.make("NetArena-CapacityPlanning-v0", level=1,
                                  interface="discrete")
    with replay.recording():
        bench_ablation.run(env, 200)
    assert sim.grade is original and replay.record  # restored; the episodes were graded
    calls = []
    with replay.replaying():
        assert sim.grade is not original
        for r in replay.record[:3]:
            assert sim.grade(None, None, None) is r  # arguments ignored: the record, in order
            calls.append(r)
    assert sim.grade is original
    assert not replay.replayed_all()  # 3 of them served
    with replay.replaying():
        for _ in replay.record:
            sim.grade()
        with pytest.raises(NetArenaError, match="more calls than recorded"):
            sim.grade()
    assert replay.replayed_all()


def test_an_ablation_row_replays_the_same_trajectory(monkeypatch):
    row = bench_ablation.ablate("capacity_discrete_L1", steps=300, rounds=1)
    assert row["free"] == GRADE and row["calls_per_step"] > 0
    assert row["ratio"] > 0 and row["ratio_free"] > 0 and row["share"] < 1


def test_replaying_a_function_with_effects_fails_the_row(monkeypatch):
    """Served from a record, the K8s backend's ``run`` no longer changes the store: the
    rewards and masks that follow differ, and the row says it cannot be measured so."""
    monkeypatch.setitem(bench_ablation.ABLATIONS, "k8s_run", (
        "k8s_discrete_L1", "netarena_gym.k8s.backends.sim:SimBackend.run", "commands"))
    with pytest.raises(NetArenaError, match="changed the trajectory"):
        bench_ablation.ablate("k8s_run", steps=300, rounds=1)


def test_only_plain_functions_and_methods_can_be_made_free():
    with pytest.raises(NetArenaError, match="not a plain function"):
        bench_ablation.resolve("netarena_gym.routing.grader:MAX_TTL")
    owner, attr = bench_ablation.resolve(
        "netarena_gym.routing.grader_oracle:ReachabilityOracle.matrix")
    assert attr == "matrix" and owner.__name__ == "ReachabilityOracle"
    with pytest.raises(SystemExit):
        bench_ablation.main(["--only", "routing_text_L1"])
