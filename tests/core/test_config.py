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
