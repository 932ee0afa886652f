"""Shared for the serving tests: the env ids, and the expert's plan for a seeded episode
computed on a local env of the same configuration (the server's episode must match it
observation for observation)."""
from __future__ import annotations

import gymnasium as gym
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.agents.factory import make_agent
from netarena_gym.serve.common import UvicornThread
from netarena_gym.serve.sessions import SessionManager

ENV_IDS = ("NetArena-Routing-v0", "NetArena-K8sPolicy-v0", "NetArena-CapacityPlanning-v0")


class LocalExpert:
    """The expert on an in-process twin of the served env: ``act(obs)`` checks the server's
    observation against the twin's, then returns the expert's next action."""

    def __init__(self, env_id: str, seed: int, level=1, **options):
        self.env = gym.make(env_id, level=level, render_mode="ansi", **options)
        self.obs, self.info = self.env.reset(seed=seed)
        self.agent = make_agent("expert", self.env, seed=seed)
        if hasattr(self.agent, "reset"):
            self.agent.reset()
        self.done = False
        self.actions: list = []

    def act(self):
        a = self.agent.act(self.obs, self.info)
        self.actions.append(a)
        return a

    def follow(self, action):
        self.obs, _r, term, trunc, self.info = self.env.step(action)
        self.done = term or trunc
        return self.obs

    def close(self):
        self.env.close()


@pytest.fixture
def local_expert():
    made = []

    def make(*a, **kw):
        e = LocalExpert(*a, **kw)
        made.append(e)
        return e

    yield make
    for e in made:
        e.close()


@pytest.fixture
def serve_with():
    """``serve_with(app_of, env_id, **manager_options) -> (server, manager)``: a server
    thread over a fresh SessionManager (``app_of(manager, url)`` builds the ASGI app);
    stopped and closed after the test."""
    started = []

    def start(app_of, env_id, **kw):
        manager = SessionManager(env_id, **kw)
        srv = UvicornThread.serving(lambda url: app_of(manager, url)).start()
        started.append((srv, manager))
        return srv, manager

    yield start
    for srv, manager in started:
        srv.stop()
        manager.close_all()


def counting_make(made: list, closed: list):
    """A ``make`` for the manager that records every env built and every env closed."""
    import gymnasium as gym

    def make(*a, **kw):
        env = gym.make(*a, **kw)
        made.append(env)
        inner = env.close
        env.close = lambda: (closed.append(env), inner())[1]
        return env

    return make
