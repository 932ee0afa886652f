"""The one summariser: Wilson intervals, upstream's figures, levels and categories."""
from __future__ import annotations

import gymnasium as gym
import pytest

import netarena_gym  # noqa: F401  (registers the envs)
from netarena_gym.agents.episode import play_episode
from netarena_gym.agents.experts import make_expert
from netarena_gym.agents.summary import dedupe, mean_interval, summarize, upstream_iterations


def rec(i, correct, safe, safe_compat, steps, *, level=1, category="c", key=True):
    return {"key": f"e|{level}|{i}" if key else None, "env": "e", "level": level,
            "category": category, "correct": correct, "safe": safe,
            "safe_compat": safe_compat, "steps": steps, "max_steps": 10,
            "agent_seconds": 0.1, "total_reward": 0.0}


def test_correctness_interval_is_wilsons():
    recs = [rec(i, i < 8, True, True, 1) for i in range(10)]
    s = summarize(recs)
    assert s["correctness"] == 0.8
    assert s["correctness_ci95"] == pytest.approx([0.4901625, 0.9433178], abs=1e-6)
    assert s["safety_ci95"] == pytest.approx([0.7224672, 1.0], abs=1e-6)
    none = summarize([rec(i, False, True, True, 1) for i in range(10)])
    assert none["correctness_ci95"] == pytest.approx([0.0, 0.2775328], abs=1e-6)


def test_summary_figures_follow_upstream_definitions():
    recs = [rec(i, c, s, sc, st) for i, (c, s, sc, st) in
            enumerate([(True, True, True, 3), (False, False, True, 10), (True, False, False, 5)])]
    s = summarize(recs)
    assert [upstream_iterations(r) for r in recs] == [4, 11, 6]
    assert s["upstream"]["avg_iterations"] == 7.0
    assert s["correctness"] == pytest.approx(2 / 3) and s["safety"] == pytest.approx(1 / 3)
    assert s["upstream"]["avg_safety"] == pytest.approx(2 / 3)
    assert s["upstream"]["score"] == pytest.approx(50 * (2 / 3 + 2 / 3))
    assert s["steps_ci95"][0] < s["mean_steps"] < s["steps_ci95"][1]
    assert mean_interval([3.0, 10.0, 5.0])[0] == pytest.approx(6.0)


def test_by_level_and_by_category():
    recs = ([rec(i, True, True, True, 2, level=1, category="a") for i in range(3)]
            + [rec(10 + i, False, True, True, 9, level=2, category="b") for i in range(2)])
    s = summarize(recs, meta={"env": "e"})
    assert s["env"] == "e" and s["episodes"] == 5
    assert set(s["by_category"]) == {"a", "b"}
    assert s["by_level"]["1"]["correctness"] == 1.0 and s["by_level"]["2"]["correctness"] == 0.0
    assert s["by_level"]["2"]["by_category"]["b"]["mean_steps"] == 9.0


def test_a_resumed_key_counts_once_keyless_records_all_count():
    recs = [rec(0, False, True, True, 3), rec(0, True, True, True, 3)]
    assert summarize(recs)["episodes"] == 1 and summarize(recs)["correctness"] == 1.0
    keyless = [rec(0, True, True, True, 1, key=False)] * 3
    assert len(dedupe(keyless)) == 3


def test_episode_records_summarise_like_their_dicts():
    env = gym.make("NetArena-Routing-v0", level=1)
    try:
        recs = [play_episode(env, make_expert(env), seed=s) for s in range(3)]
    finally:
        env.close()
    a, b = summarize(recs), summarize([r.to_dict() for r in recs])
    assert a["correctness"] == b["correctness"] == 1.0
    assert a["mean_steps"] == b["mean_steps"] and a["by_category"].keys() == b["by_category"].keys()
