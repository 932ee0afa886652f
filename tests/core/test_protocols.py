"""The plug-point protocols: every task env is a Task, every backend class conforms to
:class:`netarena_gym.core.protocols.Backend`.

The simulators are instantiated and checked with ``isinstance`` (the protocol is
``runtime_checkable``) and by running one action through ``run(action)``; the real backends
need root or a cluster, so their classes are checked by signature."""
from __future__ import annotations

import inspect

import gymnasium as gym
import pytest

from netarena_gym.capacity_planning.env import CapacityPlanningEnv
from netarena_gym.core.env import NetArenaEnv
from netarena_gym.core.protocols import Backend, Task
from netarena_gym.k8s.env import K8sPolicyEnv
from netarena_gym.routing.env import RoutingEnv
from netarena_gym.core.scenario import Scenario
from netarena_gym.k8s.backends.kubernetes import KubernetesBackend
from netarena_gym.k8s.backends.sim import SimBackend as K8sSim
from netarena_gym.routing.backends.mininet import MininetBackend
from netarena_gym.routing.backends.sim import SimBackend as RoutingSim

ALL = [RoutingSim, MininetBackend, K8sSim, KubernetesBackend]
METHODS = ("apply", "run", "observe", "reset_to_baseline", "close")


@pytest.mark.parametrize("cls", ALL, ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_backend_class_has_the_protocol_members(cls):
    assert isinstance(cls.name, str) and cls.name
    assert isinstance(cls.capabilities, frozenset)
    for m in METHODS:
        assert callable(getattr(cls, m, None)), m
    params = list(inspect.signature(cls.run).parameters)
    assert params == ["self", "action"], params
    assert list(inspect.signature(cls.apply).parameters)[:3] == ["self", "scenario", "prebuilt"]


def test_backend_names_are_distinct_per_task():
    assert {RoutingSim.name, MininetBackend.name} == {"sim", "mininet"}
    assert {K8sSim.name, KubernetesBackend.name} == {"sim", "kubernetes"}


def test_routing_sim_conforms_and_runs_an_action():
    topology = {"hosts": [[1, 2, 1]], "parents": []}  # r0 with four hosts on three LANs
    sc = Scenario(task="routing", level=1, params={"topology": topology}, faults=(), seed=None)
    b = RoutingSim()
    assert isinstance(b, Backend)
    b.apply(sc)
    r = b.run({"machine": "r0", "command": "sysctl -n net.ipv4.ip_forward"})
    assert (r.status, r.output) == (0, "1\n")
    before = b.observe().copy()
    assert before.all()  # healthy baseline: every pair reachable
    b.run({"machine": "r0", "command": "sysctl -w net.ipv4.ip_forward=0"})
    assert not b.observe().all()
    b.reset_to_baseline()
    assert (b.observe() == before).all()
    b.close()


def test_k8s_sim_conforms_and_runs_an_action():
    b = K8sSim(end_port=False)
    assert isinstance(b, Backend)
    b.apply(Scenario(task="k8s", level=1, params={"namespace": "exp", "probes": "full"},
                     faults=()))
    assert b.run({"command": "kubectl get netpol -o name"}).output.startswith(
        "networkpolicy.networking.k8s.io/")
    r = b.run({"command": "kubectl apply -f -", "stdin": "apiVersion: networking.k8s.io/v1\n"
               "kind: NetworkPolicy\nmetadata:\n  name: deny-x\nspec:\n  podSelector: {}\n"
               "  policyTypes: [Ingress]\n"})
    assert r.status == 0, r.output
    assert "deny-x" in b.run({"command": "kubectl get netpol -o name"}).output
    b.reset_to_baseline()
    assert "deny-x" not in b.run({"command": "kubectl get netpol -o name"}).output
    b.close()



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
