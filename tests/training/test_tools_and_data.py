"""The tool environments and the datasets, without torch: the GRPO and SFT plumbing's
contract with the envs."""
import inspect
import json

import gymnasium as gym
import pytest

import netarena_gym
from netarena_gym.agents.episode import play_episode
from netarena_gym.routing.expert import RoutingExpert
from netarena_gym.train import data as D
from netarena_gym.train.tools import (
    ALL_COMPONENTS, SOLVED, TOOL_CLASSES, EpisodeOver, RoutingTools, env_action,
    make_environment_factory, play_call, tool_names)

from .conftest import ROUTING, requires_transformers


def _play_expert(tools_env, seed, level="1"):
    """Drive a tool env with the expert, exactly as a model's tool calls would."""
    obs = tools_env.reset(seed=seed, level=level, prompt=[], env_id=ROUTING)
    first = obs.split("Current state:\n", 1)[1]
    expert, answers, o = RoutingExpert(), [], first
    while True:
        a = expert.act(o, {})
        o = tools_env.run(**a)
        answers.append((a, o))
        if "Episode over" in o:
            return answers


@requires_transformers
def test_tool_class_follows_trl_contract():
    cls = make_environment_factory(ROUTING)
    assert tool_names(cls) == ["run"]
    sig = inspect.signature(cls.run)
    assert [p.annotation for p in list(sig.parameters.values())[1:]] == ["str", "str"]
    assert "Args:" in cls.run.__doc__ and "machine:" in cls.run.__doc__
    assert not inspect.signature(cls).parameters  # built with no arguments
    schema = cls._tool_schemas()[0]["function"]
    assert schema["name"] == "run" and schema["parameters"]["required"] == ["machine", "command"]


def test_tool_calls_step_the_env_and_reward_is_the_envs():
    tools_env = make_environment_factory(ROUTING)()
    answers = _play_expert(tools_env, seed=5)
    # the same actions through a plain env give the same observations and rewards
    env = gym.make(ROUTING, level=1)
    env.reset(seed=5)
    total = 0.0
    for a, o in answers:
        obs, r, term, trunc, info = env.step(a)
        total += r
        assert o.startswith(obs)
    assert term and info["correct"]
    assert answers[-1][1].endswith(SOLVED)
    assert tools_env.get_reward() == pytest.approx(total)
    m = tools_env._metrics()
    assert m["correct"] == 1.0 and m["safe"] == 1.0 and m["steps"] == len(answers)
    with pytest.raises(EpisodeOver, match="Episode over: solved"):
        tools_env.run("r0", "ip addr show")


def test_reward_components_are_selectable():
    full = make_environment_factory(ROUTING)()
    only = make_environment_factory(ROUTING, components=["success"])()
    nosteps = make_environment_factory(ROUTING, components=["success", "safety"])()
    for e in (full, only, nosteps):
        _play_expert(e, seed=9)
    steps = full._steps
    assert only.get_reward() == pytest.approx(1.0)
    assert nosteps.get_reward() == pytest.approx(1.0)  # the expert never breaks a pair
    assert full.get_reward() == pytest.approx(1.0 - 0.01 * steps)
    with pytest.raises(ValueError, match="unknown reward components"):
        make_environment_factory(ROUTING, components=["succes"])
    assert set(ALL_COMPONENTS) >= {"success", "safety", "step", "invalid"}


def test_env_kwargs_reach_the_env_and_bad_calls_are_penalised():
    cls = make_environment_factory(ROUTING, env_kwargs={"reward": {"invalid": -0.5},
                                                        "max_steps": 2})
    e = cls()
    e.reset(seed=3, level="2")
    assert e._env.unwrapped.level == 2 and e._env.unwrapped.max_steps == 2
    out = e.run("nosuchhost", "ip addr show")
    assert "Steps left: 1" in out
    out = e.run("r0", "ip addr show")
    assert "Episode over: not solved" in out
    assert e.get_reward() == pytest.approx(-0.5 - 0.02)
    with pytest.raises(ValueError, match="level"):
        make_environment_factory(ROUTING, env_kwargs={"level": 2})


@pytest.mark.parametrize("name,args", [
    ("run", {"host": "r0", "cmd": "ip addr show"}),  # wrong argument names
    ("run", {"machine": "r0"}),  # a missing argument
    ("run", {"self": "r0"}),  # an argument named like the method's receiver
    ("shell", {"machine": "r0", "command": "ip addr"}),  # an unknown tool
    ("run", "machine=r0"),  # arguments that are not an object
])
def test_a_malformed_call_is_the_same_penalised_step_in_training_and_eval(name, args):
    """TRL calls ``tool(**arguments)``; a bad call must still be one env step, with the
    invalid-action penalty evaluation gives the same call, never a free Python error."""
    train = make_environment_factory(ROUTING)()
    train.reset(seed=1_000_000, level="1")
    if name == "run" and isinstance(args, dict):
        train.run(**args)  # what TRL does with a known name
    else:
        play_call(train, name, args)  # what train.grpo's trainer does with any other
    env = gym.make(ROUTING, level=1, interface="text")
    env.reset(seed=1_000_000)
    _, reward, _, _, info = env.step(env_action(RoutingTools, name, args))  # eval's action
    env.close()
    assert train._steps == 1 and info["invalid"] == 1
    assert train._totals["invalid"] < 0
    assert train._reward_so_far() == pytest.approx(reward) and reward < 0


def test_unregistered_task_is_a_clear_error():
    with pytest.raises(ValueError, match="no tool environment"):
        make_environment_factory("NetArena-Nope-v0")
    if "NetArena-K8sPolicy-v0" not in netarena_gym.ENV_IDS:
        with pytest.raises(ValueError, match="not registered"):
            make_environment_factory("NetArena-K8sPolicy-v0")


def test_level_mix_and_rows():
    assert D.parse_level_mix("1") == {1: 1.0}
    assert D.parse_level_mix("1,3") == {1: 0.5, 3: 0.5}
    assert D.parse_level_mix("1:3,compat:1") == {1: 0.75, "compat": 0.25}
    for bad in ("1:-1", "one", "1:x", ""):
        with pytest.raises(ValueError, match="bad level mix"):
            D.parse_level_mix(bad)
    plan = D.level_plan({1: 0.5, 2: 0.3, 3: 0.2}, 10, seed=0)
    assert sorted(plan) == [1] * 5 + [2] * 3 + [3] * 2
    assert plan == D.level_plan({1: 0.5, 2: 0.3, 3: 0.2}, 10, seed=0)
    rows = D.scenario_rows(ROUTING, n=4, level_mix="1,2")
    assert [r["seed"] for r in rows] == [D.TRAIN_SEED_BASE + i for i in range(4)]
    assert sorted(r["level"] for r in rows) == ["1", "1", "2", "2"]
    assert rows[0]["prompt"][0]["role"] == "system" and "run" in rows[0]["prompt"][0]["content"]


@requires_transformers
def test_demonstrations_are_replayable_tool_conversations(tmp_path):
    demos = D.generate_demonstrations(ROUTING, n=4, level_mix="1,3")
    assert len(demos) == 4 and {d["level"] for d in demos} == {1, 3}
    for d in demos:
        msgs = d["messages"]
        assert [m["role"] for m in msgs[:2]] == ["system", "user"]
        assert msgs[-1] == {"role": "assistant", "content": "Done."}
        calls = [m for m in msgs if m.get("tool_calls")]
        tools = [m for m in msgs if m["role"] == "tool"]
        assert len(calls) == len(tools) == d["steps"] > 0
        assert tools[-1]["content"].endswith(SOLVED)
        # replaying the tool calls in the env reproduces every tool answer
        env = gym.make(ROUTING, level=d["level"])
        obs, _ = env.reset(seed=d["seed"])
        assert msgs[1]["content"].endswith(obs)
        for c, t in zip(calls, tools):
            fn = c["tool_calls"][0]["function"]
            assert fn["name"] == "run" and isinstance(fn["arguments"], str)
            obs, *_ = env.step(json.loads(fn["arguments"]))
            assert t["content"].startswith(obs)
    path = tmp_path / "demos.jsonl"
    assert D.write_jsonl(path, demos) == 4
    assert D.read_demonstrations(path) == demos
    pc = D.to_prompt_completion(demos[0])
    assert pc["prompt"][-1]["role"] == "user" and pc["completion"][0]["role"] == "assistant"


@requires_transformers
def test_episode_records_convert_by_replay(tmp_path):
    env = gym.make(ROUTING, level=2)
    rec = play_episode(env, RoutingExpert(), seed=12, record=True).to_dict()
    path = tmp_path / "episodes.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    (demo,) = D.read_demonstrations(path, env_id=ROUTING)
    direct = D.generate_demonstrations(ROUTING, n=1, level_mix="2", seed_base=12)[0]
    assert demo["messages"] == direct["messages"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hello": 1}\n')
    with pytest.raises(ValueError, match="neither a demonstration"):
        D.read_demonstrations(bad)
    rec["correct"] = not rec["correct"]
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(ValueError, match="did not reproduce"):
        D.read_demonstrations(path, env_id=ROUTING)


@requires_transformers
@pytest.mark.parametrize("env_id", sorted(TOOL_CLASSES))
def test_every_task_tool_class_replays_its_expert(env_id):
    """Each task's tools, driven by that task's expert demonstrations, solve the episode
    (runs for every task registered in this netarena_gym)."""
    if env_id not in netarena_gym.ENV_IDS:
        pytest.skip(f"{env_id} is not registered in this netarena_gym yet")
    cls = make_environment_factory(env_id)
    names = tool_names(cls)
    for schema in cls._tool_schemas():
        assert schema["function"]["name"] in names and schema["function"]["description"]
    for demo in D.generate_demonstrations(env_id, n=2, level_mix="1"):
        e = cls()
        first = e.reset(seed=demo["seed"], level=str(demo["level"]), prompt=[])
        assert demo["messages"][1]["content"].endswith(first)
        for m in demo["messages"]:
            for call in m.get("tool_calls") or []:
                fn = call["function"]
                assert fn["name"] in names
                out = getattr(e, fn["name"])(**json.loads(fn["arguments"]))
        assert out.endswith(SOLVED)
        m = e._metrics()
        assert m["correct"] == 1.0 and m["steps"] == demo["steps"] and e.get_reward() > 0


@requires_transformers
def test_eval_cli_records_convert(tmp_path, capsys):
    """``netarena-gym eval --out`` episode records are demonstrations after a replay."""
    from netarena_gym.cli import main as cli_main
    rc = cli_main(["eval", "--env", ROUTING, "--agent", "expert", "--level", "2",
                   "--episodes", "1", "--seed", "21", "--out", str(tmp_path / "run"),
                   "--format", "json"])
    assert rc == 0
    capsys.readouterr()
    (demo,) = D.read_demonstrations(tmp_path / "run" / "episodes.jsonl")
    (direct,) = D.generate_demonstrations(ROUTING, n=1, level_mix="2", seed_base=21)
    assert demo["messages"] == direct["messages"] and demo["env_id"] == ROUTING


def test_catalogue_tool_runs_the_envs_own_catalogue_action():
    """``act(label)`` is the discrete catalogue's action on the text interface: the same
    observation and reward as stepping the discrete env; a label the episode lacks is
    the env's invalid action, with its penalty."""
    from netarena_gym.train.tools import catalogue_labels, make_catalogue_factory
    labels = catalogue_labels(ROUTING, seeds=range(1_000_000, 1_000_010))
    assert labels[0] == "r0: inspect" and "r0: flush filters" in labels
    e = make_catalogue_factory(ROUTING)()
    e.reset(seed=7, level="1")
    disc = gym.make(ROUTING, level=1, interface="discrete")
    _, info = disc.reset(seed=7)
    index = disc.unwrapped.catalogue.labels().index("r0: flush filters")
    _, r, *_ = disc.step(index)
    out = e.act("r0: flush filters")
    assert e._reward_so_far() == pytest.approx(r) and "Steps left" in out
    e.reset(seed=7, level="1")
    out = e.act("r9: no such action")
    assert "invalid action" in out and e._metrics()["invalid"] == 1
    assert e._reward_so_far() < -0.01
    with pytest.raises(EpisodeOver):
        make_catalogue_factory(ROUTING)().act("r0: inspect")


def test_a_row_with_a_scenario_and_no_level_plays_at_the_scenarios_level():
    """A compat record on the factory's default level-1 env was refused (and before that,
    played by the wrong rules)."""
    record = gym.make(ROUTING, level="compat").reset(seed=3)[1]["scenario"]
    tools_env = make_environment_factory(ROUTING)()
    for scenario in (record, json.dumps(record)):
        first = tools_env.reset(scenario=scenario, prompt=[], env_id=ROUTING)
        assert tools_env._env.unwrapped.level == "compat"
        assert tools_env._info["scenario"]["faults"] == record["faults"]
        assert "Current state:" in first


def test_a_rollout_that_stops_calling_tools_pays_the_invalid_step_eval_charges():
    """TRL ends a rollout on a turn without a tool call; evaluation plays that turn as its
    text, an invalid action. Stopping scored 0 in training: better than any command that
    did not solve (-0.01 a step), the opposite of evaluation."""
    train = make_environment_factory(ROUTING)()
    train.reset(seed=1_000_000, level="1")
    train.run("r0", "ip addr show")
    assert train._reward_so_far() == pytest.approx(-0.01)
    env = gym.make(ROUTING, level=1, interface="text")
    env.reset(seed=1_000_000)
    env.step({"machine": "r0", "command": "ip addr show"})
    _, stop, *_ = env.step("I am done.")  # what eval plays for a reply without a tool call
    env.close()
    assert stop < -0.01
    assert train.get_reward() == pytest.approx(-0.01 + stop)
    assert train.get_reward() == pytest.approx(-0.01 + stop)  # once, however often read
    assert train._totals["invalid"] == pytest.approx(stop + 0.01)  # the stop's own part
    assert train._metrics()["steps"] == 1  # tool calls (the stop is none)
    solved = make_environment_factory(ROUTING)()
    _play_expert(solved, seed=1_000_000)  # an episode that ends by itself: nothing is added
    assert solved._done and solved._reward_so_far() > 0
    assert solved.get_reward() == pytest.approx(solved._reward_so_far())
