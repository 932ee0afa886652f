"""The expert registry: every task's expert solves its episodes; new tasks register."""
from __future__ import annotations

import gymnasium as gym
import pytest

import netarena_gym  # noqa: F401  (registers the envs)
from netarena_gym.agents.episode import play_episode
from netarena_gym.agents.experts import (expert_class, make_expert, register_expert,
                                         registered_tasks)
from netarena_gym.agents.summary import summarize

ENVS = {"NetArena-Routing-v0": "routing", "NetArena-K8sPolicy-v0": "k8s",
        "NetArena-CapacityPlanning-v0": "capacity_planning"}


@pytest.mark.parametrize("env_id", sorted(ENVS))
def test_the_registered_expert_solves_every_task(env_id):
    env = gym.make(env_id, level=2, interface="text")
    try:
        assert env.unwrapped.task == ENVS[env_id]
        expert = make_expert(env)
        assert type(expert).__module__ == f"netarena_gym.{ENVS[env_id]}.expert"
        recs = [play_episode(env, expert, seed=100 + i, catch=False) for i in range(5)]
    finally:
        env.close()
    s = summarize(recs)
    assert s["correctness"] == 1.0 and s["safety"] == 1.0, [r.scenario for r in recs]


def test_experts_are_imported_by_path_and_refuse_the_discrete_interface():
    assert set(ENVS.values()) <= set(registered_tasks())
    from netarena_gym.routing.expert import RoutingExpert
    assert expert_class("routing") is RoutingExpert
    env = gym.make("NetArena-Routing-v0", interface="discrete")
    try:
        with pytest.raises(ValueError, match="text observations"):
            make_expert(env)
    finally:
        env.close()


class _Toy:
    def reset(self):
        pass

    def act(self, observation, info):
        return "noop"


def test_a_new_task_registers_its_expert():
    register_expert("toy_task_for_tests", _Toy)
    assert expert_class("toy_task_for_tests") is _Toy
    register_expert("toy_task_by_path", "tests.agents.test_experts:_Toy")
    assert expert_class("toy_task_by_path") is _Toy
    with pytest.raises(ValueError, match="no expert registered for task 'nope'"):
        expert_class("nope")
    with pytest.raises(ValueError, match="module:Class"):
        register_expert("bad", "no_colon_here")
