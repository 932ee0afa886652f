"""The code sandbox: results, and hostile code (each run has a time limit)."""
import json
import os
import signal
import time

import pytest

from netarena_gym.capacity_planning.kinds import CAPACITY, PORT
from netarena_gym.capacity_planning.state import base_graph
from netarena_gym.capacity_planning.commands.sandbox import Sandbox, extract_code
from netarena_gym.capacity_planning.topology import TopologySpec

SPEC = TopologySpec(superblocks=1, aggs_per_superblock=1, spineblocks=1, agg_switches=(2, 1),
                    spine_switches=(1, 0), ports_per_switch=2)
SW = ("EK_PACKET_SWITCH", "ju1.a1.m1.s2c1")


@pytest.fixture(scope="module")
def base():
    return base_graph(SPEC)


@pytest.fixture(scope="module")
def box():
    from netarena_gym.capacity_planning.commands.sandbox import Limits
    sb = Sandbox(Limits(cpu_seconds=1.0, wall_seconds=2.0, memory_mb=512))
    yield sb
    sb.close()


@pytest.fixture(scope="module")
def raw_box():
    """Python-level restrictions off: only the OS-level limits stand."""
    from netarena_gym.capacity_planning.commands.sandbox import Limits
    sb = Sandbox(Limits(cpu_seconds=1.0, wall_seconds=2.0, memory_mb=512), python_guard=False)
    yield sb
    sb.close()


def fn(body: str, header: str = "") -> str:
    return header + "\ndef process_graph(graph):\n" + "\n".join("    " + ln for ln in body.splitlines()) + "\n"


def assert_alive(box, base):
    r = box.run(base, fn("return {'type': 'text', 'data': 1}"))
    assert r.ok and r.data == 1


# ------------------------------------------------------------------- results
def test_in_place_change_comes_back_as_a_diff(box, base):
    r = box.run(base, fn(f"graph.nodes[('EK_PORT', '{SW[1]}.p1')]['physical_capacity_bps'] = 5\n"
                         "return {'type': 'graph', 'data': None, 'updated_graph': graph}"))
    assert r.ok and r.declared_type == "graph"
    assert r.diff.nodes == {(PORT, f"{SW[1]}.p1"): {"name": f"{SW[1]}.p1", "type": [PORT], CAPACITY: 5}}
    assert r.diff.edges == {}


def test_node_link_data_and_tuples_survive(box, base):
    r = box.run(base, fn("g = graph.copy()\n"
                         "g.remove_node(('EK_PORT', 'ju1.a1.m1.s2c1.p2'))\n"
                         "return {'type': 'list', 'data': [('a', 1.5), [1, 2]], "
                         "'updated_graph': json_graph.node_link_data(g)}",
                         "from networkx.readwrite import json_graph"))
    assert r.ok and r.data == [("a", 1.5), [1, 2]] and isinstance(r.data[0], tuple)
    assert r.diff.nodes == {(PORT, "ju1.a1.m1.s2c1.p2"): None}
    assert r.diff.edges == {(SW, (PORT, "ju1.a1.m1.s2c1.p2")): None}


def test_identity_comes_from_attributes_not_keys(box, base):
    # relabelling every node to its name changes nothing
    r = box.run(base, fn("import networkx as nx\n"
                         "g = nx.relabel_nodes(graph, {n: d['name'] + '|' + d['type'][0] "
                         "for n, d in graph.nodes(data=True)})\n"
                         "return {'type': 'graph', 'data': None, 'updated_graph': g}", "import networkx as nx"))
    assert r.ok and not r.diff and r.duplicates == []


def test_missing_graph_string_results_prints_and_errors(box, base):
    r = box.run(base, fn("print('hello')\nreturn '{\"type\": \"text\", \"data\": \"3\"}'"))
    assert r.ok and r.data == "3" and r.diff is None and r.stdout == "hello\n"
    r = box.run(base, fn("return 42"))
    assert r.status == "error" and "must return a dict" in r.message
    r = box.run(base, fn("return {}['x']"))
    assert r.status == "error" and "KeyError" in r.message
    r = box.run(base, "x = 1\n")
    assert r.status == "error" and "process_graph" in r.message
    r = box.run(base, fn("return {'type': 'graph', 'data': 0, 'updated_graph': 7}"))
    assert r.status == "error" and "updated_graph" in r.message


def test_extract_code():
    src = "def process_graph(g):\n    return 1\n"
    assert extract_code(src) == src
    assert extract_code("Here:\n```python\n" + src + "```\nDone.") == src
    assert extract_code("```\nprint(1)\n```\n```python\n" + src + "```") == src
    assert extract_code("no code here") is None and extract_code(3) is None
    assert extract_code("\t def  process_graph (g):\n    return 1\n") is not None


def test_extract_code_is_linear_in_the_reply():
    """``^\\s*def`` ran over every following newline at each line start: 20,000 newlines
    took 2-4 s in the env process (quadratic); 400,000 would have taken about 20 minutes."""
    t = time.perf_counter()
    assert extract_code("process_graph" + "\n" * 400_000) is None
    assert extract_code("```\nprocess_graph" + "\n" * 400_000) is None
    assert time.perf_counter() - t < 10  # a hang guard: linear is a few milliseconds


def test_random_and_string_hashing_are_the_same_in_every_worker(base):
    """Each submission's ``random`` was seeded from urandom and each worker drew its own
    hash seed: the same seed and code printed other numbers, and set orders, every run."""
    code = fn("import random\nreturn {'type': 'list', 'data': [random.random(), "
              "hash('ju1'), sorted({'a', 'b', 'c', 'd'}, key=lambda x: 0) == "
              "list({'a', 'b', 'c', 'd'})]}")
    boxes = [Sandbox(), Sandbox()]
    try:
        runs = [[b.run(base, code, seed=s).data for s in (7, 7, 8)] for b in boxes]
    finally:
        for b in boxes:
            b.close()
    assert runs[0] == runs[1]  # two workers (processes), the same numbers
    assert runs[0][0] == runs[0][1] and runs[0][0][0] != runs[0][2][0]  # the seed decides


def test_an_updated_graph_may_change_at_most_as_much_as_the_topology_holds(box, base):
    """Grading runs in the env with no clock: 40,000 new ports took 17 s to grade there."""
    most = max(1000, len(base.nodes) + base.n_edges)
    grow = ("for i in range({n}):\n"
            "    k = ('EK_PORT', 'p%d' % i)\n"
            "    graph.add_node(k, name=k[1], type=['EK_PORT'])\n"
            "return {{'type': 'list', 'data': [], 'updated_graph': graph}}")
    r = box.run(base, fn(grow.format(n=most + 1)))
    assert not r.ok and f"may change at most {most}" in r.message, r.message
    r = box.run(base, fn(grow.format(n=10)))
    assert r.ok and len(r.diff.nodes) == 10


# ----------------------------------------------------------------- hostility
def test_infinite_loop_is_stopped(box, base):
    t0 = time.monotonic()
    r = box.run(base, fn("while True:\n    pass"))
    assert r.status == "timeout" and "limit" in r.message
    assert time.monotonic() - t0 < 6
    assert_alive(box, base)


@pytest.mark.parametrize("body", [
    "x = [0] * (10 ** 10)\nreturn x",
    "x = b'x' * (2 ** 34)",
    "x = []\nwhile True:\n    x.append('y' * 10 ** 6)",
])
def test_memory_bombs_are_stopped(box, base, body):
    r = box.run(base, fn(body))
    assert r.status in ("memory", "crash", "timeout") and r.status != "ok"
    assert_alive(box, base)


@pytest.mark.parametrize("src,fragment", [
    (fn("os.system('touch /tmp/netarena-pwned')", "import os"), "import of 'os' is not allowed"),
    (fn("import subprocess\nsubprocess.run(['true'])"), "import of 'subprocess'"),
    (fn("return ().__class__.__base__.__subclasses__()"), "is not available in the sandbox"),
    (fn("return __import__('os')"), "'__import__' is not available"),
    (fn("return collections._sys", "import collections"), "'_sys' is not available"),
    (fn("def gen():\n    yield 1\nreturn gen().gi_frame"), "'gi_frame' is not available"),
    (fn("import gc\nreturn gc.get_objects()"), "import of 'gc'"),
    (fn("return 1", "import netarena_gym.capacity_planning.grader"), "import of 'netarena_gym.capacity_planning.grader'"),
    (fn("import sys\nreturn sys.modules"), "import of 'sys'"),
])
def test_python_level_refusals(box, base, src, fragment):
    r = box.run(base, src)
    assert r.status == "refused" and fragment in r.message
    assert not os.path.exists("/tmp/netarena-pwned")


@pytest.mark.parametrize("body,fragment", [
    ("return open('/etc/passwd').read()", "name 'open' is not defined"),
    ("return getattr(graph, '__class__')", "'__class__' is not available"),
    ("return eval('1')", "name 'eval' is not defined"),
    ("return nx.algorithms.chordal.sys", "module 'sys' is not available in the sandbox"),
    ("return nx.lazy_imports.os.system", "module 'os' is not available in the sandbox"),
    ("return json.codecs", "not available in the sandbox"),
])
def test_runtime_refusals(box, base, body, fragment):
    header = "import networkx as nx\nimport json"
    r = box.run(base, fn(body, header))
    assert r.status == "error" and fragment in r.message


@pytest.mark.parametrize("body", [
    "return {'type': 'text', 'data': open('/etc/passwd').read()}",
    "with open('/tmp/netarena-written', 'w') as f:\n    f.write('x')",
    "import socket\nsocket.socket().connect(('127.0.0.1', 22))",
    "import os\nreturn {'type': 'text', 'data': os.fork()}",
    "import os\nreturn {'type': 'text', 'data': os.system('touch /tmp/netarena-pwned') == 0 or 1 / 0}",
])
def test_os_level_limits_hold_without_python_guards(raw_box, base, body):
    assert_alive(raw_box, base)
    pid = raw_box.pid
    r = raw_box.run(base, fn(body))
    assert r.status == "error", r
    assert not os.path.exists("/tmp/netarena-pwned") and not os.path.exists("/tmp/netarena-written")
    assert_alive(raw_box, base)
    assert raw_box.pid == pid  # the worker was not killed


@pytest.mark.skipif(os.geteuid() != 0, reason="without root the code keeps the env's uid, and "
                    "same-uid processes can signal each other (documented limitation)")
def test_code_cannot_signal_the_worker_or_the_env_when_run_as_root(raw_box, base):
    assert_alive(raw_box, base)
    pid = raw_box.pid
    for target in ("os.getppid()", str(os.getpid())):
        r = raw_box.run(base, fn(f"import os\nos.kill({target}, 9)"))
        # the worker's own processes: not ours to signal; the env's: not even visible
        assert r.status == "error" and ("PermissionError" in r.message
                                        or "ProcessLookupError" in r.message)
    assert_alive(raw_box, base)
    assert raw_box.pid == pid


def test_a_sleeping_submission_is_killed_at_the_wall_clock_limit(raw_box, base):
    # no CPU time is used, so only the worker's kill at the wall-clock limit stops it (as
    # root the worker needs CAP_KILL for that: the submission runs as another uid)
    t0 = time.monotonic()
    r = raw_box.run(base, fn("import time\ntime.sleep(60)"))
    assert r.status == "timeout" and "wall-clock limit" in r.message, r.message
    assert time.monotonic() - t0 < 10
    assert_alive(raw_box, base)


def test_code_runs_as_nobody_when_the_env_runs_as_root(raw_box, base):
    r = raw_box.run(base, fn("import os\nreturn {'type': 'text', "
                             "'data': [os.getuid(), os.getcwd(), os.stat('.').st_nlink]}"))
    assert r.ok
    uid, cwd, links = r.data
    assert uid == 65534  # host nobody as root, uid 65534 of a user namespace otherwise
    assert cwd == "/sandbox/scratch" and links == 2  # an empty directory


def test_a_dead_worker_is_restarted(base):
    from netarena_gym.capacity_planning.commands.sandbox import Limits
    sb = Sandbox(Limits(cpu_seconds=1.0, wall_seconds=2.0))
    try:
        assert_alive(sb, base)
        os.kill(sb.pid, signal.SIGKILL)
        time.sleep(0.1)
        assert_alive(sb, base)
        assert sb.restarts == 1
    finally:
        sb.close()


def test_hostile_submission_through_the_env_is_graded_as_a_failure():
    from netarena_gym.capacity_planning.env import CapacityPlanningEnv
    from netarena_gym.capacity_planning.commands.sandbox import Limits
    env = CapacityPlanningEnv(level=1, interface="code", limits=Limits(cpu_seconds=1, wall_seconds=2),
                              topologies=[SPEC])
    try:
        env.reset(seed=0)
        obs, r, term, trunc, info = env.step(fn("import gc\nreturn gc.get_objects()"))
        assert info["command_kind"] == "refused" and info["reward_components"]["refused"] < 0
        assert "import of 'gc' is not allowed" in obs and not term
        obs, r, term, trunc, info = env.step(fn("while True:\n    pass"))
        assert info["command_kind"] == "timeout" and info["timeouts"] == 1
        obs, r, term, trunc, info = env.step(fn("return {'type': 'text', 'data': 'all of it'}"))
        assert term and not info["correct"] and info["safe"]
    finally:
        env.close()


def test_the_worker_is_sent_the_topology_and_the_code_only(monkeypatch):
    from netarena_gym.capacity_planning.env import CapacityPlanningEnv
    from netarena_gym.capacity_planning.expert import CapacityPlanningExpert
    frames = []
    real = Sandbox._send

    def spy(self, obj):
        frames.append(obj)
        return real(self, obj)
    monkeypatch.setattr(Sandbox, "_send", spy)
    env = CapacityPlanningEnv(level=1, interface="code", topologies=[SPEC], templates=("capacity",))
    try:
        obs, info = env.reset(seed=0)
        truth = env.unwrapped.query.ground_truth["answer"]
        *_, info = env.step(CapacityPlanningExpert().act(obs, info))
        assert info["correct"]
    finally:
        env.close()
    assert [f["op"] for f in frames] == ["load", "run"]
    assert set(frames[0]) == {"op", "key", "scheme", "nodes", "edges"}
    assert set(frames[1]) == {"op", "key", "code", "limits", "guard", "namespace",
                              "seed"}  # random.seed of the code, from the episode seed
    assert str(truth) not in json.dumps(frames[0])  # the total is computed, never sent


def _canon(d):
    return (sorted(json.dumps(x, sort_keys=True) for x in d["nodes"]),
            sorted(json.dumps(x) for x in d["edges"]), sorted(json.dumps(x) for x in d["duplicates"]))


@pytest.mark.parametrize("scheme", ["kind_name", "merged"])
def test_fast_graph_diff_equals_the_generic_one(scheme):
    import networkx as nx
    import numpy as np

    from netarena_gym.capacity_planning.commands import sandbox_graph as w
    from netarena_gym.capacity_planning.commands.sandbox import _records
    _, nodes, edges = _records(base_graph(SPEC, scheme))
    b = w.Base(scheme, json.loads(json.dumps(nodes)), json.loads(json.dumps(edges)))
    rng = np.random.default_rng(5)
    for trial in range(200):
        g = b.graph.copy()
        keys = list(g.nodes)
        for _ in range(int(rng.integers(0, 4))):
            k = keys[int(rng.integers(len(keys)))]
            r = rng.random()
            if k not in g:
                continue
            if r < 0.2:
                g.remove_node(k)
            elif r < 0.35:
                g.nodes[k]["physical_capacity_bps"] = int(rng.integers(1, 9))
            elif r < 0.5:  # relabel: same attributes under another key
                g = nx.relabel_nodes(g, {k: ("x", str(trial))})
            elif r < 0.6:  # rename: new identity under the same key
                g.nodes[k]["name"] = f"renamed{trial}"
            elif r < 0.7:  # a duplicate of k
                g.add_node(("dup", trial), **dict(g.nodes[k]))
            elif r < 0.8:
                z = keys[int(rng.integers(len(keys)))]
                if z in g and z != k:
                    g.add_edge(k, z, type="RK_CONTROLS")
            elif r < 0.9:
                for z in list(g.successors(k))[:1]:
                    g.edges[k, z]["type"] = "RK_X"
            else:
                g.add_node(("new", trial), name=f"n{trial}", type=["EK_PORT"])
                g.add_edge(k, ("new", trial), type="RK_CONTAINS")
        assert _canon(w.diff_digraph(b, g)) == _canon(w.diff_items(b, g)), trial


def test_a_copy_starts_its_own_worker_and_leaves_the_original_running(base):
    """Pickling a code-interface env after its first submission failed on the worker's
    pipes; a copy now carries the settings only."""
    import copy
    import pickle

    from netarena_gym.capacity_planning.commands.sandbox import Limits
    sb = Sandbox(Limits(cpu_seconds=1.0, wall_seconds=2.0, memory_mb=512))
    try:
        assert_alive(sb, base)
        for twin in (copy.deepcopy(sb), pickle.loads(pickle.dumps(sb))):
            assert twin.pid is None and twin.limits == sb.limits
            assert_alive(twin, base)
            assert twin.pid != sb.pid
            twin.close()
        assert sb.pid is not None and os.kill(sb.pid, 0) is None  # the original's worker lives
        assert_alive(sb, base)
    finally:
        sb.close()


def test_code_env_pickles_after_a_submission():
    import pickle

    from netarena_gym.capacity_planning.env import CapacityPlanningEnv
    env = CapacityPlanningEnv(interface="code")
    env.reset(seed=0)
    env.step(fn("return {'type': 'text', 'data': 'x'}"))
    twin = pickle.loads(pickle.dumps(env))
    assert twin.reset(seed=0)[0] == env.reset(seed=0)[0]
    env.close()
    twin.close()


def test_the_cpu_limit_message_quotes_the_whole_seconds_enforced(base):
    """RLIMIT_CPU takes whole seconds: 0.5 s is enforced as 1 s, and the message said 0.5."""
    from netarena_gym.capacity_planning.commands.sandbox import Limits
    sb = Sandbox(Limits(cpu_seconds=0.5, wall_seconds=10.0, memory_mb=512))
    try:
        r = sb.run(base, fn("while True:\n    pass"))
        assert r.status == "timeout" and "CPU-time limit of 1 s exceeded" in r.message, r.message
    finally:
        sb.close()


def test_a_graph_in_data_is_the_updated_graph_except_upstreams(box, base):
    """Levels 1-4 take a graph answer's ``data`` as its updated graph when
    ``updated_graph`` is missing; upstream (compat) judges safety on ``updated_graph``
    alone and grades correctness on ``data`` (spec malt 4.1)."""
    code = fn(f"graph.nodes[('EK_PORT', '{SW[1]}.p1')]['physical_capacity_bps'] = 5\n"
              "return {'type': 'graph', 'data': graph}")
    r = box.run(base, code)
    assert r.ok and r.diff is not None and r.graded is None
    r = box.run(base, code, "upstream")
    assert r.ok and r.diff is None
    diff, dups = r.graded
    assert list(diff.nodes) == [(PORT, f"{SW[1]}.p1")] and dups == []
