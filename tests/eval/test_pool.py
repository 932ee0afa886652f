"""Worker processes of ``netarena-gym eval`` (``eval/pool.py``); the timeouts, deaths and
clean-up they give are tested through the evaluator in ``test_executors.py``."""
from __future__ import annotations

import os

from netarena_gym.eval.pool import run_pool
from netarena_gym.eval.spec import EvalSpec, Job


def test_workers_see_the_environment_of_the_grader_when_they_start(monkeypatch):
    """A forkserver child inherits the forkserver's environment, which is the grader's
    when the first pool started: an agent's ``NETARENA_POLICY`` set after that (a second
    ``eval`` in one process, as in a notebook or ``train ppo``'s final check) was
    missing."""
    spec = EvalSpec("NetArena-Routing-v0", levels=(1,), episodes=1, seed=0,
                    agent="tests.eval.helper_agents:ReportsEnviron")
    jobs = [Job("NetArena-Routing-v0", 1, 0)]
    monkeypatch.delenv("NETARENA_TEST_MARK", raising=False)
    (first,) = run_pool(spec, jobs, 1, agent_timeout=60)
    assert first["agent_stats"]["mark"] is None
    assert first["agent_stats"]["pid"] != os.getpid()
    monkeypatch.setenv("NETARENA_TEST_MARK", "set later")
    (second,) = run_pool(spec, jobs, 1, agent_timeout=60)
    assert second["agent_stats"]["mark"] == "set later"
