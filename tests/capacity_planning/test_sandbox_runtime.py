"""The agent's runtime in the sandbox: the namespaces (default: nothing bound; compat:
upstream's nx, json, copy and G), upstream's code extraction, and tracebacks that show the
agent's own code only."""
import re

import pytest

from netarena_gym.capacity_planning.commands.sandbox import (Limits, Sandbox,
                                                            upstream_source)
from netarena_gym.capacity_planning.commands.sandbox_runtime import agent_traceback, scrub_paths
from netarena_gym.capacity_planning.state import base_graph
from netarena_gym.capacity_planning.topology import TopologySpec

SPEC = TopologySpec(superblocks=1, aggs_per_superblock=1, spineblocks=1, agg_switches=(2, 1),
                    spine_switches=(1, 0), ports_per_switch=2)
# recorded upstream code never imports nx, json or copy: upstream binds them
RECORDED = '''def process_graph(graph_data):
    graph_copy = copy.deepcopy(graph_data)
    G.remove_node("ju1")  # upstream's master graph: not the graph being graded
    kids = [v for _, v, d in graph_copy.out_edges("ju1.a1", data=True)
            if d["type"] == "RK_CONTAINS"]
    return {"type": "list", "data": kids + [len(G), json.loads("[1]")[0]],
            "updated_graph": nx.readwrite.json_graph.node_link_data(graph_copy)}
'''
HOST_PATH = re.compile(r"/(usr|root|work|tmp|home|sandbox|proc)\b|\.py\b|site-packages")


@pytest.fixture(scope="module")
def base():
    return base_graph(SPEC, "merged")


@pytest.fixture(scope="module", params=[True, False], ids=["guarded", "raw"])
def box(request):
    sb = Sandbox(Limits(cpu_seconds=1.0, wall_seconds=3.0, memory_mb=512),
                 python_guard=request.param)
    yield sb
    sb.close()


def test_upstream_namespace_binds_nx_json_copy_and_a_separate_G(box, base):
    r = box.run(base, RECORDED, "upstream")
    assert r.ok, r.message
    *kids, n_master, one = r.data
    assert sorted(kids) == ["ju1.a1.m1"] and one == 1
    assert n_master == len(base.nodes) - 1  # G lost a node ...
    assert r.diff is not None and r.diff.nodes == {} and r.diff.edges == {}  # ... the graph did not


def test_default_namespace_binds_nothing(box, base):
    r = box.run(base, RECORDED)
    assert r.status == "error" and "NameError: name 'copy' is not defined" in r.message
    explicit = "import copy, json\nimport networkx as nx\n" + RECORDED.replace(
        'G.remove_node("ju1")', "G = graph_data")
    r = box.run(base, explicit)
    assert r.ok, r.message


def test_unknown_namespace_is_a_programming_error(base):
    with pytest.raises(ValueError, match="namespace"):
        Sandbox(namespace="builtins", unsafe=True)


def test_upstream_source_renames_cuts_and_drops_import_lines():
    reply = ("Here you go:\nimport numpy as np\n```python\nimport networkx as nx\n"
             "from collections import Counter\ndef process_graph_v2(graph_data):\n"
             "    import math\n    return 1\n```\nHope this helps")
    src = upstream_source(reply)
    assert src == "def process_graph(graph_data):\n    import math\n    return 1\n"
    # an import inside the function body is kept as written (only lines *starting* with import
    # go); lines dropped after the def stay as blank lines, so line numbers still match
    src = upstream_source("def process_graph(g):\nimport os\n    return 2")
    assert src.split("\n") == ["def process_graph(g):", "", "    return 2"]
    assert upstream_source("print('no function')") is None
    assert upstream_source(None) is None


def _raise(code: str, **ns) -> BaseException:
    try:
        exec(compile(code, "<agent>", "exec"), dict(ns))
    except BaseException as e:  # noqa: BLE001
        return e
    raise AssertionError("no exception")


def test_agent_traceback_shows_agent_frames_and_source_only():
    import json
    code = "def helper(x):\n    return json.loads(x)\n\ndef process_graph(g):\n    return helper('{')\nprocess_graph(1)\n"
    text = agent_traceback(_raise(code, json=json), code)
    assert 'File "<agent>", line 5, in process_graph\n    return helper(\'{\')' in text
    assert 'File "<agent>", line 2, in helper\n    return json.loads(x)' in text
    assert re.search(r"\(\d+ frames in library code\)", text)
    assert text.rstrip().endswith("JSONDecodeError: Expecting property name enclosed in double "
                                  "quotes: line 1 column 2 (char 1)")
    assert not HOST_PATH.search(text), text


def test_paths_in_exception_messages_are_scrubbed():
    e = _raise("raise FileNotFoundError('/work/main/netarena_gym/x/data.json missing')")
    text = agent_traceback(e, "")
    assert "data.json missing" in text and "/work" not in text
    assert scrub_paths("10.0.0.0/8 and 192.168.1.0/24 stay") == "10.0.0.0/8 and 192.168.1.0/24 stay"


@pytest.mark.parametrize("code,last", [
    ("def process_graph(graph)\n    return 1\n", "SyntaxError: expected ':'"),
    ("def process_graph(graph):\n    return nx.shortest_path(graph, 'a', 'b')\n",
     "NameError: name 'nx' is not defined"),
    ("import networkx as nx\ndef process_graph(graph):\n    return nx.shortest_path(graph, 'a', 'b')\n",
     "NodeNotFound: Source a is not in G"),
    ("import json\ndef process_graph(graph):\n    return {'type': 'list', 'data': json.loads('{')}\n",
     "JSONDecodeError"),
])
def test_sandbox_tracebacks_name_no_host_worker_or_project_path(box, base, code, last):
    r = box.run(base, code)
    assert r.status == "error" and last in r.message
    assert not HOST_PATH.search(r.message), r.message
    assert "sandbox_worker" not in r.message and "sandbox_runtime" not in r.message
    assert 'File "<agent>", line ' in r.message
