"""Vector envs for NetArena: several envs per worker process, one pipe round trip per worker.

:func:`make_vec` builds a :class:`~netarena_gym.vector.batched.NetArenaBatchedVectorEnv`:
``num_envs`` copies of ``gym.make(env_id, info=info, **env_kwargs)`` in ``workers``
processes (default ``min(num_envs, os.cpu_count())``), each worker a contiguous slice of
envs that it steps per command, replying once per step for all of them. It returns what
``gymnasium.vector.SyncVectorEnv`` over the same env fns returns (observations, rewards,
flags, the stacked ``info`` with ``_key`` masks and dtypes, autoresets), and is faster than
Gymnasium's ``AsyncVectorEnv`` because a vector step costs one round trip per *worker*,
not per env: on a small VM that round trip (~90 us) costs as much as a short env step, so
one env per worker cannot beat one env in-process (see ``docs/architecture.md``, "Vector
envs", for the figures). Give it ``num_envs`` several times ``workers`` (e.g. 8 over 2).

``import netarena_gym`` registers :func:`vector_entry_point` for every env id, so
``gym.make_vec("NetArena-Routing-v0", num_envs=8)`` (the default mode, ``vectorization_mode
=None``, then picks ``"vector_entry_point"``) gives this env with ``info="full"`` (what
``gym.make`` and ``vectorization_mode="sync"`` give); pass ``info="lean"`` and ``workers=``
as keyword arguments. ``"sync"`` and ``"async"`` still give Gymnasium's own classes.

Shared memory holds array observations (``Box``, ``Discrete``, ``MultiBinary``,
``MultiDiscrete``, or a ``Dict`` of them); text goes through the pipe. Gymnasium's shared
memory keeps a ``Text`` space as ``max_length`` int32 per env and its ``AsyncVectorEnv``
decodes that buffer only once, when built, so with ``shared_memory=True`` it returns the
same padding at every step, never the env's text (give it ``shared_memory=False``).

Parts: :mod:`~netarena_gym.vector.packing` (how ``info`` travels and is stacked),
:mod:`~netarena_gym.vector.batched` (the batched env),
:mod:`~netarena_gym.vector.batched_worker` (its worker process),
:mod:`~netarena_gym.vector.async_env` (:class:`NetArenaAsyncVectorEnv`, a subclass of
Gymnasium's ``AsyncVectorEnv`` with the packed protocol, one env per worker, kept for
``max_concurrency`` and for code that needs Gymnasium's own class).
"""
from __future__ import annotations

from typing import Callable

import gymnasium as gym

from netarena_gym.vector.async_env import NetArenaAsyncVectorEnv, netarena_worker
from netarena_gym.vector.batched import NetArenaBatchedVectorEnv, default_workers
from netarena_gym.vector.packing import (SCALAR_KEYS, pack_info, shares_memory, stack_packed,
                                         unpack_info)


def make_vec(env_id: str, num_envs: int = 2, *, workers: int | None = None,
             info: str = "lean", vector_kwargs: dict | None = None,
             **env_kwargs) -> NetArenaBatchedVectorEnv:
    """``num_envs`` copies of ``gym.make(env_id, info=info, **env_kwargs)`` in a
    :class:`NetArenaBatchedVectorEnv` of ``workers`` processes (default
    :func:`~netarena_gym.vector.batched.default_workers`), with ``info="lean"`` by default
    (``"full"`` gives every key at every step, at a cost); ``vector_kwargs`` go to the
    vector env's constructor (``shared_memory``, ``copy``, ``context``, ``daemon``,
    ``observation_mode``, ``autoreset_mode``)."""
    def make() -> gym.Env:
        return gym.make(env_id, info=info, **env_kwargs)
    return NetArenaBatchedVectorEnv([make] * num_envs, workers=workers, **(vector_kwargs or {}))


def vector_entry_point(env_id: str) -> Callable[..., NetArenaBatchedVectorEnv]:
    """The ``vector_entry_point`` registered for ``env_id``: ``gym.make_vec``'s call
    ``(num_envs=..., **kwargs)`` as :func:`make_vec` with ``info="full"`` by default."""
    def make(num_envs: int = 1, *, info: str = "full", **kwargs) -> NetArenaBatchedVectorEnv:
        return make_vec(env_id, num_envs, info=info, **kwargs)
    make.__name__ = make.__qualname__ = f"make_vec[{env_id}]"
    return make


# the registered entry points (``netarena_gym.ENV_IDS``; strings keep the import lazy)
routing_vec = vector_entry_point("NetArena-Routing-v0")
k8s_policy_vec = vector_entry_point("NetArena-K8sPolicy-v0")
capacity_planning_vec = vector_entry_point("NetArena-CapacityPlanning-v0")

__all__ = ["make_vec", "vector_entry_point", "NetArenaBatchedVectorEnv",
           "NetArenaAsyncVectorEnv", "default_workers", "netarena_worker", "pack_info",
           "unpack_info", "stack_packed", "shares_memory", "SCALAR_KEYS", "routing_vec",
           "k8s_policy_vec", "capacity_planning_vec"]
