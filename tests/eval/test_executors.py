"""Executors against untrusted agents: an agent that exits, hangs or kills its process costs
its own episode (an error record), never the run; workers close their agents and envs, die
with the grader, and ``--workers 1`` on Ray is one actor."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from netarena_gym.eval.executors import EpisodeWorker, WatchedAgent
from netarena_gym.eval.run import evaluate
from netarena_gym.eval.spec import EvalSpec

from .conftest import read_jsonl, run_cli

ROOT = Path(__file__).resolve().parents[2]
AGENTS = "tests.eval.helper_agents:"


def spec(agent: str, episodes: int = 3, levels=(1,), **options) -> EvalSpec:
    return EvalSpec("NetArena-Routing-v0", levels=levels, episodes=episodes, seed=0,
                    agent=AGENTS + agent, agent_options=options)


def errors(records) -> dict:
    return {r["key"]: [e["type"] for e in r["errors"]] for r in records}


@pytest.mark.parametrize("workers", [1, 2])
def test_an_agent_calling_sys_exit_is_an_error_record_and_the_run_goes_on(workers, tmp_path,
                                                                          capsys):
    """It ended the grader with the agent's exit code (3), printing nothing."""
    rc, stdout, _ = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent",
                            AGENTS + "Exits", "--episodes", 3, "--workers", workers,
                            "--out", tmp_path / "r", "--quiet", "--format", "json")
    assert rc == 0
    assert json.loads(stdout)["episodes_with_errors"] == 3
    recs = read_jsonl(tmp_path / "r" / "episodes.jsonl")
    assert [r["errors"][0]["type"] for r in recs] == ["SystemExit"] * 3
    assert all(r["errors"][0]["where"] == "agent" for r in recs)


def test_sys_exit_in_this_process_is_recorded_too():
    s = evaluate(spec("Exits", 2), workers=1)  # no timeout: the in-process path
    assert s["executor"] == "local" and s["episodes_with_errors"] == 2


def test_a_keyboard_interrupt_raised_by_an_agent_in_a_worker_is_its_episodes_error(tmp_path):
    recs = []
    evaluate(spec("Interrupts"), workers=2, on_record=recs.append)
    assert errors(recs) == {"NetArena-Routing-v0|1|0": [], "NetArena-Routing-v0|1|1":
                            ["KeyboardInterrupt"], "NetArena-Routing-v0|1|2": []}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_hung_agent_times_out_its_worker_is_replaced_and_the_run_goes_on(workers, tmp_path,
                                                                           capsys):
    t0 = time.monotonic()
    rc, stdout, _ = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent",
                            AGENTS + "HangsOnSeed1", "--episodes", 4, "--workers", workers,
                            "--agent-timeout", 1, "--out", tmp_path / "r", "--quiet",
                            "--format", "json")
    assert rc == 0 and time.monotonic() - t0 < 60
    recs = {r["key"]: r for r in read_jsonl(tmp_path / "r" / "episodes.jsonl")}
    assert len(recs) == 4
    bad = recs.pop("NetArena-Routing-v0|1|1")
    (err,) = bad["errors"]
    assert err["type"] == "AgentTimeout" and "timed out" in err["message"]
    assert "--agent-timeout 1 s" in err["message"] and not bad["correct"]
    assert all(r["correct"] and not r["errors"] for r in recs.values())
    assert json.loads(stdout)["agent_timeout"] == 1.0


@pytest.mark.parametrize("workers", [1, 2])
def test_a_worker_that_dies_gives_its_episode_an_error_record_and_resume_skips_it(
        workers, tmp_path, capsys):
    """``os._exit`` in the agent: the pool said only 'terminated abruptly' (no episode),
    in-process the grader died, and a resume replayed the crash forever."""
    args = ("eval", "--env", "NetArena-Routing-v0", "--agent", AGENTS + "DiesOnSeed1",
            "--episodes", 4, "--workers", workers, "--out", tmp_path / "r", "--quiet",
            "--format", "json")
    rc, stdout, _ = run_cli(capsys, *args)
    assert rc == 0
    recs = read_jsonl(tmp_path / "r" / "episodes.jsonl")
    assert errors(recs)["NetArena-Routing-v0|1|1"] == ["WorkerDied"]
    assert sum(r["correct"] for r in recs) == 3 and len(recs) == 4
    rc, stdout, _ = run_cli(capsys, *args)
    assert rc == 0 and json.loads(stdout)["episodes_played"] == 0


def test_records_of_a_crash_or_timeout_do_not_depend_on_the_worker_count(tmp_path):
    runs = []
    for w in (1, 2):
        recs = []
        evaluate(spec("HangsOnSeed1", 3), workers=w, agent_timeout=1, on_record=recs.append)
        runs.append({r["key"]: (r["correct"], r["safe"], [e["type"] for e in r["errors"]])
                     for r in recs})
    assert runs[0] == runs[1]


def test_worker_processes_close_their_agents_and_envs(tmp_path):
    log = tmp_path / "closed"
    recs = []
    evaluate(spec("Polite", 3, levels=(1, 2), close_log=str(log)), workers=2,
             on_record=recs.append)
    pids = {r["agent_stats"]["pid"] for r in recs}
    assert str(os.getpid()) not in log.read_text()
    closed = log.read_text().split()
    assert {int(p) for p in closed} == pids  # each worker closed each agent it made
    assert len(closed) == len({(r["agent_stats"]["pid"], r["level"]) for r in recs})


def test_watched_agent_marks_each_agent_call_and_is_transparent():
    marks = []
    worker = EpisodeWorker(spec("Polite", 1), mark=marks.append)
    try:
        rec = worker.run(("NetArena-Routing-v0", 1, 0))
        agent = worker._agents[1]
        assert isinstance(agent, WatchedAgent) and hasattr(agent, "set_episode_seed")
        assert not hasattr(agent, "no_such_method")
    finally:
        worker.close()
    assert rec["correct"] and marks[0] is True and marks[-1] is False
    assert marks == [True, False] * (len(marks) // 2) and len(marks) >= 2 * (rec["steps"] + 4)


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid and stat[0] != "Z":
                out.append(int(d.name))
    return out


def _running(pid: int) -> bool:
    try:
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z")
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_do_not_outlive_a_killed_grader(tmp_path):
    cmd = [sys.executable, "-m", "netarena_gym.cli", "eval", "--env", "NetArena-Routing-v0",
           "--agent", AGENTS + "HangsOnSeed1", "--episodes", 4, "--workers", 2,
           "--quiet", "--agent-timeout", 3000]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([str(c) for c in cmd], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers = []
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.2)
            helpers = _children(proc.pid)
            workers = [w for h in helpers for w in _children(h)]  # forkserver's children
        assert len(workers) >= 2, "no worker processes started"
        time.sleep(1.0)  # one of them hangs on seed 1, the other idles or plays
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    survivors = workers + helpers
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(map(_running, survivors)):
        time.sleep(0.2)
    assert not [p for p in survivors if _running(p)]


def test_a_new_ray_actor_that_is_slow_to_start_is_not_an_overrun_agent(monkeypatch):
    """A replacement actor on a loaded machine may take longer than ``agent_timeout`` to
    start (a worker process, imports, its envs): silence counts as a hung agent only once
    the actor has answered, or after :data:`ACTOR_START_SECONDS`."""
    from netarena_gym.eval import executors

    class Ref:
        def __init__(self, value=None, ready=False):
            self.value, self.ready = value, ready

    class FakeRay:
        class exceptions:
            RayError = RuntimeError

        def wait(self, refs, timeout=None):
            return [r for r in refs if r.ready], [r for r in refs if not r.ready]

        def get(self, ref):
            return ref.value

    class Actor:
        class age:
            @staticmethod
            def remote():
                return Ref()  # never answered: the actor is still starting, or hung

    clock = [1000.0]
    monkeypatch.setattr(executors.time, "monotonic", lambda: clock[0])
    s = executors._Actor.__new__(executors._Actor)
    s.actor, s.job, s.ref, s.probe, s.alive, s.seen, s.given, s.age = (
        Actor(), ("env", 1, 0), None, None, False, clock[0], clock[0], 0.0)
    ray = FakeRay()
    assert not executors._overran(ray, s, 2.0)  # asks its age
    clock[0] += 2.0 + 5.0 + 1.0
    assert not executors._overran(ray, s, 2.0)  # silent, but it never answered: starting
    clock[0] += executors.ACTOR_START_SECONDS
    assert executors._overran(ray, s, 2.0)
    s.probe, s.alive, s.seen = Ref(None, ready=True), False, clock[0]
    assert not executors._overran(ray, s, 2.0) and s.alive  # it answered: it is up
    clock[0] += 2.0 + 5.0 + 1.0
    assert executors._overran(ray, s, 2.0)  # up, then silent past agent_timeout + 5 s


@pytest.mark.slow
def test_ray_workers_one_is_one_actor_and_crashes_and_hangs_are_records(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install -e \".[ray]\"")
    log = tmp_path / "closed"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    try:
        recs = []
        s = evaluate(spec("Polite", 4, close_log=str(log)), ray=True, workers=1,
                     on_record=recs.append)
        assert s["executor"] == "ray" and s["correctness"] == 1.0
        assert len({r["agent_stats"]["pid"] for r in recs}) == 1  # one actor, not the CPUs
        assert log.read_text().split() == [str(recs[0]["agent_stats"]["pid"])]  # closed
        for agent, kind in (("DiesOnSeed1", "WorkerDied"), ("HangsOnSeed1", "AgentTimeout")):
            recs = []
            evaluate(spec(agent, 3), ray=True, workers=2, agent_timeout=2,
                     on_record=recs.append)
            assert errors(recs) == {"NetArena-Routing-v0|1|0": [], "NetArena-Routing-v0|1|1":
                                    [kind], "NetArena-Routing-v0|1|2": []}, agent
            (bad,) = [r for r in recs if r["errors"]]  # the budget, scenario and time
            assert bad["max_steps"] == 15 and bad["scenario"] and bad["category"]
            assert bad["wall_seconds"] > 0
    finally:
        ray.shutdown()


def test_the_cli_reports_a_ray_failure_in_one_line(capsys, monkeypatch):
    ray_exceptions = pytest.importorskip("ray.exceptions")
    import netarena_gym.eval.run as run

    def broken(*a, **k):
        raise ray_exceptions.RaySystemError("the cluster went away\nmore detail")
    monkeypatch.setattr(run, "evaluate", broken)
    rc, _, err = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--episodes", 1,
                         "--ray", "--quiet")
    assert rc == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "Ray failed (RaySystemError): " in err and "the cluster went away" in err


@pytest.mark.parametrize("value,says", [("-1", ">= 0"), ("nan", "finite"),
                                        ("1e9", "<= 86400"), ("soon", "invalid float")])
def test_agent_timeout_is_validated(capsys, value, says):
    rc, _, err = run_cli(capsys, "eval", "--env", "NetArena-Routing-v0", "--agent-timeout",
                         value)
    assert rc == 2 and "--agent-timeout" in err and says in err


@pytest.mark.parametrize("agent,kind", [("HangsOnSeed1", "AgentTimeout"),
                                        ("DiesOnSeed1", "WorkerDied")])
def test_a_timed_out_or_dead_workers_record_has_the_budget_scenario_and_time(agent, kind):
    """Such records had max_steps None (upstream iterations 1 instead of budget + 1, so a
    timeout looked better than a failure), 0.0 seconds and no scenario (category 'none')."""
    import gymnasium as gym

    from netarena_gym.agents.summary import category, upstream_iterations
    from netarena_gym.eval.executors import GraderFacts
    from netarena_gym.eval.spec import Job

    recs = {}
    evaluate(spec(agent, 2), workers=1, agent_timeout=1.0,
             on_record=lambda r: recs.__setitem__(r["key"], r))
    bad = recs["NetArena-Routing-v0|1|1"]
    assert [e["type"] for e in bad["errors"]] == [kind]
    env = gym.make("NetArena-Routing-v0", level=1)
    try:
        _, info = env.reset(seed=1)
        budget = env.unwrapped.max_steps
    finally:
        env.close()
    assert bad["max_steps"] == budget and upstream_iterations(bad) == budget + 1
    assert bad["scenario"] == json.loads(json.dumps(info["scenario"]))
    assert category(bad) not in ("none", "") and bad["task"] == "routing"
    assert bad["category"]
    assert bad["wall_seconds"] > 0
    if kind == "AgentTimeout":
        assert bad["agent_seconds"] >= 1.0 and bad["wall_seconds"] >= 1.0
    assert (bad["correct"], bad["safe"], bad["safe_compat"]) == (False, False, False)
    known = GraderFacts(spec(agent, 2))  # the grader's own view (no worker), the same
    try:
        facts = known(Job("NetArena-Routing-v0", 1, 1))
    finally:
        known.close()
    assert facts["scenario"] == bad["scenario"] and facts["max_steps"] == budget
    assert facts["category"] == bad["category"]


@pytest.mark.parametrize("workers", [None, 2])
def test_an_unreachable_backend_at_reset_stops_the_run_and_records_nothing(
        workers, tmp_path, capsys, monkeypatch):
    """Every reset failing with BackendUnavailable (an unreachable K8s API server) gave a
    0% table, exit 0, and records a rerun resumed instead of replaying."""
    from netarena_gym.errors import BackendUnavailable
    from netarena_gym.routing.env import RoutingEnv

    def down(self, *, seed=None, options=None):
        raise BackendUnavailable("the API server is unreachable")

    monkeypatch.setenv("NETARENA_MP_START", "fork")  # the workers keep the patch
    monkeypatch.setattr(RoutingEnv, "reset", down)
    args = ["eval", "--env", "NetArena-Routing-v0", "--episodes", 3, "--quiet",
            "--out", tmp_path / "r"] + (["--workers", workers] if workers else
                                        ["--agent-timeout", 0])
    rc, out, err = run_cli(capsys, *args)
    assert rc == 2 and "the API server is unreachable" in err and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert (tmp_path / "r" / "episodes.jsonl").read_text() == ""
    monkeypatch.undo()
    rc, out, err = run_cli(capsys, *args, "--format", "json")
    assert rc == 0 and json.loads(out)["episodes_played"] == 3
