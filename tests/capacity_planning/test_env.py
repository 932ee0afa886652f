"""The env: Gymnasium conformance, replay, determinism, bad actions, interfaces."""
import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from netarena_gym.agents.random import RandomAgent
from netarena_gym.agents.episode import play_episode
from netarena_gym.capacity_planning.kinds import CAPACITY

ENV_ID = "NetArena-CapacityPlanning-v0"  # registered in conftest.py


@pytest.mark.parametrize("interface,level", [
    ("code", 1), ("code", 4), ("code", "compat"), ("text", 1), ("text", 4), ("discrete", 2),
    ("discrete", 3)])
def test_check_env(interface, level):
    # compat is one-shot like upstream; check_env wants more than one step
    env = gym.make(ENV_ID, level=level, interface=interface, max_steps=3)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.parametrize("interface", ["code", "text", "discrete"])
def test_reset_is_deterministic_and_seeds_differ(interface):
    env = gym.make(ENV_ID, level=2, interface=interface)
    o1, i1 = env.reset(seed=7)
    o2, i2 = env.reset(seed=7)
    assert i1["scenario"] == i2["scenario"]
    if interface == "discrete":
        assert all(np.array_equal(o1[k], o2[k]) for k in o1)
    else:
        assert o1 == o2
    _, i3 = env.reset(seed=8)
    assert i3["scenario"] != i1["scenario"]


def test_replay_of_a_recorded_scenario_without_its_answer():
    env = gym.make(ENV_ID, level=4, interface="text")
    _, info = env.reset(seed=5)
    rec = json.loads(json.dumps(info["scenario"]))
    assert "ground_truth" not in rec["faults"][0]  # never handed to the agent
    truth = env.unwrapped.query.ground_truth
    env.reset(seed=99)
    obs, info2 = env.reset(options={"scenario": rec})
    other = gym.make(ENV_ID, level=4, interface="text")
    obs3, _ = other.reset(seed=5)
    assert obs == obs3 and info2["scenario"] == rec
    assert env.unwrapped.query.ground_truth == truth  # recomputed, identical



def test_tool_observation_and_outputs():
    env = gym.make(ENV_ID, level=1, interface="text", templates=("capacity",))
    obs, info = env.reset(seed=1)
    assert obs.startswith("NetArena capacity planning (MALT). Interface: tools.")
    assert f"Question: {info['extra']['query']['text']}\n" in obs and "Steps left: 40" in obs
    node = env.unwrapped.query.ops[0]["node"]
    obs, r, term, trunc, info = env.step({"tool": "get_node", "node": node[1], "kind": node[0]})
    assert f"node {node[0]} {node[1]}" in obs and "total_capacity_bps: " in obs
    assert info["command_kind"] == "ok" and r == pytest.approx(-0.01) and not term
    truth = env.unwrapped.query.ground_truth["answer"]
    obs, r, term, trunc, info = env.step(json.dumps({"tool": "answer", "answer": str(truth)}))
    assert term and info["correct"] and info["safe"] and r == pytest.approx(0.99)
    assert info["extra"]["verdict"]["correct"] and info["extra"]["verdict"]["n_violations"] == 0


@pytest.mark.parametrize("action,kind", [
    ("this is not json", "invalid"),
    ('{"tool": "format_disk"}', "invalid"),
    ({"tool": "get_node"}, "invalid"),
    ({"tool": "get_node", "node": "nope"}, "error"),
    ({"tool": "get_node", "node": "ju1.a1.m1.s2c1"}, "error"),  # ambiguous name
    ({"tool": "set_attr", "node": "ju1", "kind": "EK_JUPITER", "key": "name", "value": "x"}, "invalid"),
    ({"tool": "add_node", "name": "x", "kind": "EK_NOPE", "parent": "ju1"}, "invalid"),
    ({"tool": "add_node", "name": "ju1.a1", "kind": "EK_SUPERBLOCK", "parent": "ju1"}, "error"),
    (12, "invalid"),
])
def test_bad_tool_actions_are_penalised_not_raised(action, kind):
    env = gym.make(ENV_ID, level=1, interface="text", topologies=1)
    env.reset(seed=3)
    obs, r, term, trunc, info = env.step(action)
    assert info["command_kind"] == kind and not term
    assert "Output:" in obs
    if kind == "invalid":
        assert info["reward_components"]["invalid"] < 0 and "netarena: invalid action" in obs
    else:
        assert "error: " in obs and info["extra"]["failed"] == 1


def test_ambiguity_message_names_the_kinds():
    env = gym.make(ENV_ID, level=1, interface="text", topologies=1)
    env.reset(seed=3)
    obs, *_ = env.step({"tool": "get_node", "node": "ju1.a1.m1.s2c1"})
    assert "EK_CHASSIS, EK_CONTROL_POINT, EK_PACKET_SWITCH" in obs and 'add "kind"' in obs


@pytest.mark.parametrize("action", ["print('hi')", "", {"code": 5}, b"\xff", 3.5, "x" * 30000])
def test_bad_code_actions_are_penalised_not_raised(action):
    env = gym.make(ENV_ID, level=1, interface="code")
    env.reset(seed=0)
    obs, r, term, trunc, info = env.step(action)
    assert info["command_kind"] == "invalid" and info["reward_components"]["invalid"] < 0
    assert "netarena: invalid action" in obs and not term and "Attempts left: 2" in obs


def test_code_truncation_counts_as_unsafe_for_upstream_only():
    env = gym.make(ENV_ID, level=1, interface="code", max_steps=1)
    env.reset(seed=0)
    *_, term, trunc, info = env.step("no code")
    assert trunc and not term and not info["correct"] and info["safe"] and not info["safe_compat"]
    with pytest.raises(RuntimeError):
        env.step("again")


def test_unsafe_change_costs_safety_reward():
    env = gym.make(ENV_ID, level=1, interface="text", templates=("remove",), topologies=1)
    for seed in range(50):
        env.reset(seed=seed)
        node = env.unwrapped.query.ops[0]["node"]
        if node[0] == "EK_PACKET_SWITCH":
            break
    assert env.unwrapped.query.flags["literal_unsafe"]
    env.step({"tool": "remove_node", "node": node[1], "kind": node[0]})  # literally
    *_, term, trunc, info = env.step({"tool": "answer", "answer": "done"})
    assert term and not info["correct"] and not info["safe"] and not info["safe_compat"]
    assert info["violations"] >= 8 and info["reward_components"]["safety"] < -0.5


def test_discrete_interface_masks_and_candidates():
    env = gym.make(ENV_ID, level=2, interface="discrete", templates=("update-rank",))
    obs, info = env.reset(seed=2)
    base = env.unwrapped
    mask = base.action_masks()
    assert mask.dtype == bool and mask.sum() == obs["action_mask"].sum() > 0
    labels = base.catalogue.labels()
    port = base.query.ops[0]["node"]
    set_idx = next(i for i, lb in enumerate(labels) if lb == f"set {port[1]} capacity")
    obs, r, term, trunc, info = env.step(set_idx)
    assert info["command_kind"] == "ok" and base.graph.attrs(tuple(port))[CAPACITY] == base.query.ops[0]["capacity"]
    invalid = int(np.flatnonzero(~base.action_masks())[0])
    obs, r, term, trunc, info = env.step(invalid)
    assert info["command_kind"] == "invalid"
    truth = base.query.ground_truth["answer"]
    answers = [i for i, e in enumerate(base.catalogue.entries) if e and e.action["tool"] == "answer"]
    right = [i for i in answers if base.catalogue.entries[i].action["answer"] == truth]
    assert len(right) == 1 and len(answers) > 1
    obs, r, term, trunc, info = env.step(right[0])
    assert term and info["correct"] and info["safe"]


def test_random_agent_runs_on_text_and_discrete():
    for interface in ("text", "discrete"):
        env = gym.make(ENV_ID, level=4, interface=interface)
        for seed in range(5):
            res = play_episode(env, RandomAgent(env, seed=seed), seed=seed)
            assert res.steps >= 1


def test_history_and_render():
    env = gym.make(ENV_ID, level=1, interface="text", history=3, render_mode="ansi", topologies=1)
    env.reset(seed=1)
    for node in ("ju1", "ju1.a1", "ju1.a2"):
        obs, *_ = env.step({"tool": "get_node", "node": node})
    assert "History (oldest first):" in obs and '"node": "ju1"' in obs
    assert env.render() == obs


def test_compat_level_is_code_only_and_uses_upstream_wording():
    with pytest.raises(ValueError, match="code-only"):
        gym.make(ENV_ID, level="compat", interface="text")
    env = gym.make(ENV_ID, level="compat")
    obs, info = env.reset(seed=4)
    assert "keyed by node name" in obs and info["extra"]["level"] == "compat"
    assert info["extra"]["query"]["template"] in ("add", "rank", "remove", "list", "remove-list", "remove-rank",
                                         "remove-count", "add-list", "add-rank", "add-count")


def test_constructor_validation():
    for kw in ({"level": 9}, {"interface": "gui"}, {"backend": "mininet"}, {"max_steps": -1}):
        with pytest.raises(ValueError):
            gym.make(ENV_ID, **kw)


def test_expert_class_is_exposed():
    env = gym.make(ENV_ID, level=1, interface="text")
    expert = env.unwrapped.expert_class()
    obs, info = env.reset(seed=0)
    expert.reset()
    a = expert.act(obs, info)
    assert isinstance(a, dict) and a["tool"] in ("get_node", "list_children", "add_node",
                                                 "remove_node", "set_attr", "answer")


def test_env_is_a_netarena_env_whose_backend_holds_the_state():
    from netarena_gym.capacity_planning.backends.sim import MaltSimBackend
    from netarena_gym.core.env import NetArenaEnv
    env = gym.make(ENV_ID, level=1, interface="text", templates=("count",)).unwrapped
    env.reset(seed=3)
    assert isinstance(env, NetArenaEnv) and isinstance(env.backend, MaltSimBackend)
    assert env.graph is env.backend.graph and env.verdict is None
    assert env.backend.observe().tolist() == [False]  # ungraded: not correct yet
    answer = env.query.ground_truth["answer"]
    *_, term, trunc, info = env.step({"tool": "answer", "answer": answer})
    assert term and info["correct"] and env.backend.observe().tolist() == [True]
    assert info["reward_components"]["success"] == 1.0
    # the verdict in info has no timing, so info depends only on seed and actions
    assert "grade_ms" not in info["extra"]["verdict"]
    assert env.metrics.summary()["grade_seconds"] >= 0.0
    env.backend.reset_to_baseline()
    assert env.backend.observe().tolist() == [False]


# upstream's recorded agent code binds nothing itself: upstream runs it with nx, json and copy
# bound and its import lines dropped (issue 12.5)
UPSTREAM_STYLE = '''import networkx as nx
import numpy as np
def process_graph(graph_data):
    graph_copy = copy.deepcopy(graph_data)
    parent = [n for n, d in graph_copy.nodes(data=True) if d["name"] == {parent!r}][0]
    kids = [graph_copy.nodes[v]["name"] for _, v, d in graph_copy.out_edges(parent, data=True)
            if d["type"] == "RK_CONTAINS"]
    return json.dumps({{"type": "list", "data": kids,
                       "updated_graph": nx.readwrite.json_graph.node_link_data(graph_copy)}})
'''


def test_compat_runs_upstream_style_code_in_upstream_namespace():
    from netarena_gym.capacity_planning import grader_compat as compat
    env = gym.make(ENV_ID, level="compat", templates=("list",))
    try:
        obs, info = env.reset(seed=3)
        _, p = compat.parse(info["extra"]["query"]["text"])
        code = "```python\n" + UPSTREAM_STYLE.format(parent=p["parent"]) + "```"
        obs, r, term, trunc, info = env.step(code)
        v = info["extra"]["verdict"]
        assert term and v["graded"] and info["correct"] and v["safe_compat"], obs
        # the same code at level 1 has no nx/json/copy bound: a NameError, shown without paths
        env1 = gym.make(ENV_ID, level=1, max_steps=2)
        env1.reset(seed=3)
        obs, r, term, trunc, info = env1.step(UPSTREAM_STYLE.format(parent="x").split("\n", 2)[2])
        assert not term and "NameError: name 'copy' is not defined" in obs and "/" not in obs.split("Output:")[1]
        env1.close()
    finally:
        env.close()


# upstream grades a graph answer on ``data`` when that is a graph, and judges safety on
# ``updated_graph`` alone (spec malt 4.1 step 2): (return line, correct, safe_compat)
GRAPH_RETURNS = [
    ("{'type': 'graph', 'data': g}", True, False),  # no updated_graph: safety fails
    ("{'type': 'graph', 'data': g, 'updated_graph': nx.node_link_data(orig)}", True, True),
    ("{'type': 'graph', 'data': orig, 'updated_graph': nx.node_link_data(g)}", False, True),
    ("{'type': 'graph', 'data': None}", False, False),  # no graph anywhere
]


@pytest.mark.parametrize("ret,correct,safe_compat", GRAPH_RETURNS)
def test_compat_grades_a_graph_answer_as_upstream(ret, correct, safe_compat):
    from netarena_gym.capacity_planning.expert import compat_code_for
    env = gym.make(ENV_ID, level="compat", templates=("add",))
    try:
        obs, info = env.reset(seed=1)
        text = info["extra"]["query"]["text"]
        code = compat_code_for(text).replace(
            "    g = graph_data\n", "    orig = copy.deepcopy(graph_data)\n    g = graph_data\n")
        code = code.replace("{'type': 'graph', 'data': answer, 'updated_graph': g}", ret)
        assert ret in code and "orig = copy" in code
        obs, r, term, trunc, info = env.step("```python\n" + code + "```")
        v = info["extra"]["verdict"]
        assert term and v["graded"], obs
        assert (info["correct"], info["safe_compat"]) == (correct, safe_compat), v
    finally:
        env.close()
