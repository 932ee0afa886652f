import inspect
import warnings

import pytest

from netarena_gym.capacity_planning.commands.sandbox import Limits
from netarena_gym.capacity_planning.env import CapacityPlanningEnv
from netarena_gym.core.config import EnvConfig
from netarena_gym.core.reward import RewardConfig
from netarena_gym.errors import InvalidConfig
from netarena_gym.k8s.env import K8sPolicyEnv
from netarena_gym.routing.env import RoutingEnv

ENVS = [RoutingEnv, K8sPolicyEnv, CapacityPlanningEnv]


@pytest.mark.parametrize("cls", ENVS)
def test_init_is_keyword_only_and_matches_its_config(cls):
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert all(p.kind is p.KEYWORD_ONLY for p in params)
    names = [p.name for p in params]
    assert names[:len(EnvConfig.field_names())] == list(EnvConfig.field_names())
    assert tuple(names) == cls.config_class.field_names()


@pytest.mark.parametrize("cls", ENVS)
def test_unknown_key_lists_valid_ones(cls):
    with pytest.raises(InvalidConfig, match="valid options: level, interface, backend"):
        cls.from_config({"level": 1, "probes": "full"})


@pytest.mark.parametrize("make", [lambda: RewardConfig(5.0, -3.0), lambda: Limits(1, 2)])
def test_config_dataclasses_are_keyword_only(make):
    """``RewardConfig(5.0, -3.0)`` was taken (success 5, safety -3) by position."""
    with pytest.raises(TypeError, match="positional argument"):
        make()


def test_from_config_builds_the_same_env():
    env = RoutingEnv.from_config({"level": 2, "interface": "discrete"})
    assert env.level == 2 and env.interface == "discrete" and env.config.level == 2


def test_reward_safety_and_deprecated_alias():
    assert RewardConfig.coerce({"safety": -0.3}).safety == -0.3
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert RewardConfig.coerce({"broken_pair": -0.4}).safety == -0.4
    assert any(issubclass(x.category, DeprecationWarning) for x in w)
    with pytest.raises(InvalidConfig, match="known"):
        RewardConfig.coerce({"nope": 1.0})


@pytest.mark.parametrize("cls", ENVS)
def test_env_docstring_has_gymnasium_sections(cls):
    for section in ("Description", "Action Space", "Observation Space", "Rewards",
                    "Starting State", "Episode End", "Arguments", "Version History"):
        assert f"## {section}" in cls.__doc__, section


@pytest.mark.parametrize("cls", ENVS)
@pytest.mark.parametrize("level", [True, 1.0, None, [1]])
def test_level_of_another_type_is_refused(cls, level):
    """``True == 1`` and ``1.0 == 1``: without a type check they passed as level 1."""
    with pytest.raises(InvalidConfig, match="level must be an int or a level name"):
        cls(level=level)


@pytest.mark.parametrize("cls, field, name", [(RoutingEnv, "fault_types", "remove_ip"),
                                              (K8sPolicyEnv, "fault_types", "deny_all"),
                                              (CapacityPlanningEnv, "templates", "list")])
def test_a_bare_string_for_a_list_of_names_is_refused(cls, field, name):
    """``tuple("list")`` is four letters; the message shows the list to write instead."""
    with pytest.raises(InvalidConfig, match=rf"write {field}=\('{name}',\)"):
        cls(**{field: name})
    with pytest.raises(InvalidConfig, match=f"{field} must be a list of names"):
        cls(**{field: [1]})
    env = cls(**{field: [name]})
    assert getattr(env.config, field) == [name]


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf"), True, "5"])
@pytest.mark.parametrize("cls, field", [(RoutingEnv, "probe_timeout"),
                                        (RoutingEnv, "command_timeout"),
                                        (K8sPolicyEnv, "command_timeout"),
                                        (CapacityPlanningEnv, "command_timeout")])
def test_seconds_must_be_finite_and_positive(cls, field, timeout):
    """command_timeout=0 timed every command out; inf raised OverflowError inside ping."""
    with pytest.raises(InvalidConfig, match=f"{field} must be a finite number of seconds > 0"):
        cls(**{field: timeout})


@pytest.mark.parametrize("cls", ENVS)
@pytest.mark.parametrize("value", [-1, 1.5, True, "3", None])
def test_history_is_a_count(cls, value):
    """-1 silently emptied the transcript; 1.5 became 1."""
    with pytest.raises(InvalidConfig, match="history must be an integer >= 0"):
        cls(history=value)


@pytest.mark.parametrize("cls, field", [(K8sPolicyEnv, "initial_report"),
                                        (K8sPolicyEnv, "end_port"),
                                        (CapacityPlanningEnv, "python_guard"),
                                        (CapacityPlanningEnv, "unsafe_sandbox"),
                                        (RoutingEnv, "netem_faults"),
                                        (RoutingEnv, "interface_labels")])
@pytest.mark.parametrize("value", ["false", "no", 0, 1, [0]])
def test_switches_take_only_true_or_false(cls, field, value):
    """``unsafe_sandbox="false"`` is truthy: it ran agent code without bubblewrap."""
    with pytest.raises(InvalidConfig, match=f"{field} must be True"):
        cls(**{field: value})


@pytest.mark.parametrize("limits, says", [
    ({"memory_mb": -1}, "memory_mb must be an integer in"),
    ({"memory_mb": 0}, "memory_mb must be an integer in"),
    ({"wall_seconds": float("inf")}, "wall_seconds must be a number in"),
    ({"cpu_seconds": float("nan")}, "cpu_seconds must be a number in"),
    ({"output_bytes": -1}, "output_bytes must be an integer in"),
    ({"bogus": 1}, "unknown limits"),
    ([1], "limits must be a dict"),
])
def test_sandbox_limits_are_checked(limits, says):
    """A negative memory_mb wrapped round to no memory limit in the worker."""
    with pytest.raises(InvalidConfig, match=says):
        CapacityPlanningEnv(interface="code", limits=limits)


@pytest.mark.parametrize("verbs, says", [("get", "is a list of names"),
                                         (["exec"], "non-empty subset"),
                                         ([], "non-empty subset"), (["GET"], "non-empty subset")])
def test_allowed_verbs_are_a_subset_of_the_implemented_ones(verbs, says):
    with pytest.raises(InvalidConfig, match=says):
        K8sPolicyEnv(allowed_verbs=verbs)
    assert K8sPolicyEnv(allowed_verbs=["get", "patch"]).config.allowed_verbs == ["get", "patch"]


@pytest.mark.parametrize("namespace", [1, "-bad", "Bad", "a" * 64, "has space"])
def test_namespace_is_a_kubernetes_name(namespace):
    with pytest.raises(InvalidConfig, match="namespace must be a Kubernetes name"):
        K8sPolicyEnv(namespace=namespace)


@pytest.mark.parametrize("reward, says", [
    ({"progress": float("nan")}, "'progress' must be a finite number"),
    ({"step": True}, "'step' must be a finite number"), ({"success": "1"}, "'success' must"),
    ({"normalize_safety": "no"}, "normalize_safety must be True or False"),
    ([1], "reward must be a RewardConfig")])
def test_reward_weights_are_finite_numbers(reward, says):
    with pytest.raises(InvalidConfig, match=says):
        RoutingEnv(reward=reward)


@pytest.mark.parametrize("topology, says", [
    ({"subnets": 0}, "topology subnets must be"), ({"hosts": 10**6}, "topology hosts must be"),
    ({"routers": "3"}, "topology routers must be"), ({"routers": [3]}, "topology routers must"),
    (5, "topology must be a dict"),
    ({"routers": 1, "subnets": 1}, "two subnets or more")])
def test_routing_topology_sizes_are_checked_at_construction(topology, says):
    """They passed construction and failed at reset (ValueError, IndexError, numpy's
    'high <= 0')."""
    with pytest.raises(InvalidConfig, match=says):
        RoutingEnv(level=3, topology=topology)


def test_compat_topology_takes_no_routers_or_shape():
    with pytest.raises(InvalidConfig, match="one-router networks"):
        RoutingEnv(level="compat", topology={"routers": 3})
    assert RoutingEnv(level="compat", topology={"subnets": 3}).reset(seed=0)


@pytest.mark.parametrize("topologies, says", [
    (0, "pool size must be 1..256"), (10**6, "pool size must be 1..256"),
    ([{"superblocks": 0}], "need an aggregation block"),
    ([{"superblocks": 2.5}], "superblocks must be an integer"), ([1], "a dict or a TopologySpec"),
    ([], "non-empty list")])
def test_capacity_topologies_are_checked_at_construction(topologies, says):
    with pytest.raises(InvalidConfig, match=says):
        CapacityPlanningEnv(topologies=topologies)


@pytest.mark.parametrize("cls", ENVS)
@pytest.mark.parametrize("kw, says", [({"observability": "none"}, "got 'none'"),
                                      ({"render_mode": "human"}, "got 'human'")])
def test_a_refused_choice_names_the_value_given(cls, kw, says):
    with pytest.raises(InvalidConfig, match=says):
        cls(**kw)


@pytest.mark.parametrize("kw", [{"command_timeout": 10**400}, {"command_timeout": 1e9},
                                {"reward": {"step": 10**400}},
                                {"limits": {"memory_mb": 10**400}}])
def test_huge_numbers_are_refused_not_overflow_errors(kw):
    cls = CapacityPlanningEnv if "limits" in kw else RoutingEnv
    with pytest.raises(InvalidConfig):
        cls(**kw)
