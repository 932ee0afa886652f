"""Gymnasium's ``AsyncVectorEnv`` with a leaner worker protocol, one env per worker.

(:func:`netarena_gym.vector.make_vec` gives the batched env of
:mod:`netarena_gym.vector.batched` instead, several envs per worker; this class stays for
``max_concurrency`` and code that wants Gymnasium's own class.) Mirrors ``gymnasium.vector.AsyncVectorEnv`` (Gymnasium 1.4's worker protocol): one worker process per env,
commands over a pipe, observations through shared memory, next-step autoreset.
:class:`NetArenaAsyncVectorEnv` *is* that class (a subclass, passed its own ``worker=``),
and returns what it returns, with two changes measured to matter (see
``docs/architecture.md``, "Vector envs"):

* The step reply is packed. The lean ``info`` keys (:data:`~netarena_gym.core.info.LEAN_KEYS`,
  present at every step of every NetArena env) travel as one tuple of plain values and the
  action mask as bytes, and the main process stacks them into the arrays Gymnasium's
  ``_add_info`` makes (same keys, ``_key`` masks, dtypes, nested ``reward_components``)
  with one numpy call per key; only the keys beyond those (the episode keys of a full or
  a boundary ``info``) go through ``_add_info``. Observations are written into shared
  memory through views made once per worker, not looked up per call.
* Text observations come through the pipe. Gymnasium's shared memory holds a ``Text``
  space as ``max_length`` int32 per env and its ``AsyncVectorEnv`` decodes it once, when
  it is built, so with ``shared_memory=True`` it returns that first decoding (padding, never
  the env's text) at every step. Here array spaces (``Box``, ``Discrete``, ``MultiBinary``,
  ``MultiDiscrete``, or a ``Dict`` of them) use shared memory and any other space the pipe.

Left out: ``autoreset_mode="SameStep"``, which gets Gymnasium's own worker and step.
``max_concurrency`` is passed to Gymnasium's class, so it needs a Gymnasium that has it
(1.4 does, 1.1 does not); the rest works from Gymnasium 1.1 (``AutoresetMode``, the
``reset-noop`` command), the version ``pyproject.toml`` asks for.
"""
from __future__ import annotations

import multiprocessing
import sys
import traceback
from typing import Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium.error import NoAsyncCallError
from gymnasium.vector import AsyncVectorEnv
from gymnasium.vector.async_vector_env import AsyncState
from gymnasium.spaces.utils import is_space_dtype_shape_equiv
from gymnasium.vector.utils import concatenate, create_empty_array
from gymnasium.vector.vector_env import AutoresetMode

from netarena_gym.vector.packing import (buffer_envs, copy_observations, pack_info,
                                         shared_writer, shares_memory, stack_packed,
                                         unpack_info)

def netarena_worker(index: int, env_fn: Callable, pipe, parent_pipe, shared_memory,
                    error_queue, autoreset_mode: AutoresetMode, semaphore=None) -> None:
    """The worker process of :class:`NetArenaAsyncVectorEnv`: Gymnasium's worker protocol
    (commands ``reset``, ``reset-noop``, ``step``, ``close``, ``_call``, ``_setattr``,
    ``_check_spaces``; errors onto ``error_queue``), with a step reply of
    ``(observation or None, reward, terminated, truncated, (packed, rest))``
    (:func:`~netarena_gym.vector.packing.pack_info`), observations written through
    :func:`~netarena_gym.vector.packing.shared_writer` when
    ``shared_memory`` is given, and next-step or no autoreset."""
    env = env_fn()
    obs_space, act_space = env.observation_space, env.action_space
    parent_pipe.close()
    write = None
    autoreset = False
    last_obs = None  # what a ``reset-noop`` sends back when observations use the pipe
    try:
        if shared_memory and shares_memory(obs_space):
            write = shared_writer(obs_space, shared_memory, buffer_envs(obs_space, shared_memory))
        while True:
            command, data = pipe.recv()
            held = semaphore is not None and command in ("reset", "step")
            if held:
                semaphore.acquire()
            try:
                if command in ("reset", "step"):
                    if command == "reset":
                        obs, info = env.reset(**data)
                        autoreset, reply = False, (info,)
                    else:
                        if autoreset:
                            obs, info = env.reset()
                            reward, terminated, truncated = 0, False, False
                        else:
                            obs, reward, terminated, truncated, info = env.step(data)
                        if autoreset_mode == AutoresetMode.NEXT_STEP:
                            autoreset = terminated or truncated
                        reply = (reward, terminated, truncated, pack_info(info))
                    if write is not None:
                        write(index, obs)
                        obs = None
                    last_obs = obs
                    if held:  # released before the send, which waits for the main process
                        held = False
                        semaphore.release()
                    pipe.send(((obs, *reply), True))
                elif command == "reset-noop":  # as Gymnasium's: the env's last observation
                    pipe.send(((last_obs, {}), True))
                elif command == "close":
                    pipe.send((None, True))
                    break
                elif command == "_call":
                    name, args, kwargs = data
                    if name in ("reset", "step", "close", "_setattr", "_check_spaces"):
                        raise ValueError(f"Trying to call function `{name}` with `call`, "
                                         f"use `{name}` directly instead.")
                    attr = env.get_wrapper_attr(name)
                    pipe.send((attr(*args, **kwargs) if callable(attr) else attr, True))
                elif command == "_setattr":
                    name, value = data
                    env.set_wrapper_attr(name, value)
                    pipe.send((None, True))
                elif command == "_check_spaces":
                    mode, single_obs, single_act = data
                    same = (single_obs == obs_space if mode == "same"
                            else is_space_dtype_shape_equiv(single_obs, obs_space))
                    pipe.send(((same, single_act == act_space), True))
                else:
                    raise RuntimeError(f"Received unknown command `{command}`.")
            finally:
                if held:
                    semaphore.release()
    except (KeyboardInterrupt, Exception):
        error_type, error_message, _ = sys.exc_info()
        error_queue.put((index, error_type, error_message, traceback.format_exc()))
        pipe.send((None, False))
    finally:
        env.close()


class NetArenaAsyncVectorEnv(AsyncVectorEnv):
    """Gymnasium's ``AsyncVectorEnv`` (a subclass: same constructor, same returns) with
    :func:`netarena_worker` and a step that stacks the packed lean ``info`` keys in one
    numpy call per key. See the module docstring for what differs and why.

    ``shared_memory=True`` (default) puts array observations in shared memory; a ``Text``
    (or other) observation space goes through the pipe, as with ``shared_memory=False``.
    ``autoreset_mode="SameStep"`` falls back to Gymnasium's own worker and step.
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], shared_memory: bool = True,
                 copy: bool = True, context: str | None = None, daemon: bool = True,
                 observation_mode: str | gym.Space = "same",
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
                 max_concurrency: int | None = None) -> None:
        mode = AutoresetMode(autoreset_mode)
        self._packed = mode != AutoresetMode.SAME_STEP
        limit = {} if max_concurrency is None else {"max_concurrency": max_concurrency}
        super().__init__(env_fns, shared_memory=shared_memory, copy=copy, context=context,
                         daemon=daemon, worker=netarena_worker if self._packed else None,
                         observation_mode=observation_mode, autoreset_mode=mode, **limit)
        if self._packed and shared_memory and not shares_memory(self.single_observation_space):
            self.shared_memory = False  # the workers send these observations through the pipe
            self.observations = create_empty_array(self.single_observation_space,
                                                   n=self.num_envs, fn=np.zeros)

    def step_wait(self, timeout: float | None = None):
        """As Gymnasium's ``step_wait``, reading the packed step replies."""
        if not self._packed:
            return super().step_wait(timeout)
        self._assert_is_running()
        if self._state != AsyncState.WAITING_STEP:
            raise NoAsyncCallError("Calling `step_wait` without any prior call to `step_async`.",
                                   AsyncState.WAITING_STEP.value)
        if not self._poll_pipe_envs(timeout):
            self._state = AsyncState.DEFAULT
            raise multiprocessing.TimeoutError(
                f"The call to `step_wait` has timed out after {timeout} second(s).")
        replies, successes = [], []
        for pipe in self.parent_pipes:
            reply, ok = pipe.recv()
            replies.append(reply)
            successes.append(ok)
        self._raise_if_errors(successes)
        observations, rewards, terminations, truncations, infos_in = zip(*replies)
        infos = self._stack_infos(infos_in)
        if not self.shared_memory:
            self.observations = concatenate(self.single_observation_space, observations,
                                            self.observations)
        self._state = AsyncState.DEFAULT
        return (copy_observations(self.observations) if self.copy else self.observations,
                np.array(rewards, dtype=np.float64), np.array(terminations, dtype=np.bool_),
                np.array(truncations, dtype=np.bool_), infos)

    def _stack_infos(self, packed_infos: Sequence[tuple[tuple | None, dict]]) -> dict:
        packs = [p for p, _ in packed_infos]
        infos = None
        if all(p is not None for p in packs):
            infos = stack_packed(packs)
        if infos is None:  # not every info has the lean keys alike: Gymnasium's way
            infos = {}
            for i, (p, rest) in enumerate(packed_infos):
                infos = self._add_info(infos, unpack_info(p, rest), i)
            return infos
        for i, (_, rest) in enumerate(packed_infos):
            if rest:
                infos = self._add_info(infos, rest, i)
        return infos


__all__ = ["NetArenaAsyncVectorEnv", "netarena_worker"]
