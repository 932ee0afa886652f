"""Agents for the evaluator's tests, loaded by ``--agent tests.eval.helper_agents:Name``."""
from __future__ import annotations

import os
import sys
import time

from netarena_gym.agents.experts import make_expert


class SlowExpert:
    """The env's expert, slowed down so a test can interrupt a run part-way."""

    def __init__(self, env, delay: float = 0.03):
        self.inner = make_expert(env)
        self.delay = delay

    def reset(self):
        self.inner.reset()

    def act(self, observation, info):
        time.sleep(self.delay)
        return self.inner.act(observation, info)


class CrashOnSecondStep:
    """Raises on its second decision of every episode."""

    def __init__(self, env):
        self.inner = make_expert(env)

    def reset(self):
        self.inner.reset()
        self.n = 0

    def act(self, observation, info):
        self.n += 1
        if self.n == 2:
            raise RuntimeError("agent bug on step 2")
        return self.inner.act(observation, info)


class _Expert:
    """The env's expert; subclasses misbehave on the episode of seed ``BAD_SEED``."""

    BAD_SEED = 1

    def __init__(self, env, close_log: str | None = None):
        self.inner = make_expert(env)
        self.seed = None
        self.close_log = close_log

    def set_episode_seed(self, seed):
        self.seed = seed

    def reset(self):
        self.inner.reset()

    def act(self, observation, info):
        if self.seed == self.BAD_SEED:
            self.misbehave()
        return self.inner.act(observation, info)

    def episode_stats(self):
        return {"pid": os.getpid()}

    def close(self):
        if self.close_log:
            with open(self.close_log, "a") as f:
                f.write(f"{os.getpid()}\n")


class Exits(_Expert):
    """``sys.exit(3)`` on every decision: the grader's exit code if it escaped."""

    BAD_SEED = None

    def act(self, observation, info):
        sys.exit(3)


class Interrupts(_Expert):
    """Raises KeyboardInterrupt itself on the episode of seed 1."""

    def misbehave(self):
        raise KeyboardInterrupt("raised by the agent")


class HangsOnSeed1(_Expert):
    """Never returns on the episode of seed 1."""

    def misbehave(self):
        time.sleep(10 ** 6)


class DiesOnSeed1(_Expert):
    """Ends its own process (``os._exit``) on the episode of seed 1."""

    def misbehave(self):
        os._exit(1)


class Polite(_Expert):
    """The expert, reporting its pid and logging its close (to ``close_log``)."""

    BAD_SEED = None


class ReportsEnviron:
    """The expert, reporting ``NETARENA_TEST_MARK`` as it finds it in its process."""

    def __init__(self, env):
        self.inner = make_expert(env)

    def reset(self):
        self.inner.reset()

    def act(self, observation, info):
        return self.inner.act(observation, info)

    def episode_stats(self):
        return {"mark": os.environ.get("NETARENA_TEST_MARK"), "pid": os.getpid()}
