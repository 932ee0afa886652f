"""The worker side of :class:`~netarena_gym.vector.batched.NetArenaBatchedVectorEnv`.

A worker process builds its contiguous slice of envs (:class:`WorkerEnvs`), checks their
spaces (:func:`check_spaces`) and then serves one command at a time from its pipe
(:func:`batched_worker`): ``reset``, ``step`` (``step-array``: the actions as an array's
bytes), ``call``, ``set_attr``, ``apply`` (a picklable callable run on each of some envs:
what :class:`~netarena_gym.train.sb3_vec.BatchedSB3VecEnv` needs for stable-baselines3's
``env_is_wrapped``) and ``close``. A step's reply packs the lean ``info`` keys of all its
envs into one column pack (:mod:`netarena_gym.vector.packing`); array observations go
into the shared buffer, others back through the pipe.
"""
from __future__ import annotations

import sys
import traceback
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium.spaces.utils import is_space_dtype_shape_equiv
from gymnasium.vector.utils import CloudpickleWrapper
from gymnasium.vector.vector_env import AutoresetMode

from netarena_gym.errors import NetArenaError
from netarena_gym.vector.packing import columns, pack_info, shared_writer


def call_attr(env: gym.Env, name: str, args: tuple = (), kwargs: dict | None = None) -> Any:
    """``env``'s attribute ``name`` through its wrappers (``get_wrapper_attr``), called with
    ``args`` and ``kwargs`` if it is callable (what ``VectorEnv.call`` does per env)."""
    attr = env.get_wrapper_attr(name)
    return attr(*args, **(kwargs or {})) if callable(attr) else attr


def get_attr(env: gym.Env, name: str) -> Any:
    """``env``'s attribute ``name`` through its wrappers, not called."""
    return env.get_wrapper_attr(name)


def set_attr(env: gym.Env, name: str, value: Any) -> None:
    """Set ``env``'s attribute ``name`` (``set_wrapper_attr``: on the wrapper or env that
    has it)."""
    env.set_wrapper_attr(name, value)


class WorkerEnvs:
    """A worker's slice of envs and their autoreset state (see :func:`batched_worker`)."""

    def __init__(self, envs: list[gym.Env], start: int, mode: AutoresetMode, write) -> None:
        self.envs, self.start, self.mode, self.write = envs, start, mode, write
        self.autoreset = [False] * len(envs)

    def emit(self, obs: Any, j: int, out: list | None) -> None:
        if out is None:
            self.write(self.start + j, obs)
        else:
            out.append(obs)

    def reset(self, calls: list) -> tuple:
        """``calls``: per env, ``(seed, options)`` or None (not reset)."""
        out = None if self.write else []
        infos = []
        for j, call in enumerate(calls):
            if call is not None:
                obs, info = self.envs[j].reset(seed=call[0], options=call[1])
                self.autoreset[j] = False
                self.emit(obs, j, out)
                infos.append((j, info))
            elif out is not None:
                out.append(None)
        return out, infos

    def step(self, actions: Sequence) -> tuple:
        out = None if self.write else []
        rewards, terms, truncs, packs, rests, finals, infos = [], [], [], [], [], [], []
        mode, auto = self.mode, self.autoreset
        for j, (env, action) in enumerate(zip(self.envs, actions)):
            if mode is AutoresetMode.NEXT_STEP and auto[j]:
                obs, info = env.reset()
                reward, term, trunc = 0.0, False, False
            else:
                obs, reward, term, trunc, info = env.step(action)
                if mode is AutoresetMode.SAME_STEP and (term or trunc):
                    finals.append((j, obs, info))
                    obs, info = env.reset()
            auto[j] = term or trunc
            rewards.append(reward)
            terms.append(term)
            truncs.append(trunc)
            packed, rest = pack_info(info)
            packs.append(packed)
            infos.append(info)
            if rest:
                rests.append((j, rest))
            self.emit(obs, j, out)
        col = columns(packs)
        return (rewards, terms, truncs, out, col,
                rests if col is not None else list(enumerate(infos)), finals)

    def call(self, name: str, args: tuple, kwargs: dict) -> list:
        if name in ("reset", "step", "close", "set_attr"):
            raise ValueError(f"Trying to call function `{name}` with `call`, "
                             f"use `{name}` directly instead.")
        return [call_attr(env, name, args, kwargs) for env in self.envs]

    def set_attr(self, name: str, values: Sequence) -> None:
        for env, value in zip(self.envs, values):
            set_attr(env, name, value)

    def apply(self, fn: Callable[[gym.Env], Any], local: Sequence[int]) -> list:
        """``(True, fn(env))`` for each env of the worker-local indices ``local`` (``fn``
        came through the pipe: a picklable callable, such as a module-level function or a
        ``functools.partial`` of one); ``(False, (type, message))`` where ``fn`` raised:
        the error is the caller's (an attribute the env lacks, say), so the worker serves
        on."""
        out = []
        for env in (self.envs[j] for j in local):
            try:
                out.append((True, fn(env)))
            except Exception as e:  # noqa: BLE001 - returned to the caller, raised there
                out.append((False, (type(e), str(e))))
        return out


def check_spaces(envs: list[gym.Env], mode: Any, single_obs: gym.Space,
                 single_act: gym.Space) -> None:
    """Raise ``RuntimeError`` (as Gymnasium's vector envs do) when an env's spaces do not
    batch with the vector env's single spaces."""
    for env in envs:
        same = (env.observation_space == single_obs if mode == "same"
                else is_space_dtype_shape_equiv(env.observation_space, single_obs))
        if not same:
            raise RuntimeError(f"observation_mode={mode!r}, but a sub-environment's "
                               f"observation space {env.observation_space} does not batch "
                               f"with {single_obs}")
        if env.action_space != single_act:
            raise RuntimeError(f"a sub-environment's action space {env.action_space} differs "
                               f"from the single action space {single_act}")


def batched_worker(start: int, env_fns: CloudpickleWrapper, pipe, parent_pipe, shared_memory,
                   num_envs: int, autoreset_mode: AutoresetMode, spaces_check: tuple) -> None:
    """The worker process of :class:`NetArenaBatchedVectorEnv`: builds its envs (global
    indices from ``start``), checks their spaces and replies ``(None, True)``, then serves
    ``reset``, ``step`` (``step-array``: the actions as an array's bytes), ``call``,
    ``set_attr``, ``apply`` and ``close``, each reply ``(data, True)``;
    an error replies ``((start, type, message, traceback), False)`` and ends the worker."""
    parent_pipe.close()
    envs: list[gym.Env] = []
    try:
        envs = [fn() for fn in env_fns.fn]
        check_spaces(envs, *spaces_check)
        write = (shared_writer(spaces_check[1], shared_memory, num_envs)
                 if shared_memory is not None else None)
        held = WorkerEnvs(envs, start, autoreset_mode, write)
        pipe.send((None, True))
        while True:
            command, data = pipe.recv()
            if command == "step":
                pipe.send((held.step(data), True))
            elif command == "step-array":  # an array's bytes, dtype and shape
                actions = np.frombuffer(data[0], dtype=data[1]).reshape(data[2])
                pipe.send((held.step(actions), True))
            elif command == "reset":
                pipe.send((held.reset(data), True))
            elif command == "call":
                pipe.send((held.call(*data), True))
            elif command == "set_attr":
                pipe.send((held.set_attr(*data), True))
            elif command == "apply":
                pipe.send((held.apply(*data), True))
            elif command == "close":
                pipe.send((None, True))
                break
            else:
                raise RuntimeError(f"Received unknown command `{command}`.")
    except (KeyboardInterrupt, Exception):
        etype, value, _ = sys.exc_info()
        trace = traceback.format_exc()
        try:
            pipe.send(((start, etype, str(value), trace), False))
        except Exception:  # an exception type that does not pickle
            pipe.send(((start, NetArenaError, f"{etype.__name__}: {value}", trace), False))
    finally:
        for env in envs:
            env.close()


__all__ = ["WorkerEnvs", "batched_worker", "check_spaces", "call_attr", "get_attr", "set_attr"]
