"""The session manager: random ids, the limit (also under concurrent opens), idle reaping,
clean close, errors instead of raises for steps without a live episode, and the filter that
keeps the scenario out of what a client sees."""
from __future__ import annotations

import threading
import time

import pytest

from netarena_gym.errors import InvalidConfig
from netarena_gym.serve.sessions import (EXPIRED, NO_EPISODE, OVER, PUBLIC_INFO,
                                         SessionExpired, SessionLimit, SessionManager,
                                         UnknownSession)
from tests.serve.conftest import counting_make


def test_ids_are_random_and_unique():
    m = SessionManager("NetArena-Routing-v0", max_sessions=6)
    try:
        ids = [m.open().id for _ in range(6)]
        assert len(set(ids)) == 6
        assert all(len(i) >= 20 and "Routing" not in i and "1" != i for i in ids)
    finally:
        m.close_all()


def test_limit_holds_under_concurrent_opens():
    m = SessionManager("NetArena-CapacityPlanning-v0", max_sessions=3)
    got, refused = [], []

    def open_one():
        try:
            got.append(m.open())
        except SessionLimit as e:
            refused.append(str(e))

    threads = [threading.Thread(target=open_one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert len(got) == 3 and len(refused) == 5 and len(m) == 3
        assert "limit of 3 sessions" in refused[0]
        m.close(got[0].id)
        assert m.open() is not None  # a freed slot is usable again
    finally:
        m.close_all()


def test_idle_sessions_are_reaped_and_their_env_closed():
    m = SessionManager("NetArena-Routing-v0", idle_timeout=1.0)  # > a reset on a busy CPU
    try:
        s = m.open()
        s.reset(seed=1)
        busy = m.open()
        time.sleep(1.2)
        busy.reset(seed=2)  # used: not idle
        assert m.reap() == [s.id]
        assert s.env is None and len(m) == 1
        with pytest.raises(UnknownSession, match="unknown or expired"):
            m.get(s.id)
        assert m.get(busy.id) is busy
    finally:
        m.close_all()


def test_a_reaped_session_stays_closed_and_builds_no_env():
    """A server may still hold a reaped session (an open WebSocket): its requests answer
    that it expired, and none of them builds an env outside the pool (which nothing would
    close, not even close_all)."""
    made, closed = [], []
    m = SessionManager("NetArena-Routing-v0", idle_timeout=0.5, make=counting_make(made, closed))
    s = m.open()
    s.reset(seed=1)
    time.sleep(0.7)
    assert m.reap() == [s.id] and len(made) == 1 and len(closed) == 1
    text, reward, done, info = s.step({"machine": "r0", "command": "ip route"})
    assert text == EXPIRED and done and reward == 0.0 and info["error"] == EXPIRED
    assert s.status() == EXPIRED
    with pytest.raises(SessionExpired, match="session expired"):
        s.reset(seed=2)
    with pytest.raises(SessionExpired):
        s.start()
    assert len(made) == 1 and s.env is None and len(m) == 0
    m.close_all()
    assert len(made) == len(closed)


def test_close_key_closes_the_bound_session_only():
    m = SessionManager("NetArena-Routing-v0", max_sessions=2)
    try:
        a, b = m.for_key("a"), m.for_key("b")
        m.close_key("a")
        m.close_key("nobody")
        assert a.closed and a.env is None and not b.closed and m.ids() == [b.id]
    finally:
        m.close_all()


def test_steps_without_an_episode_answer_an_error_text():
    m = SessionManager("NetArena-Routing-v0", env_options={"max_steps": 1})
    try:
        s = m.open()
        text, reward, done, info = s.step({"machine": "r0", "command": "ip addr"})
        assert text == NO_EPISODE and done and reward == 0.0
        s.reset(seed=0)
        _, _, done, info = s.step({"machine": "r0", "command": "ip addr"})
        assert done and set(info) <= set(PUBLIC_INFO)
        text, _, done, info = s.step({"machine": "r0", "command": "ip addr"})
        assert text == OVER and info["error"] == OVER
        assert s.record()["n_steps"] == 1
    finally:
        m.close_all()


def test_a_bad_level_keeps_the_session_usable():
    m = SessionManager("NetArena-K8sPolicy-v0")
    try:
        s = m.open()
        s.reset(seed=0)
        with pytest.raises(InvalidConfig):
            s.reset(seed=0, level=9)
        assert s.reset(seed=0, level=2)[0].startswith("Connectivity check")
    finally:
        m.close_all()


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_a_bad_seed_is_invalid_config_and_keeps_the_session_usable(seed):
    """A negative seed reached Gymnasium's seeding and came back as a generic tool error."""
    m = SessionManager("NetArena-Routing-v0")
    try:
        s = m.open()
        with pytest.raises(InvalidConfig, match="seed must be an integer >= 0"):
            s.reset(seed=seed)
        assert "Steps left" in s.reset(seed=0)[0]
    finally:
        m.close_all()


def test_public_info_and_record_hold_no_scenario():
    m = SessionManager("NetArena-Routing-v0")
    try:
        s = m.open()
        _, info = s.reset(seed=3)
        s.step({"machine": "r0", "command": "ip route"})
        assert "scenario" not in info and "extra" not in info
        assert set(s.record()) == {"env", "level", "seed", "steps", "n_steps", "total_reward",
                                   "done", "correct", "safe", "safe_compat"}
    finally:
        m.close_all()


def test_unknown_env_id_and_bad_limit_fail_at_startup():
    with pytest.raises(Exception, match="NoSuchEnv"):
        SessionManager("NoSuchEnv-v0")
    with pytest.raises(ValueError):
        SessionManager("NetArena-Routing-v0", max_sessions=0)


def test_client_keys_bind_one_session_until_it_is_closed_or_reaped():
    m = SessionManager("NetArena-Routing-v0", max_sessions=2, idle_timeout=0.2)
    try:
        a = m.for_key("conv-a")
        assert m.for_key("conv-a") is a and a.key == "conv-a" and "conv-a" not in a.id
        b = m.for_key("conv-b")
        with pytest.raises(SessionLimit):
            m.for_key("conv-c")
        m.close(b.id)
        c = m.for_key("conv-c")  # b's slot is free again
        assert c.id not in (a.id, b.id)
        time.sleep(0.3)
        assert set(m.reap()) == {a.id, c.id} and len(m) == 0
        again = m.for_key("conv-a")  # reaped: a new session (a new env) for the same key
        assert again.id != a.id and a.env is None and again.env is not None
    finally:
        m.close_all()
