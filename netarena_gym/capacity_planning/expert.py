"""A deterministic expert for the capacity-planning task, on both interfaces.

It sees only what any agent sees: the question in the observation (which it reads back into
operations with :func:`queries.parse`, or :func:`compat.parse` for upstream wording) and the
outputs of its own tool calls. It never reads the ground truth.

* **code**: it writes ``process_graph`` from a fixed library of graph routines (below,
  independent of the env's own implementation in :mod:`ops`) and one call per operation. The
  changes are made the safe way: a removal takes along what would be left without edges. At
  ``level="compat"`` it writes upstream's primitives instead, to match upstream's ground
  truth (which is unsafe for some queries by construction; those are flagged).
* **tools**: it reads what it needs (``list_children`` / ``get_node``), computes the answer
  from the printed lines, makes the changes one atomic call at a time, then answers.
"""
from __future__ import annotations

import re

from netarena_gym.capacity_planning import grader_compat as compat
from netarena_gym.capacity_planning.kinds import CAPACITY, CHASSIS, CONTAINS, CONTROL_POINT, CONTROLS, PORT, SWITCH, natural_key
from netarena_gym.capacity_planning.problems import QuestionError, answer_type, parse

LIBRARY = '''
import re

CONTAINS, CONTROLS = "RK_CONTAINS", "RK_CONTROLS"


def _natural(s):
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\\d+)", s))


def _kind(g, n):
    t = g.nodes[n].get("type")
    return t[0] if isinstance(t, list) and t else t


def _node(g, kind, name):
    if (kind, name) in g:
        return (kind, name)
    for n, d in g.nodes(data=True):
        if d.get("name") == name and _kind(g, n) == kind:
            return n
    raise KeyError(kind + " " + name + " not found")


def _contained(g, n):
    return [c for c in g.successors(n) if g.edges[n, c].get("type") == CONTAINS]


def _below(g, n):
    seen, stack = set(), [n]
    while stack:
        u = stack.pop()
        for c in g.successors(u):
            if c != n and c not in seen and g.edges[u, c].get("type") in (CONTAINS, CONTROLS):
                seen.add(c)
                stack.append(c)
    return seen


def _capacity(g, n):
    return sum(int(g.nodes[x].get("physical_capacity_bps", 0))
               for x in _below(g, n) | {n} if _kind(g, x) == "EK_PORT")


def _ports(g, sw):
    return [c for c in _contained(g, sw) if _kind(g, c) == "EK_PORT"]


def _isolated_if_removed(g, n):
    out = []
    for m in set(g.successors(n)) | set(g.predecessors(n)):
        if m != n and all(x == n for x in g.successors(m)) and all(x == n for x in g.predecessors(m)):
            out.append(m)
    return sorted(out, key=lambda m: _natural(g.nodes[m]["name"]))


def _add_port(g, name, parent, capacity):
    g.add_node(("EK_PORT", name), name=name, type=["EK_PORT"], physical_capacity_bps=capacity)
    g.add_edge(parent, ("EK_PORT", name), type=CONTAINS)


def _add_switch(g, name, parent, stage, ports, capacity):
    sw = ("EK_PACKET_SWITCH", name)
    g.add_node(sw, name=name, type=["EK_PACKET_SWITCH"], switch_loc={"stage": stage})
    g.add_edge(parent, sw, type=CONTAINS)
    for i in range(1, ports + 1):
        _add_port(g, name + ".p" + str(i), sw, capacity)


def _remove(g, n):
    g.remove_nodes_from(_isolated_if_removed(g, n) + [n])


def _update(g, n, capacity):
    g.nodes[n]["physical_capacity_bps"] = capacity


def _drain(g, sw):
    cap = _capacity(g, sw)
    gone = _ports(g, sw) + [p for p in g.predecessors(sw)
                            if (_kind(g, p) == "EK_CHASSIS" and g.edges[p, sw]["type"] == CONTAINS)
                            or (_kind(g, p) == "EK_CONTROL_POINT" and g.edges[p, sw]["type"] == CONTROLS)]
    g.remove_nodes_from(gone + [sw])
    return cap


def _least_loaded(g, block):
    sws = [c for c in _contained(g, block) if _kind(g, c) == "EK_PACKET_SWITCH"]
    best = min(sws, key=lambda s: (_capacity(g, s), len(_ports(g, s)), _natural(g.nodes[s]["name"])))
    return best


def _place(g, block, capacity, index):
    sw = _least_loaded(g, block)
    _add_port(g, g.nodes[sw]["name"] + ".p" + str(index), sw, capacity)
    return g.nodes[sw]["name"]


def _list(g, n):
    return sorted((g.nodes[c]["name"] for c in _contained(g, n)), key=_natural)


def _rank(g, n):
    rows = [[g.nodes[c]["name"], _capacity(g, c)] for c in _contained(g, n)]
    return sorted(rows, key=lambda r: (-r[1], _natural(r[0])))


def _count(g, n, kind):
    return sum(1 for x in _below(g, n) if _kind(g, x) == kind)


def _isolated(g, n):
    return [g.nodes[m]["name"] for m in _isolated_if_removed(g, n)]
'''

COMPAT_LIBRARY = '''
def _find(g, name):
    for n, d in g.nodes(data=True):
        if d.get("name") == name:
            return n
    return None


def _has(t, kind):
    return isinstance(t, (str, list, tuple)) and kind in t


def _contained(g, n):
    return [c for c in g.successors(n) if g.edges[n, c].get("type") == "RK_CONTAINS"]


def _add(g, name, typ, parent):
    new = {"name": name, "type": typ}
    nid = len(g.nodes) + 1
    attrs = dict(new)
    if typ == "EK_PORT":
        attrs["physical_capacity_bps"] = 1000
    g.add_node(nid, **attrs)
    if typ == "EK_PACKET_SWITCH":
        pid = len(g.nodes) + 1
        g.add_node(pid, name=repr(new) + ".p1", type="EK_PORT", physical_capacity_bps=1000)
        g.add_edge(nid, pid, type="RK_CONTAINS")
    p = _find(g, parent)
    if p is not None:
        g.add_edge(p, nid, type="RK_CONTAINS")


def _remove(g, name):
    n = _find(g, name)
    if n is not None:
        g.remove_node(n)


def _list(g, name):
    n = _find(g, name)
    return [] if n is None else [g.nodes[c]["name"] for c in _contained(g, n)]


def _rank(g, name):
    n = _find(g, name)
    rows = []
    for c in ([] if n is None else _contained(g, n)):
        d = g.nodes[c]
        total = d.get("physical_capacity_bps", 0) if _has(d.get("type"), "EK_PORT") else 0
        for cc in _contained(g, c):
            if _has(g.nodes[cc].get("type"), "EK_PORT"):
                total += g.nodes[cc].get("physical_capacity_bps", 0)
        rows.append((d["name"], total))
    rows.sort(key=lambda r: r[1], reverse=True)
    return rows


def _count(g, name, typ):
    n = _find(g, name)
    seen, queue, count = {n}, [n], 0
    while queue:
        u = queue.pop(0)
        for v in _contained(g, u):
            if _has(g.nodes[v].get("type"), typ):
                count += 1
            if v not in seen:
                seen.add(v)
                queue.append(v)
    return count
'''

RESULT_TYPE = {"graph": "graph", "list": "list", "rank": "list", "number": "text", "name": "text"}


def _k(ref) -> str:
    return repr(tuple(ref))


def code_for(question: str) -> str:
    """``process_graph`` source answering a level 1-4 question."""
    ops = parse(question)
    body = []
    for op in ops:
        k = op["op"]
        if k == "add" and op["kind"] == PORT:
            body.append(f"_add_port(g, {op['name']!r}, _node(g, *{_k(op['parent'])}), {op['capacity']})")
        elif k == "add":
            body.append(f"_add_switch(g, {op['name']!r}, _node(g, *{_k(op['parent'])}), "
                        f"{op['stage']}, {op['ports']}, {op['capacity']})")
        elif k == "remove":
            body.append(f"_remove(g, _node(g, *{_k(op['node'])}))")
        elif k == "update":
            body.append(f"_update(g, _node(g, *{_k(op['node'])}), {op['capacity']})")
        elif k == "drain":
            body.append(f"answer = _drain(g, _node(g, *{_k(op['node'])}))")
        elif k == "place":
            body.append(f"answer = _place(g, _node(g, *{_k(op['parent'])}), {op['capacity']}, {op['index']})")
        elif k == "count":
            body.append(f"answer = _count(g, _node(g, *{_k(op['node'])}), {op['kind']!r})")
        elif k == "least_loaded":
            body.append(f"answer = g.nodes[_least_loaded(g, _node(g, *{_k(op['node'])}))]['name']")
        elif k == "capacity":
            body.append(f"answer = _capacity(g, _node(g, *{_k(op['node'])}))")
        else:  # list, rank, isolated
            body.append(f"answer = _{k}(g, _node(g, *{_k(op['node'])}))")
    rtype = RESULT_TYPE[answer_type(ops)]
    lines = "\n    ".join(body)
    return (f"{LIBRARY}\n\ndef process_graph(graph):\n    g = graph\n    answer = None\n    {lines}\n"
            f"    return {{'type': {rtype!r}, 'data': answer, 'updated_graph': g}}\n")


def compat_code_for(question: str) -> str:
    """``process_graph`` source reproducing upstream's ground truth for its question."""
    template, p = compat.parse(question)
    body = []
    rtype = "graph"
    for op in compat.ops_of(template, p):
        k = op["op"]
        if k == "add":
            body.append(f"_add(g, {op['name']!r}, {op['type']!r}, {op['parent']!r})")
        elif k == "remove":
            body.append(f"_remove(g, {op['name']!r})")
        elif k == "count":
            body.append(f"answer = _count(g, {op['name']!r}, {op['type']!r})")
            rtype = "text"
        else:
            body.append(f"answer = _{k}(g, {op['name']!r})")
            rtype = "list"
    lines = "\n    ".join(body)
    # process_graph first: upstream runs the code from that def on (its helpers follow it)
    return (f"def process_graph(graph_data):\n    g = graph_data\n"
            f"    answer = None\n    {lines}\n"
            f"    return {{'type': {rtype!r}, 'data': answer, 'updated_graph': g}}\n\n"
            f"{COMPAT_LIBRARY}")


# --------------------------------------------------------------- observations
def question_of(observation: str) -> str:
    m = re.search(r"^Question: (.*)$", observation, re.M)
    if not m:
        raise ValueError("no question in the observation")
    return m.group(1).strip()


def last_output(observation: str) -> str:
    i = observation.rfind("\nOutput:\n")
    if i < 0:
        return ""
    body = observation[i + len("\nOutput:\n"):]
    j = body.find("\n\nSteps left:")
    return body[:j] if j >= 0 else body


_CHILD = re.compile(r"^  (RK_\w+) (EK_\w+) (\S+) total_capacity_bps=(\d+) children=(\d+) "
                    r"degree=(\d+) attrs=", re.M)
_PARENT = re.compile(r"^  (RK_\w+) (EK_\w+) (\S+) degree=(\d+)$", re.M)


def children(output: str) -> list[tuple]:
    """``(relation, kind, name, capacity, n_children, degree)`` rows of list_children."""
    return [(r, k, n, int(c), int(ch), int(d)) for r, k, n, c, ch, d in _CHILD.findall(output)]


def parents(output: str) -> list[tuple]:
    return [(r, k, n, int(d)) for r, k, n, d in _PARENT.findall(output)]


def total_capacity(output: str) -> int:
    return int(re.search(r"^total_capacity_bps: (\d+)$", output, re.M).group(1))


def descendants(output: str) -> dict[str, int]:
    line = re.search(r"^descendants: (.*)$", output, re.M).group(1)
    return {k: int(n) for k, n in re.findall(r"(EK_\w+) (\d+)", line)}


def _call(tool: str, **kw) -> dict:
    return {"tool": tool, **kw}


def _node(ref) -> dict:
    return {"node": ref[1], "kind": ref[0]}


def _least(rows: list[tuple]) -> tuple:
    sws = [r for r in rows if r[0] == CONTAINS and r[1] == SWITCH]
    return min(sws, key=lambda r: (r[3], r[4], natural_key(r[2])))


def solve_with_tools(ops: list[dict]):
    """A generator of tool actions; ``send`` it each action's output."""
    answer = None
    for op in ops:
        k = op["op"]
        if k == "add" and op["kind"] == PORT:
            yield _call("add_node", name=op["name"], kind=PORT, parent=op["parent"][1],
                        parent_kind=op["parent"][0], attrs={CAPACITY: op["capacity"]})
        elif k == "add":
            yield _call("add_node", name=op["name"], kind=SWITCH, parent=op["parent"][1],
                        parent_kind=op["parent"][0], attrs={"switch_loc": {"stage": op["stage"]}})
            for i in range(1, op["ports"] + 1):
                yield _call("add_node", name=f"{op['name']}.p{i}", kind=PORT, parent=op["name"],
                            parent_kind=SWITCH, attrs={CAPACITY: op["capacity"]})
        elif k in ("remove", "isolated"):
            ref = op["node"]
            ups = parents((yield _call("get_node", **_node(ref))))
            downs = children((yield _call("list_children", **_node(ref))))
            links: dict[tuple, int] = {}
            degree: dict[tuple, int] = {}
            for r in ups:
                links[(r[1], r[2])] = links.get((r[1], r[2]), 0) + 1
                degree[(r[1], r[2])] = r[3]
            for r in downs:
                links[(r[1], r[2])] = links.get((r[1], r[2]), 0) + 1
                degree[(r[1], r[2])] = r[5]
            alone = sorted((n for n in links if n != tuple(ref) and degree[n] == links[n]),
                           key=lambda n: natural_key(n[1]))
            if k == "isolated":
                answer = [n[1] for n in alone]
                continue
            for n in alone:
                yield _call("remove_node", node=n[1], kind=n[0])
            yield _call("remove_node", **_node(ref))
        elif k == "update":
            yield _call("set_attr", **_node(op["node"]), key=CAPACITY, value=op["capacity"])
        elif k == "drain":
            info = yield _call("get_node", **_node(op["node"]))
            cap = total_capacity(info)
            ports = [r for r in children((yield _call("list_children", **_node(op["node"]))))
                     if r[0] == CONTAINS and r[1] == PORT]
            for r in ports:
                yield _call("remove_node", node=r[2], kind=PORT)
            yield _call("remove_node", **_node(op["node"]))
            for r in parents(info):
                if (r[0], r[1]) in ((CONTAINS, CHASSIS), (CONTROLS, CONTROL_POINT)):
                    yield _call("remove_node", node=r[2], kind=r[1])
            answer = cap
        elif k in ("place", "least_loaded"):
            ref = op["parent"] if k == "place" else op["node"]
            best = _least(children((yield _call("list_children", **_node(ref)))))
            answer = best[2]
            if k == "place":
                yield _call("add_node", name=f"{best[2]}.p{op['index']}", kind=PORT,
                            parent=best[2], parent_kind=SWITCH, attrs={CAPACITY: op["capacity"]})
        elif k == "list":
            rows = children((yield _call("list_children", **_node(op["node"]))))
            answer = sorted((r[2] for r in rows if r[0] == CONTAINS), key=natural_key)
        elif k == "rank":
            rows = children((yield _call("list_children", **_node(op["node"]))))
            answer = sorted(([r[2], r[3]] for r in rows if r[0] == CONTAINS),
                            key=lambda x: (-x[1], natural_key(x[0])))
        elif k == "count":
            answer = descendants((yield _call("get_node", **_node(op["node"])))).get(op["kind"], 0)
        elif k == "capacity":
            answer = total_capacity((yield _call("get_node", **_node(op["node"]))))
    yield _call("answer", answer="done" if answer is None else answer)


class CapacityPlanningExpert:
    """Works on the observation text of the code and tools interfaces."""

    def __init__(self):
        self._plan = None

    def reset(self) -> None:
        self._plan = None

    def act(self, observation, info=None):
        if not isinstance(observation, str):
            raise ValueError("the expert reads text observations (interface 'code' or 'text')")
        if "Interface: code" in observation.split("\n", 1)[0]:
            q = question_of(observation)
            try:
                src = code_for(q)
            except QuestionError:  # upstream's wording (level "compat")
                src = compat_code_for(q)
            return "```python\n" + src + "```"
        if self._plan is None:
            self._plan = solve_with_tools(parse(question_of(observation)))
            return next(self._plan)
        return self._plan.send(last_output(observation))

