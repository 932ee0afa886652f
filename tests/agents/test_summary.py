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


def test_upstream_iterations_follow_each_tasks_loop():
    """Route measures before each command (k + 1 on success, budget + 1 on failure); K8s
    checks after each (k on success, the budget on failure; spec k8s 3.6)."""
    assert upstream_iterations({"task": "routing", "correct": True, "steps": 2,
                                "max_steps": 10}) == 3
    assert upstream_iterations({"task": "routing", "correct": False, "steps": 10,
                                "max_steps": 10}) == 11
    assert upstream_iterations({"task": "k8s", "correct": True, "steps": 2,
                                "max_steps": 10}) == 2
    assert upstream_iterations({"task": "k8s", "correct": False, "steps": 10,
                                "max_steps": 10}) == 10
    assert upstream_iterations({"env": "NetArena-K8sPolicy-v0", "correct": True, "steps": 2,
                                "max_steps": 10}) == 2
    k8s = [{"task": "k8s", "correct": c, "steps": st, "max_steps": 10, "safe": True,
            "safe_compat": True, "agent_seconds": 0.0} for c, st in ((True, 2), (False, 10))]
    assert summarize(k8s)["upstream"]["avg_iterations"] == 6.0


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


def test_a_mean_of_one_has_no_interval_and_intervals_stay_non_negative():
    assert mean_interval([4.0]) == (4.0, None, None)
    assert mean_interval([]) == (0.0, None, None)
    m, lo, hi = mean_interval([0.0, 0.0, 0.0, 100.0], low=0.0)
    assert m == 25.0 and lo == 0.0 and hi > m
    assert mean_interval([0.0, 0.0, 0.0, 100.0])[1] < 0  # unclipped, as asked
    one = summarize([rec(0, True, True, True, 3)])
    assert one["steps_ci95"] == [None, None] and one["agent_seconds_ci95"] == [None, None]
    recs = [{**rec(i, True, True, True, 1), "agent_seconds": 0.0 if i else 50.0}
            for i in range(5)]
    s = summarize(recs)
    assert s["agent_seconds_ci95"][0] == 0.0 and s["steps_ci95"][0] >= 0.0


def test_failed_calls_are_not_also_counted_as_unparsed_replies():
    calls = [{"error": "HTTP 500: boom", "parsed": False},  # failed: no reply to parse
             {"error": None, "parsed": False},             # a reply that did not parse
             {"error": None, "parsed": True}]
    r = {**rec(0, False, True, True, 3), "trajectory": [{"llm": c} for c in calls]}
    llm = summarize([r])["llm"]
    assert llm["calls"] == 3 and llm["failed_calls"] == 1 and llm["unparsed_replies"] == 1


def _scen(faults=(), **meta):
    return {"faults": [{"type": t} for t in faults], "meta": meta}


def test_by_category_groups_as_the_tables_do():
    """Grouped by the raw record category, one category split in two by fault order, and
    capacity planning's key was 'capacity planning, level-1, rank' where tables say
    'rank'."""
    from netarena_gym.eval.groups import table

    recs = [{**rec(0, True, True, True, 2, category="b+a"),
             "scenario": _scen(["b", "a"], category="b+a")},
            {**rec(1, True, True, True, 2, category="a+b"),
             "scenario": _scen(["a", "b"], category="a+b")},
            {**rec(2, False, True, True, 2, category="capacity planning, level-1, rank"),
             "scenario": _scen(template="rank",
                               category="capacity planning, level-1, rank")},
            {**rec(3, False, False, False, 0, category=None), "scenario": None}]
    s = summarize(recs)
    assert set(s["by_category"]) == {"a+b", "rank", "none"}
    assert s["by_category"]["a+b"]["episodes"] == 2
    assert set(s["by_level"]["1"]["by_category"]) == {"a+b", "rank", "none"}
    rows = set(table(recs, min_n=1)["1"]) - {"(all)"}
    assert rows == set(s["by_category"])
