"""How a step's ``info`` and observation travel from a worker process to the main process.

Mirrors what Gymnasium's ``VectorEnv._add_info`` makes of the infos of ``n`` envs (one
array per key, the first value's type as dtype for numbers, an object array otherwise,
``_key`` masks, nested dicts key by key) for the part of an ``info`` every NetArena env
gives at every step, the lean keys (:data:`~netarena_gym.core.info.LEAN_KEYS`):

* :func:`pack_info` turns one env's lean keys into a tuple of plain values (the action
  mask as bytes), cheap to pickle; the other keys stay a dict for ``_add_info``.
* :func:`columns` turns the packs of several envs into one *column pack* (a tuple of
  values per key), :func:`merge_columns` joins the column packs of several workers, and
  :func:`stack_columns` makes the arrays ``_add_info`` would, one numpy call per key.

Also here: :func:`shares_memory` (which observation spaces go through shared memory: array
spaces; a ``Text`` space goes through the pipe, see :mod:`netarena_gym.vector`) and
:func:`shared_writer` (numpy views of a shared buffer made once per worker). Left out:
stacking infos whose lean keys differ between envs (the callers fall back to
``_add_info``).
"""
from __future__ import annotations

from copy import deepcopy
from itertools import chain
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import read_from_shared_memory

from netarena_gym.core.info import LEAN_KEYS

#: the scalar lean keys, in the order of a packed step reply
SCALAR_KEYS: tuple[str, ...] = tuple(k for k in LEAN_KEYS
                                     if k not in ("reward_components", "action_mask"))
_LEAN = frozenset(LEAN_KEYS)
_ARRAY_SPACES = (spaces.Box, spaces.Discrete, spaces.MultiBinary, spaces.MultiDiscrete)


def shares_memory(space: gym.Space) -> bool:
    """Whether observations of ``space`` go through shared memory here: an array space or
    a ``Dict`` of array spaces (anything else, ``Text`` included, goes through the pipe)."""
    if isinstance(space, spaces.Dict):
        return all(isinstance(s, _ARRAY_SPACES) for s in space.spaces.values())
    return isinstance(space, _ARRAY_SPACES)


def pack_info(info: dict) -> tuple[tuple | None, dict]:
    """``(packed, rest)``: the lean keys of ``info`` as one tuple (scalars, reward component
    names and values, action mask bytes, dtype and shape) and the other keys as a dict;
    ``(None, info)`` when ``info`` lacks a lean key or has one of another type."""
    try:
        scalars = tuple(info[k] for k in SCALAR_KEYS)
        rc, mask = info["reward_components"], info["action_mask"]
    except KeyError:
        return None, info
    if type(rc) is not dict or type(mask) is not np.ndarray:
        return None, info
    packed = (scalars, tuple(rc), tuple(rc.values()), mask.tobytes(), mask.dtype.str, mask.shape)
    return packed, {k: v for k, v in info.items() if k not in _LEAN}


def unpack_info(packed: tuple | None, rest: dict) -> dict:
    """The ``info`` dict :func:`pack_info` packed (``rest`` itself when nothing was)."""
    if packed is None:
        return rest
    scalars, names, values, mask, dtype, shape = packed
    info = dict(zip(SCALAR_KEYS, scalars))
    info["reward_components"] = dict(zip(names, values))
    info["action_mask"] = np.frombuffer(mask, dtype=dtype).reshape(shape).copy()
    info.update(rest)
    return info


def _alike(parts: Sequence[tuple], names: int, dtype: int, shape: int) -> bool:
    """Whether every pack (or column pack) of ``parts`` has the first's reward component
    names, mask dtype and mask shape (at those positions of the tuple)."""
    first = parts[0]
    return all(p[names] == first[names] and p[dtype] == first[dtype] and p[shape] == first[shape]
               for p in parts)


def columns(packs: Sequence[tuple | None]) -> tuple | None:
    """The packs of several envs (:func:`pack_info`) as one column pack ``(scalar columns,
    names, value columns, mask bytes, mask dtype, mask shape, envs)``; None when some info
    was not packed or the envs differ in names, mask dtype or mask shape."""
    if not packs or any(p is None for p in packs) or not _alike(packs, 1, 4, 5):
        return None
    first = packs[0]
    return (tuple(zip(*(p[0] for p in packs))), first[1], tuple(zip(*(p[2] for p in packs))),
            b"".join(p[3] for p in packs), first[4], first[5], len(packs))


def merge_columns(parts: Sequence[tuple | None]) -> tuple | None:
    """The column packs of several workers, in env order, as one; None when one is None or
    they differ in names, mask dtype or mask shape."""
    if not parts or any(c is None for c in parts) or not _alike(parts, 1, 4, 5):
        return None
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    scalars = tuple(sum(cs, ()) for cs in zip(*(c[0] for c in parts)))
    values = tuple(sum(cs, ()) for cs in zip(*(c[2] for c in parts)))
    return (scalars, first[1], values, b"".join(c[3] for c in parts), first[4], first[5],
            sum(c[6] for c in parts))


def column_infos(col: tuple) -> list[dict]:
    """The lean ``info`` of each env of a column pack (for the fallback to ``_add_info``)."""
    scalars, names, values, masks, dtype, shape, n = col
    per = len(masks) // n
    return [unpack_info((tuple(c[i] for c in scalars), names, tuple(c[i] for c in values),
                         masks[i * per:(i + 1) * per], dtype, shape), {}) for i in range(n)]


def stack(values: Sequence) -> np.ndarray:
    """``values`` (one per env) as the array Gymnasium's ``_add_info`` makes of them: the
    first value's type as dtype for Python and numpy numbers, an object array otherwise."""
    t = type(values[0])
    if t in (int, float, bool) or issubclass(t, np.number):
        return np.array(values, dtype=t)
    out = np.full(len(values), None, dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def stack_columns(col: tuple) -> dict:
    """The lean part of the vector ``info`` from a column pack, as Gymnasium stacks it
    (every key reported by every env, so every ``_key`` mask all True)."""
    scalars, names, values, masks, dtype, shape, n = col
    every = iter(np.ones((len(SCALAR_KEYS) + len(names) + 2, n), dtype=np.bool_))
    infos: dict[str, Any] = {}
    for key, column in zip(SCALAR_KEYS, scalars):
        infos[key], infos[f"_{key}"] = stack(column), next(every)
    rc: dict[str, Any] = {}
    if set(map(type, chain.from_iterable(values))) <= {float}:  # one array, a row each
        rows = np.array(values, dtype=float) if values else ()
        for name, r in zip(names, rows):
            rc[name], rc[f"_{name}"] = r, next(every)
    else:
        for name, column in zip(names, values):
            rc[name], rc[f"_{name}"] = stack(column), next(every)
    infos["reward_components"], infos["_reward_components"] = rc, next(every)
    infos["action_mask"] = np.frombuffer(masks, dtype=dtype).reshape((n, *shape)).copy()
    infos["_action_mask"] = next(every)
    return infos


def stack_packed(packs: Sequence[tuple]) -> dict | None:
    """:func:`stack_columns` of the packs of several envs; None when they differ in reward
    component names or mask shape (the caller then stacks the unpacked infos with
    ``_add_info``)."""
    col = columns(packs)
    return None if col is None else stack_columns(col)


def add_infos(infos: dict, entries: Sequence[tuple[int, dict]], n: int) -> dict:
    """``infos`` with the ``(index, info)`` of ``entries`` (ascending indices) stacked in,
    as ``VectorEnv._add_info`` called on each in turn stacks them (the first value of a key
    gives its array's type, ``final_obs`` an object array, nested dicts key by key, ``_key``
    masks), but key by key over all the entries: one array and one mask per key, not one
    mask per key per env."""
    by_key: dict[str, list] = {}
    for i, info in entries:
        for key, value in info.items():
            by_key.setdefault(key, []).append((i, value))
    for key, items in by_key.items():
        first = items[0][1]
        if key != "final_obs" and isinstance(first, dict):
            array = add_infos(infos.get(key, {}), items, n)
        else:
            array = infos.get(key)
            if array is None:
                array = _empty(first, n, key == "final_obs")
            for i, v in items:
                array[i] = v
        mask = infos.get(f"_{key}")
        if mask is None:
            mask = np.zeros(n, dtype=np.bool_)
        for i, _ in items:
            mask[i] = True
        infos[key], infos[f"_{key}"] = array, mask
    return infos


def _empty(value: Any, n: int, objects: bool) -> np.ndarray:
    """The array ``_add_info`` makes for a key whose first value is ``value``."""
    t = type(value)
    if not objects and (t in (int, float, bool) or issubclass(t, np.number)):
        return np.zeros(n, dtype=t)
    if not objects and isinstance(value, np.ndarray):
        return np.zeros((n, *value.shape), dtype=value.dtype)
    return np.full(n, None, dtype=object)


def buffer_envs(space: gym.Space, shared_memory: Any) -> int:
    """How many envs' observations the shared buffer of an array space (or a ``Dict`` of
    them, see :func:`shares_memory`) holds."""
    if isinstance(space, spaces.Dict):
        key = next(iter(space.spaces))
        space, shared_memory = space.spaces[key], shared_memory[key]
    return len(shared_memory) // max(1, int(np.prod(space.shape)))


def shared_writer(space: gym.Space, shared_memory: Any, n: int) -> Callable[[int, Any], None]:
    """A function writing one env's observation into the shared ``n``-env buffer, through
    numpy views made once."""
    views = read_from_shared_memory(space, shared_memory, n=n)
    if isinstance(space, spaces.Dict):
        def write(index: int, obs: dict) -> None:
            for key, view in views.items():
                view[index] = obs[key]
    else:
        def write(index: int, obs: Any) -> None:
            views[index] = obs
    return write


def copy_observations(obs: Any) -> Any:
    """``deepcopy(obs)``, an array at a time for an array or a ``Dict`` of arrays."""
    if type(obs) is np.ndarray:
        return obs.copy()
    if type(obs) is dict and all(type(v) is np.ndarray for v in obs.values()):
        return {k: v.copy() for k, v in obs.items()}
    return deepcopy(obs)


__all__ = ["SCALAR_KEYS", "shares_memory", "pack_info", "unpack_info", "columns",
           "merge_columns", "column_infos", "stack", "stack_columns", "stack_packed",
           "add_infos", "buffer_envs", "shared_writer", "copy_observations"]
