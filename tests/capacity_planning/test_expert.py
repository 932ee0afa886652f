"""The expert reaches 100% correctness and 100% safety at every level, in both modes."""
import gymnasium as gym
import pytest

from netarena_gym.agents import play_episode, summarize
from netarena_gym.capacity_planning.expert import CapacityPlanningExpert

ENV_ID = "NetArena-CapacityPlanning-v0"  # registered in conftest.py
TOOL_EPISODES = 300
CODE_EPISODES = 200


def _failures(results):
    return [(r.scenario["faults"][0]["text"], r.metrics) for r in results if not (r.correct and r.safe)]


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_expert_is_perfect_with_tools(level):
    env = gym.make(ENV_ID, level=level, interface="text")
    expert = CapacityPlanningExpert()
    results = [play_episode(env, expert, seed=1000 + i) for i in range(TOOL_EPISODES)]
    assert not _failures(results), _failures(results)[:3]
    s = summarize(results)
    assert s["correctness"] == 1.0 and s["safety"] == 1.0 and s["safety_compat"] == 1.0
    assert len(s["by_category"]) >= 2


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_expert_is_perfect_writing_code(level):
    env = gym.make(ENV_ID, level=level, interface="code")
    expert = CapacityPlanningExpert()
    try:
        results = [play_episode(env, expert, seed=2000 + i) for i in range(CODE_EPISODES)]
    finally:
        env.close()
    assert not _failures(results), _failures(results)[:3]
    assert all(r.steps == 1 and r.safe_compat for r in results)


def test_expert_matches_upstream_ground_truth_at_compat():
    """Correct by upstream's rules on every query; safe exactly when upstream's own ground
    truth is (removing a switch or adding a port under a block is unsafe by construction)."""
    env = gym.make(ENV_ID, level="compat")
    expert = CapacityPlanningExpert()
    try:
        results = []
        for i in range(CODE_EPISODES):
            r = play_episode(env, expert, seed=3000 + i)
            flags = env.unwrapped.query.flags
            assert r.correct, r.scenario["faults"][0]["text"]
            assert r.safe == flags["gt_safe"] and r.safe_compat == flags["gt_safe_compat"]
            results.append(r)
    finally:
        env.close()
    assert {r.scenario["meta"]["template"] for r in results} == {
        "add", "rank", "remove", "list", "remove-list", "remove-rank", "remove-count",
        "add-list", "add-rank", "add-count"}


def test_expert_uses_only_observations():
    env = gym.make(ENV_ID, level=4, interface="text")
    obs, info = env.reset(seed=3)
    a, b = CapacityPlanningExpert(), CapacityPlanningExpert()
    for _ in range(6):
        x, y = a.act(obs, None), b.act(obs, {})
        assert x == y
        obs, *_ = env.step(x)
