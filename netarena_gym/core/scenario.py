"""Scenario records: the unit of replay, datasets and comparison with upstream.

A scenario is pure, JSON-serialisable data: which task, which level, the parameters of the
healthy system (topology/workload) and every fault with every parameter (``faults`` holds
what is broken or asked: routing and K8s faults, or CapacityPlanning's one query record). It is sufficient to
rebuild the episode without the seed (the seed is kept for provenance)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from netarena_gym.errors import InvalidConfig, ScenarioError

SCHEMA_VERSION = 1


def category_name(types) -> str:
    """A fault category's name: its fault types joined by ``+`` (``"remove_ip+drop"``)."""
    return "+".join(types)


def parse_category(category, types: Sequence[str],
                   indexed: Sequence[tuple[str, ...]]) -> tuple[str, ...]:
    """The fault types that ``reset(options={"category": ...})`` asks for.

    ``category`` is a name (fault types joined by ``+``), a list of fault types, or an index
    into ``indexed`` (the task's upstream categories, in upstream's order). Anything else
    raises :class:`~netarena_gym.errors.InvalidConfig` naming the valid forms."""
    if isinstance(category, (int, np.integer)) and not isinstance(category, bool):
        if not 0 <= int(category) < len(indexed):
            raise InvalidConfig(f"category index {int(category)} is out of range: the "
                                f"{len(indexed)} upstream categories are 0..{len(indexed) - 1}")
        return tuple(indexed[int(category)])
    if isinstance(category, str):
        names = tuple(t.strip() for t in category.split("+"))
    elif isinstance(category, (list, tuple)) and all(isinstance(t, str) for t in category):
        names = tuple(category)
    else:
        raise InvalidConfig(f"category must be a name such as {category_name(indexed[-1])!r}, "
                            f"a list of fault types or an index 0..{len(indexed) - 1}; "
                            f"got {category!r}")
    bad = [t for t in names if t not in types]
    if not names or bad:
        raise InvalidConfig(f"category {category!r} has unknown fault types {bad or ['']}; "
                            f"known: {', '.join(types)}")
    return names


def _copy(v):
    """Deep copy of JSON-like data (dicts, lists, tuples, scalars)."""
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_copy(x) for x in v]
    return v


class _NotPlain(Exception):
    pass


def _plain(v):
    t = type(v)
    if t is str or t is int or t is float or t is bool or v is None:
        return v
    if t is dict:
        out = {}
        for k, x in v.items():
            if type(k) is not str:
                raise _NotPlain
            out[k] = _plain(x)
        return out
    if t is list or t is tuple:
        return [_plain(x) for x in v]
    raise _NotPlain


def plain_json(v):
    """What ``json.loads(json.dumps(v))`` returns (a fresh copy, tuples made lists), built
    directly when ``v`` holds only dicts with ``str`` keys, lists, tuples and exact
    ``str``/``int``/``float``/``bool``/``None`` values (a scenario record: several times
    cheaper than the round trip, on every reset); anything else goes through the round
    trip itself, which converts (or rejects) it as ``json`` does."""
    try:
        return _plain(v)
    except (_NotPlain, RecursionError):
        return json.loads(json.dumps(v))


@dataclass(frozen=True)
class Scenario:
    task: str
    level: int | str
    params: dict[str, Any]
    faults: tuple[dict[str, Any], ...]
    seed: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "level": self.level, "params": _copy(self.params),
                "faults": [_copy(f) for f in self.faults], "seed": self.seed,
                "meta": _copy(self.meta), "version": self.version}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Scenario":
        """The record ``d``; :class:`ScenarioError` naming what is missing or of the wrong
        type."""
        version = d.get("version", SCHEMA_VERSION)
        if isinstance(version, bool) or not isinstance(version, int):
            raise ScenarioError(f"scenario version must be an integer, got {version!r}")
        if version > SCHEMA_VERSION:
            raise ScenarioError(f"scenario schema {version} is newer than this library "
                                f"({SCHEMA_VERSION})")
        missing = {"task", "level", "params", "faults"} - set(d)
        if missing:
            raise ScenarioError(f"scenario record lacks {sorted(missing)}")
        shapes = (("task", str), ("level", (int, str)), ("params", dict), ("faults", list),
                  ("meta", dict))
        for key, kind in shapes:
            v = d.get(key, {}) if key == "meta" else d[key]
            if isinstance(v, tuple) and key == "faults":
                v = list(v)
            if not isinstance(v, kind) or isinstance(v, bool):
                raise ScenarioError(f"scenario {key!r} must be {_kind_name(kind)}, got {v!r}"[:300])
        if not all(isinstance(f, dict) for f in d["faults"]):
            raise ScenarioError("scenario 'faults' must be a list of objects")
        return cls(task=d["task"], level=d["level"], params=dict(d["params"]),
                   faults=tuple(dict(f) for f in d["faults"]), seed=d.get("seed"),
                   meta=dict(d.get("meta", {})), version=version)

    @classmethod
    def from_json(cls, s: str) -> "Scenario":
        try:
            d = json.loads(s)
        except (ValueError, RecursionError):
            raise ScenarioError("a scenario given as a string must be its JSON record") from None
        if not isinstance(d, dict):
            raise ScenarioError(f"a scenario's JSON must be an object, got a {type(d).__name__}")
        return cls.from_dict(d)

    @classmethod
    def coerce(cls, obj: "Scenario | dict | str") -> "Scenario":
        if isinstance(obj, Scenario):
            return obj
        if isinstance(obj, str):
            return cls.from_json(obj)
        if isinstance(obj, dict):
            return cls.from_dict(obj)
        raise ScenarioError(f"a scenario is a Scenario, its record (a dict) or its JSON, not "
                            f"a {type(obj).__name__}")


def _kind_name(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({"str": "a string", "int": "an integer", "dict": "an object",
                        "list": "a list"}[k.__name__] for k in kinds)
