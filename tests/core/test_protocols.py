"""The plug-point protocols: every task env is a Task, every backend a Backend."""
import gymnasium as gym
import pytest

from netarena_gym.capacity_planning.env import CapacityPlanningEnv
from netarena_gym.core.env import NetArenaEnv
from netarena_gym.core.protocols import Backend, Task
from netarena_gym.k8s.env import K8sPolicyEnv
from netarena_gym.routing.env import RoutingEnv


@pytest.mark.parametrize("make", [
    lambda: RoutingEnv(level=1),
    lambda: K8sPolicyEnv(level=1),
    lambda: CapacityPlanningEnv(level=1, interface="text"),
    lambda: CapacityPlanningEnv(level=1, interface="code"),
], ids=["routing", "k8s", "capacity_planning_text", "capacity_planning_code"])
def test_envs_satisfy_task_protocol(make):
    env = make()
    try:
        assert isinstance(env, NetArenaEnv)
        assert isinstance(env, Task)
        missing = [m for m in ("name", "apply", "run", "observe", "reset_to_baseline",
                               "close") if not hasattr(env.backend, m)]
        assert not missing
        assert env.interface in env.interfaces
        env.reset(seed=0)
        assert env._connectivity().dtype == bool
    finally:
        env.close()


def test_a_plain_gym_env_is_not_a_task():
    class Plain(gym.Env):
        pass
    assert not isinstance(Plain(), Task)


def test_capacity_planning_backend_is_a_backend():
    env = CapacityPlanningEnv(level=1, interface="text")
    try:
        assert isinstance(env.backend, Backend)
    finally:
        env.close()
