"""The one episode loop: deterministic records, replay, errors recorded, JSON records."""
from __future__ import annotations

import json

import gymnasium as gym
import pytest

import netarena_gym  # noqa: F401  (registers the envs)
from netarena_gym.agents.episode import EpisodeRecord, jsonable, play_episode
from netarena_gym.agents.experts import make_expert
from netarena_gym.agents.random import RandomAgent

TIMING = ("agent_seconds", "env_seconds", "wall_seconds")


def stable(rec: EpisodeRecord) -> dict:
    """The record without wall-clock figures."""
    d = rec.to_dict()
    for k in TIMING:
        d.pop(k)
    d["metrics"] = {k: v for k, v in d["metrics"].items() if not k.endswith("_seconds")}
    for t in d["trajectory"]:
        t.pop("agent_seconds")
    return d


@pytest.mark.parametrize("env_id", ["NetArena-Routing-v0", "NetArena-K8sPolicy-v0",
                                    "NetArena-CapacityPlanning-v0"])
def test_the_same_seed_gives_the_same_record(env_id):
    a, b = gym.make(env_id, level=2), gym.make(env_id, level=2)
    try:
        r1 = play_episode(a, make_expert(a), seed=21, record=True)
        play_episode(a, make_expert(a), seed=22, record=True)  # another episode in between
        r2 = play_episode(b, make_expert(b), seed=21, record=True)
        r3 = play_episode(a, make_expert(a), seed=21, record=True)
    finally:
        a.close()
        b.close()
    assert r1.correct and r1.steps == len(r1.trajectory) >= 1
    assert stable(r1) == stable(r2) == stable(r3)
    assert r1.env == env_id and r1.task == a.unwrapped.task and r1.seed == 21


def test_replaying_the_recorded_scenario_gives_the_same_trajectory():
    env = gym.make("NetArena-Routing-v0", level=3, interface="discrete")
    try:
        r1 = play_episode(env, RandomAgent(env, seed=5), seed=8, record=True)
        r2 = play_episode(env, RandomAgent(env, seed=5), seed=8, record=True,
                          options={"scenario": r1.scenario})
    finally:
        env.close()
    assert [t["action"] for t in r1.trajectory] == [t["action"] for t in r2.trajectory]
    assert [t["observation"] for t in r1.trajectory] == [t["observation"] for t in r2.trajectory]
    assert all("command" in t for t in r1.trajectory)  # the rendered catalogue entry


def test_records_are_json_and_record_false_keeps_no_observation():
    env = gym.make("NetArena-K8sPolicy-v0", level=1)
    try:
        full = play_episode(env, make_expert(env), seed=3, record=True, key="k|1|3",
                            agent_name="expert")
        lean = play_episode(env, make_expert(env), seed=3)
    finally:
        env.close()
    d = json.loads(json.dumps(full.to_dict()))
    assert d["key"] == "k|1|3" and d["agent"] == "expert" and d["initial_observation"]
    assert all(t["observation"] for t in d["trajectory"])
    assert lean.initial_observation is None
    assert all(t["observation"] is None for t in lean.trajectory)
    assert [t["action"] for t in lean.trajectory] == [t["action"] for t in full.trajectory]
    assert sum(t["reward"] for t in d["trajectory"]) == pytest.approx(d["total_reward"])


class Crash:
    def reset(self):
        self.n = 0

    def act(self, observation, info):
        self.n += 1
        if self.n == 2:
            raise RuntimeError("boom at step 2")
        return {"machine": "r0", "command": "ip addr show"}


def test_an_agent_that_raises_is_recorded_or_raised():
    env = gym.make("NetArena-Routing-v0", level=1)
    try:
        rec = play_episode(env, Crash(), seed=1)
        assert rec.steps == 1 and not rec.correct
        (err,) = rec.errors
        assert err["where"] == "agent" and err["step"] == 1 and "boom" in err["message"]
        with pytest.raises(RuntimeError, match="boom"):
            play_episode(env, Crash(), seed=1, catch=False)
    finally:
        env.close()


def test_long_observations_are_clipped_only_when_asked():
    env = gym.make("NetArena-Routing-v0", level=1)
    try:
        clipped = play_episode(env, make_expert(env), seed=2, record=True, max_obs_chars=50)
        whole = play_episode(env, make_expert(env), seed=2, record=True, max_obs_chars=None)
    finally:
        env.close()
    assert clipped.initial_observation.endswith("\n[...]")
    assert len(clipped.initial_observation) == 50 + len("\n[...]")
    assert whole.initial_observation.startswith(clipped.initial_observation[:50])
    assert len(whole.initial_observation) > 50


def test_jsonable_converts_numpy_values():
    import numpy as np
    assert jsonable({"a": np.int64(3), "b": np.array([1, 2]), 4: (np.float32(0.5),)}) == \
        {"a": 3, "b": [1, 2], "4": [0.5]}


class Exits:
    """Ends the grader's process if nothing catches it: ``sys.exit`` at its first step."""

    def __init__(self, exc=SystemExit(3), where="act"):
        self.exc, self.where = exc, where

    def reset(self):
        if self.where == "reset":
            raise self.exc

    def act(self, observation, info):
        raise self.exc


class Custom(BaseException):
    pass


@pytest.mark.parametrize("exc,where", [(SystemExit(3), "act"), (Custom("x"), "act"),
                                       (SystemExit(4), "reset"), (ValueError("r"), "reset")])
def test_an_agent_that_exits_or_raises_any_base_exception_is_recorded(exc, where):
    env = gym.make("NetArena-Routing-v0", level=1)
    try:
        rec = play_episode(env, Exits(exc, where), seed=1)
    finally:
        env.close()
    (err,) = rec.errors
    assert err["where"] == "agent" and err["type"] == type(exc).__name__ and err["step"] == 0
    assert not rec.correct and rec.steps == 0


def test_keyboard_interrupt_stops_the_caller_unless_a_worker_asks_to_record_it():
    env = gym.make("NetArena-Routing-v0", level=1)
    try:
        with pytest.raises(KeyboardInterrupt):  # may be the user's Ctrl-C
            play_episode(env, Exits(KeyboardInterrupt()), seed=1)
        rec = play_episode(env, Exits(KeyboardInterrupt()), seed=1, catch_interrupt=True)
        assert rec.errors[0]["type"] == "KeyboardInterrupt"
        with pytest.raises(SystemExit):
            play_episode(env, Exits(), seed=1, catch=False)
    finally:
        env.close()


class RaisesAtOnce:
    def reset(self):
        pass

    def act(self, observation, info):
        raise RuntimeError("always")


class StepRaises(gym.Wrapper):
    def step(self, action):
        raise OSError("backend went away")


@pytest.mark.parametrize("case", ["agent_act", "agent_reset", "env_step"])
def test_an_episode_that_raised_is_neither_correct_nor_safe(case):
    """The state is unknown, as for a timed-out episode (eval's failed records): an
    always-raising agent must not score 100% safety."""
    env = gym.make("NetArena-Routing-v0", level=1)
    try:
        if case == "agent_act":
            rec = play_episode(env, RaisesAtOnce(), seed=1)
        elif case == "agent_reset":
            rec = play_episode(env, Exits(ValueError("r"), "reset"), seed=1)
        else:
            rec = play_episode(StepRaises(env), make_expert(env), seed=1)
    finally:
        env.close()
    assert rec.errors
    assert (rec.correct, rec.safe, rec.safe_compat) == (False, False, False)
    d = rec.to_dict()
    assert d["safe"] is False and d["safe_compat"] is False
