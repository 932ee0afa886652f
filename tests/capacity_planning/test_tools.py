"""The tools: reads of nodes an episode has not touched come from a per-base cache, and
equal the text computed on the episode's graph, over random action sequences."""
import gymnasium as gym
import numpy as np
import pytest

from netarena_gym.capacity_planning.commands.tools import ToolBox
from netarena_gym.capacity_planning.state import Graph, GraphError

ENV_ID = "NetArena-CapacityPlanning-v0"  # registered in conftest.py


def uncached(graph: Graph, tool: str, k) -> str:
    box = ToolBox(graph)
    return box._make_get_node(k) if tool == "get_node" else box._make_list_children(k)


@pytest.mark.parametrize("level", [1, 3, 4])
def test_cached_reads_equal_reads_computed_on_the_graph(level):
    env = gym.make(ENV_ID, level=level, interface="discrete")
    base = env.unwrapped
    rng = np.random.default_rng(level)
    compared = touched = 0
    for ep in range(20):
        obs, info = env.reset(seed=ep)
        done = False
        while not done:
            valid = np.flatnonzero(info["action_mask"])
            pool = [i for i in valid if base.catalogue.entries[i].action["tool"] != "answer"]
            obs, r, term, trunc, info = env.step(int(rng.choice(pool or valid)))
            done = term or trunc
            g = base.graph
            for k in base.view.focus:
                if not g.has(k):
                    continue
                for tool in ("get_node", "list_children"):
                    got = base.toolbox.run({"tool": tool, "node": k[1], "kind": k[0]})
                    assert got.output == uncached(g, tool, k), (tool, k)
                    compared += 1
                touched += not g.pristine(k)
    assert compared > 1000 and touched > 50


def _switch_in_block(interface: str):
    """(env, graph, toolbox, a switch, its block) after a reset on Google's topology."""
    env = gym.make(ENV_ID, level=1, interface=interface, topologies=1)
    env.reset(seed=0)
    g = env.unwrapped.graph
    sw = ("EK_PACKET_SWITCH", "ju1.a1.m1.s2c1")
    return env, g, env.unwrapped.toolbox, sw, next(p for p in g.parents(sw) if p[0] == "EK_AGG_BLOCK")


def test_a_change_below_a_node_shows_in_its_reads():
    env, g, box, sw, block = _switch_in_block("text")
    port = next(c for c in g.children(sw) if c[0] == "EK_PORT")

    def read(tool, k):
        return box.run({"tool": tool, "node": k[1], "kind": k[0]}).output
    before = {k: (read("get_node", k), read("list_children", k)) for k in (block, sw)}
    assert g.pristine(block) and g.pristine(sw)
    box.run({"tool": "remove_node", "node": port[1], "kind": port[0]})
    assert not g.pristine(sw) and not g.pristine(block)  # its subtree changed
    for k in (block, sw):
        assert read("get_node", k) != before[k][0]  # fewer descendants, less capacity
        assert read("list_children", k) != before[k][1]  # the switch's line, the port's
        assert read("get_node", k) == uncached(g, "get_node", k)
    env.reset(seed=0)  # a new episode on the same base reads the base again
    box = env.unwrapped.toolbox
    assert {k: (read("get_node", k), read("list_children", k)) for k in (block, sw)} == before


def test_a_read_held_across_changes_shows_the_graph_it_read():
    """Texts are made when read: a result still held when the graph changes (or is reset)
    is made before the change, so it shows the graph as it was read."""
    env, g, box, sw, block = _switch_in_block("discrete")
    ports = sorted(c for c in g.children(sw) if c[0] == "EK_PORT")

    def run(tool, k, **kw):
        return box.run({"tool": tool, "node": k[1], "kind": k[0], **kw})
    pristine = {tool: run(tool, ports[3]) for tool in ("get_node", "list_children")}
    run("remove_node", ports[0])  # the switch and the block are touched from here on
    reads = [(tool, k) for tool in ("get_node", "list_children") for k in (block, sw)]
    held = {r: run(*r) for r in reads}
    want = {r: uncached(g, *r) for r in reads}
    run("remove_node", ports[1])
    run("set_attr", ports[2], key="physical_capacity_bps", value=1)
    assert {r: uncached(g, *r) for r in reads} != want  # the changes show in new reads
    assert {r: res.output for r, res in held.items()} == want
    last = run("get_node", sw)
    want_last = uncached(g, "get_node", sw)
    env.reset(seed=1)  # a reset changes the graph too
    assert last.output == want_last
    assert {t: r.output for t, r in pristine.items()} == {
        t: uncached(g, t, ports[3]) for t in pristine}  # untouched: the base's


def test_resolve_with_a_kind_finds_what_the_name_lookup_finds():
    env = gym.make(ENV_ID, level=2, interface="text", topologies=1)
    env.reset(seed=0)
    g, box = env.unwrapped.graph, env.unwrapped.toolbox
    box.run({"tool": "add_node", "name": "new.p1", "kind": "EK_PORT",
             "parent": "ju1.a1.m1.s2c1", "parent_kind": "EK_PACKET_SWITCH"})
    keys = list(g.keys())[::13] + [("EK_PORT", "new.p1")]
    for k in keys:
        assert box.resolve(k[1], k[0]) == k == next(
            x for x in g.lookup(k[1]) if g.kind(x) == k[0])
    shared = next(k for k in keys if len(g.lookup(k[1])) > 1)
    with pytest.raises(GraphError, match="ambiguous"):
        box.resolve(shared[1], None)
    with pytest.raises(GraphError, match="no EK_PORT named"):
        box.resolve(shared[1] + "-missing", "EK_PORT")


@pytest.mark.parametrize("value", ["1e999", "-Infinity", "NaN", "[1, 1e999]", '{"a": NaN}'])
def test_a_value_that_is_not_finite_is_refused_and_the_env_lives_on(value):
    """Infinity as a port's capacity raised OverflowError on the next read and on every
    later reset of the env."""
    env = gym.make(ENV_ID, interface="text")
    env.reset(seed=0)
    obs, reward, *_ = env.step('{"tool": "set_attr", "node": "ju1.a1.m1.s2c1.p1", "kind": '
                               f'"EK_PORT", "key": "physical_capacity_bps", "value": {value}}}')
    assert "not finite" in obs and reward < 0
    obs, reward, *_ = env.step('{"tool": "add_node", "name": "x", "kind": "EK_PORT", '
                               f'"parent": "ju1.a1.m1.s2c1", "attrs": {{"c": {value}}}}}')
    assert "not finite" in obs
    env.step({"tool": "get_node", "node": "ju1.a1.m1"})
    assert env.reset(seed=1)[0]


def test_a_huge_integer_capacity_is_read_exactly():
    env = gym.make(ENV_ID, interface="text")
    env.reset(seed=0)
    big = 10 ** 400
    obs = env.step('{"tool": "set_attr", "node": "ju1.a1.m1.s2c1.p1", "kind": "EK_PORT", '
                   f'"key": "physical_capacity_bps", "value": {big}}}')[0]
    assert "not finite" not in obs
    env.step({"tool": "get_node", "node": "ju1.a1.m1"})
    assert env.reset(seed=1)[0]
