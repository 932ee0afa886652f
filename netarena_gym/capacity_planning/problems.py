"""Query records, and the question text of levels 1-4: one sentence per op, rendered from
the op and parsed back to it (``parse(render(ops)) == ops``, so an agent, or the expert, can
work from the text alone).

A composed question chains sentences with "Then ..."; reads after a change say "in the
updated graph"; one closing sentence states what to return.
"""
from __future__ import annotations

import copy
import marshal
import re
from dataclasses import dataclass, field
from typing import Any

from netarena_gym.capacity_planning.kinds import (
    KIND_OF_PLURAL, KIND_OF_WORD, PLURAL_RE, PLURALS, PORT, SWITCH, WORD_RE, WORDS)
from netarena_gym.capacity_planning.state_ops import ANSWER_TYPE, MUTATIONS

RETURNS = {
    "graph": "Return the updated graph.",
    "list": "Return a list of node names.",
    "rank": "Return a list of [name, total capacity in bps] pairs.",
    "number": "Return the number.",
    "name": "Return the switch name.",
}
_RETURN_OF = {v: k for k, v in RETURNS.items()}

_N = r"(?P<{}>\S+?)"
_SENTENCES: list[tuple[str, re.Pattern]] = [
    ("add_port", re.compile(
        rf"Add a new port {_N.format('name')} with physical capacity (?P<capacity>\d+) bps to "
        rf"packet switch {_N.format('parent')}\.(?:\s|$)")),
    ("add_switch", re.compile(
        rf"Add a new packet switch {_N.format('name')} at stage (?P<stage>\d+) to "
        rf"(?P<pkw>{WORD_RE}) {_N.format('parent')}, with (?P<ports>\d+) ports named "
        rf"\S+?\.p1 to \S+?\.p\d+, each with physical capacity (?P<capacity>\d+) bps\.(?:\s|$)")),
    ("place", re.compile(
        rf"Add a new port with physical capacity (?P<capacity>\d+) bps to the least-loaded "
        rf"packet switch of (?P<kw>{WORD_RE}) {_N.format('node')}, naming it "
        rf"<switch name>\.p(?P<index>\d+)\.(?:\s|$)")),
    ("remove", re.compile(rf"Remove (?P<kw>{WORD_RE}) {_N.format('node')} from the graph\.(?:\s|$)")),
    ("update", re.compile(
        rf"Update the physical capacity of port {_N.format('node')} to (?P<capacity>\d+) "
        rf"bps\.(?:\s|$)")),
    ("drain", re.compile(
        rf"Drain packet switch {_N.format('node')}: remove it together with its ports, its "
        rf"chassis and its control point\.(?:\s|$)")),
    ("list", re.compile(
        rf"List the direct child nodes of (?P<kw>{WORD_RE}) {_N.format('node')}"
        rf"(?: in the updated graph)?\.(?:\s|$)")),
    ("rank", re.compile(
        rf"Rank the direct child nodes of (?P<kw>{WORD_RE}) {_N.format('node')}"
        rf"(?: in the updated graph)? by total physical capacity, highest first\.(?:\s|$)")),
    ("count", re.compile(
        rf"Count the (?P<plural>{PLURAL_RE}) in (?P<kw>{WORD_RE}) {_N.format('node')}"
        rf"(?: in the updated graph)?\.(?:\s|$)")),
    ("capacity", re.compile(
        rf"Compute the total physical capacity of (?P<kw>{WORD_RE}) {_N.format('node')}"
        rf"(?: in the updated graph)?\.(?:\s|$)")),
    ("least_loaded", re.compile(
        rf"Find the least-loaded packet switch of (?P<kw>{WORD_RE}) {_N.format('node')}"
        rf"(?: in the updated graph)?\.(?:\s|$)")),
    ("isolated", re.compile(
        rf"List the nodes that would be left without any edge if (?P<kw>{WORD_RE}) "
        rf"{_N.format('node')} alone were removed(?: from the updated graph)?\.(?:\s|$)")),
]


def sentence(op: dict, after_change: bool) -> str:
    k = op["op"]
    upd = " in the updated graph" if after_change else ""
    if k == "add" and op["kind"] == PORT:
        return (f"Add a new port {op['name']} with physical capacity {op['capacity']} bps to "
                f"packet switch {op['parent'][1]}.")
    if k == "add":
        n, p = op["name"], op["parent"]
        return (f"Add a new packet switch {n} at stage {op['stage']} to {WORDS[p[0]]} {p[1]}, "
                f"with {op['ports']} ports named {n}.p1 to {n}.p{op['ports']}, each with "
                f"physical capacity {op['capacity']} bps.")
    if k == "place":
        p = op["parent"]
        return (f"Add a new port with physical capacity {op['capacity']} bps to the "
                f"least-loaded packet switch of {WORDS[p[0]]} {p[1]}, naming it "
                f"<switch name>.p{op['index']}.")
    kind, name = op["node"]
    kw = WORDS[kind]
    if k == "remove":
        return f"Remove {kw} {name} from the graph."
    if k == "update":
        return f"Update the physical capacity of port {name} to {op['capacity']} bps."
    if k == "drain":
        return (f"Drain packet switch {name}: remove it together with its ports, its chassis "
                "and its control point.")
    if k == "list":
        return f"List the direct child nodes of {kw} {name}{upd}."
    if k == "rank":
        return f"Rank the direct child nodes of {kw} {name}{upd} by total physical capacity, highest first."
    if k == "count":
        return f"Count the {PLURALS[op['kind']]} in {kw} {name}{upd}."
    if k == "capacity":
        return f"Compute the total physical capacity of {kw} {name}{upd}."
    if k == "least_loaded":
        return f"Find the least-loaded packet switch of {kw} {name}{upd}."
    if k == "isolated":
        where = " from the updated graph" if after_change else ""
        return f"List the nodes that would be left without any edge if {kw} {name} alone were removed{where}."
    raise ValueError(f"unknown op {k!r}")


def answer_type(ops: list[dict]) -> str:
    return ANSWER_TYPE[ops[-1]["op"]]


def render(ops: list[dict]) -> str:
    parts = []
    changed = False
    for i, op in enumerate(ops):
        s = sentence(op, changed)
        if i:
            s = "Then " + s[0].lower() + s[1:]
        parts.append(s)
        changed = changed or op["op"] in MUTATIONS
    parts.append(RETURNS[answer_type(ops)])
    return " ".join(parts)


class QuestionError(ValueError):
    pass


def parse(text: str) -> list[dict]:
    """The ops of a level 1-4 question (the inverse of :func:`render`)."""
    ops: list[dict] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        rest = text[pos:]
        if rest in _RETURN_OF:
            if not ops or _RETURN_OF[rest] != answer_type(ops):
                raise QuestionError(f"unexpected closing sentence {rest!r}")
            return ops
        if rest.startswith("Then "):
            rest = rest[5:6].upper() + rest[6:]
            pos += 5
        for name, rx in _SENTENCES:
            m = rx.match(rest)
            if m:
                ops.append(_op(name, m.groupdict()))
                pos += m.end()
                break
        else:
            raise QuestionError(f"cannot read the question at: {rest[:60]!r}")
    raise QuestionError("the question has no closing 'Return ...' sentence")


def _op(name: str, g: dict) -> dict:
    if name == "add_port":
        return {"op": "add", "kind": PORT, "name": g["name"], "parent": [SWITCH, g["parent"]],
                "capacity": int(g["capacity"])}
    if name == "add_switch":
        return {"op": "add", "kind": SWITCH, "name": g["name"],
                "parent": [KIND_OF_WORD[g["pkw"]], g["parent"]], "stage": int(g["stage"]),
                "ports": int(g["ports"]), "capacity": int(g["capacity"])}
    if name == "place":
        return {"op": "place", "parent": [KIND_OF_WORD[g["kw"]], g["node"]],
                "capacity": int(g["capacity"]), "index": int(g["index"])}
    if name == "update":
        return {"op": "update", "node": [PORT, g["node"]], "capacity": int(g["capacity"])}
    if name == "drain":
        return {"op": "drain", "node": [SWITCH, g["node"]]}
    op = {"op": name, "node": [KIND_OF_WORD[g["kw"]], g["node"]]}
    if name == "count":
        op["kind"] = KIND_OF_PLURAL[g["plural"]]
    return op


_LEAF = frozenset((str, int, float, bool, type(None)))


def _plain(v):
    """A deep copy of data made of dicts, lists, tuples and scalars (other values are
    deep-copied), as ``dataclasses.asdict`` copies a field. Scalars are shared (they are
    immutable) without a call per scalar."""
    t = type(v)
    if t is dict:
        return {k if type(k) is str else _plain(k): x if type(x) in _LEAF else _plain(x)
                for k, x in v.items()}
    if t is list:
        return [x if type(x) in _LEAF else _plain(x) for x in v]
    if t is tuple:
        return tuple([x if type(x) in _LEAF else _plain(x) for x in v])
    if t in _LEAF:
        return v
    return copy.deepcopy(v)


def plain_copy(v):
    """:func:`_plain`'s deep copy, made by ``marshal`` (in C; version 2 keeps no shared
    references, so nothing in the copy is shared) when every value is a built-in dict,
    list, tuple, set, str, bytes, int, float, bool or None."""
    try:
        return marshal.loads(marshal.dumps(v, 2))
    except ValueError:  # another type (a numpy scalar, ...): copied as _plain copies it
        return _plain(v)


@dataclass
class Query:
    """One question with its ground truth (data, computed when it was generated)."""
    template: str
    level: Any
    text: str
    ops: list[dict]
    answer_type: str
    ground_truth: dict = field(default_factory=dict)  # {"answer": ..., "graph": Diff json}
    flags: dict = field(default_factory=dict)  # literal_unsafe, gt_safe, gt_safe_compat

    @property
    def label(self) -> str:
        return f"capacity planning, level-{self.level}, {self.template}"

    def to_dict(self, with_answer: bool = True) -> dict:
        """A deep copy as plain data (what ``dataclasses.asdict`` gives, without its
        per-value deep copies; ``with_answer=False`` leaves the ground truth out)."""
        d = {"template": self.template, "level": _plain(self.level), "text": self.text,
             "ops": plain_copy(self.ops), "answer_type": self.answer_type}
        if with_answer:
            d["ground_truth"] = plain_copy(self.ground_truth)
        d["flags"] = plain_copy(self.flags)
        d["label"] = self.label
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Query":
        return cls(template=d["template"], level=d["level"], text=d["text"],
                   ops=[dict(o) for o in d["ops"]], answer_type=d["answer_type"],
                   ground_truth=dict(d.get("ground_truth") or {}), flags=dict(d.get("flags") or {}))
