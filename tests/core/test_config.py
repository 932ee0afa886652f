import inspect
import warnings

import pytest

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


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), True])
def test_routing_probe_timeout_must_be_positive(timeout):
    with pytest.raises(InvalidConfig, match="probe_timeout must be > 0"):
        RoutingEnv(probe_timeout=timeout)
