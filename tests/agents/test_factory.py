"""``make_agent``: every spec, clear errors, and no import of the optional agents' modules."""
from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import pytest

import netarena_gym  # noqa: F401  (registers the envs)
from netarena_gym.agents.factory import AGENTS, check_agent_spec, make_agent
from netarena_gym.agents.llm import LLMAgent
from netarena_gym.agents.random import RandomAgent
from netarena_gym.routing.expert import RoutingExpert


@pytest.fixture
def env():
    e = gym.make("NetArena-Routing-v0", level=1)
    yield e
    e.close()


def test_builtin_specs(env):
    assert AGENTS == ("expert", "random", "llm", "hf", "a2a")
    assert isinstance(make_agent("expert", env), RoutingExpert)
    assert isinstance(make_agent("random", env, seed=1), RandomAgent)
    llm = make_agent("llm", env, options={"base_url": "http://127.0.0.1:9/v1", "model": "m",
                                          "prompt": "cot"})
    assert isinstance(llm, LLMAgent) and "<think>" in llm.system


def test_module_class_specs_get_the_env_and_options(env):
    agent = make_agent("tests.eval.helper_agents:SlowExpert", env, options={"delay": 0.5})
    assert agent.delay == 0.5
    check_agent_spec("tests.eval.helper_agents:SlowExpert")


@pytest.mark.parametrize("spec", ["", "nope", "mod:", ":Cls"])
def test_unknown_specs_fail_with_the_list_of_valid_ones(env, spec):
    with pytest.raises(ValueError, match="use expert, random, llm, hf, a2a or module:Class"):
        check_agent_spec(spec)
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent(spec, env)


def test_a_module_class_that_does_not_import_is_a_clear_error(env):
    with pytest.raises(ValueError, match="cannot load agent 'no_such_module_x:A'"):
        check_agent_spec("no_such_module_x:A")
    with pytest.raises(ValueError, match="cannot load agent 'tests.eval.helper_agents:Nope'"):
        make_agent("tests.eval.helper_agents:Nope", env)


def test_missing_settings_fail_before_any_episode(env):
    with pytest.raises(ValueError, match="--agent hf needs --model PATH"):
        make_agent("hf", env)
    with pytest.raises(ValueError, match="unknown LLM provider"):
        make_agent("llm", env, options={"provider": "carrier-pigeon"})


def test_the_package_does_not_import_servers_trainers_or_task_experts():
    code = ("import sys, netarena_gym.agents, netarena_gym.agents.factory; "
            "bad = [m for m in sys.modules if m.startswith(('netarena_gym.a2a', "
            "'netarena_gym.train', 'netarena_gym.eval')) or m.endswith('.expert')]; "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout.strip()
    assert out == "[]"


class NoArgsAgent:
    def reset(self):
        pass

    def act(self, observation, info):
        return {"machine": "r0", "command": "ip route"}


class BrokenInit(NoArgsAgent):
    def __init__(self, env):
        raise TypeError("a real bug inside __init__")


class NotAnAgent:
    def __init__(self, env):
        self.env = env


NOT_CALLABLE = 3


def test_a_module_class_without_arguments_is_built_without_them(env):
    assert isinstance(make_agent("tests.agents.test_factory:NoArgsAgent", env), NoArgsAgent)


@pytest.mark.parametrize("spec, says", [
    ("os:path", "is a module, not a class or a factory"),
    ("tests.agents.test_factory:NOT_CALLABLE", "is a int, not a class"),
    ("json:loads", "building agent 'json:loads' failed: TypeError"),
    ("tests.agents.test_factory:BrokenInit", "failed: TypeError: a real bug inside __init__"),
    ("tests.agents.test_factory:NotAnAgent", r"without reset\(\) and act\(\)"),
])
def test_a_module_object_that_is_not_an_agent_is_a_clear_error(env, spec, says):
    """Before: TypeError or AttributeError tracebacks, and an ``except TypeError`` that hid
    a real TypeError inside the agent's ``__init__`` by calling it again without the env."""
    with pytest.raises(ValueError, match=says):
        check_agent_spec(spec)
        make_agent(spec, env)
