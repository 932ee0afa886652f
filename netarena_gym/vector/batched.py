"""A vector env whose worker processes each step several envs per command.

Mirrors ``gymnasium.vector.SyncVectorEnv`` (Gymnasium 1.4) in what it returns: the same
observations, rewards (float64), terminations and truncations (bool), the same stacked
``info`` (``_key`` masks and dtypes as ``VectorEnv._add_info`` makes them), the same
autoreset modes (``NextStep``, ``SameStep`` with ``final_obs`` / ``final_info``,
``Disabled``) and ``options["reset_mask"]`` partial resets, and ``call``, ``get_attr``,
``set_attr`` and ``render``; beside them, :meth:`NetArenaBatchedVectorEnv.apply` runs a
picklable callable on some envs in their workers. The envs run in ``workers`` processes as
``gymnasium.vector.AsyncVectorEnv``'s do, but each worker holds a contiguous slice of
``num_envs / workers`` envs and steps all of them per command, so one pipe round trip
(which on a small VM costs as much as a short env step) is paid per worker per vector step,
not per env:

* one command per worker: its slice of the actions;
* one reply per worker: rewards and flags as lists, the lean ``info`` keys of its envs as
  one column pack (:func:`~netarena_gym.vector.packing.columns`), the other keys (episode
  keys at a boundary, or all of a full ``info``) as dicts; the main process joins the
  workers' columns and stacks each key with one numpy call;
* observations of array spaces through one shared buffer (each worker writes its envs'
  rows), any other space (``Text``) through the pipe.

Worker errors (in an env's constructor, ``reset``, ``step``, ``call``...) come back as the
same exception type in the main process, after every worker's reply is read, and close the
vector env; a worker that dies raises :class:`~netarena_gym.errors.NetArenaError`.
``close()`` ends the processes it started (``terminate`` after ``timeout``).

Left out: ``step_async`` / ``step_wait`` (``step`` waits), ``max_concurrency``, a custom
``worker=`` (see :class:`netarena_gym.vector.async_env.NetArenaAsyncVectorEnv`).
"""
from __future__ import annotations

import multiprocessing
import os
from itertools import chain
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import logger
from gymnasium.error import ClosedEnvironmentError
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import (CloudpickleWrapper, batch_differing_spaces, batch_space,
                                    concatenate, create_empty_array, create_shared_memory,
                                    iterate, read_from_shared_memory)
from gymnasium.vector.vector_env import AutoresetMode

from netarena_gym.errors import InvalidConfig, NetArenaError
from netarena_gym.vector.batched_worker import batched_worker, check_spaces
from netarena_gym.vector.packing import (add_infos, column_infos, copy_observations,
                                         merge_columns, shares_memory, stack_columns)

#: seconds the other workers get to close their envs after a worker's error
CLOSE_AFTER_ERROR_S = 10.0
_ARRAY_ACTIONS = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiBinary,
                  gym.spaces.MultiDiscrete)


def default_workers(num_envs: int) -> int:
    """``min(num_envs, os.cpu_count())``: one worker per core, at most one per env."""
    return max(1, min(num_envs, os.cpu_count() or 1))


def slices(num_envs: int, workers: int) -> list[tuple[int, int]]:
    """The contiguous ``[start, stop)`` env ranges of ``workers`` workers (sizes differ by
    at most one)."""
    bounds = [w * num_envs // workers for w in range(workers + 1)]
    return list(zip(bounds, bounds[1:]))


class NetArenaBatchedVectorEnv(VectorEnv):
    """``num_envs`` envs stepped by ``workers`` processes (default
    :func:`default_workers`), each worker a contiguous slice, one command and one reply per
    worker per step; returns what ``gymnasium.vector.SyncVectorEnv`` over the same
    ``env_fns`` returns. See the module docstring.

    ``shared_memory=True`` (default) puts array observations in one shared buffer; a
    ``Text`` (or other) observation space goes through the pipe. ``copy``, ``context``,
    ``daemon``, ``observation_mode`` and ``autoreset_mode`` are Gymnasium's options.
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], *, workers: int | None = None,
                 shared_memory: bool = True, copy: bool = True, context: str | None = None,
                 daemon: bool = True, observation_mode: str | tuple = "same",
                 autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP) -> None:
        self.closed = True  # until the workers run (``__del__`` reads it)
        n = len(env_fns)
        workers = default_workers(n) if workers is None else workers
        if n < 1 or not 1 <= workers <= n:
            raise InvalidConfig(f"need 1 <= workers <= num_envs, got workers={workers} "
                                f"for {n} envs")
        self.env_fns, self.num_envs, self.workers = env_fns, n, workers
        self.copy, self.observation_mode = copy, observation_mode
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self._batch_spaces(env_fns)
        self.shared_memory = bool(shared_memory) and shares_memory(self.single_observation_space)
        ctx = multiprocessing.get_context(context)
        buffer = None
        if self.shared_memory:
            buffer = create_shared_memory(self.single_observation_space, n=n, ctx=ctx)
            self._observations = read_from_shared_memory(self.single_observation_space,
                                                         buffer, n=n)
        else:
            self._observations = create_empty_array(self.single_observation_space, n=n,
                                                    fn=np.zeros)
        self._env_obs: list = [None] * n
        self._slices = slices(n, workers)
        self._array_actions = isinstance(self.single_action_space, _ARRAY_ACTIONS)
        check = (observation_mode if isinstance(observation_mode, str) else "custom",
                 self.single_observation_space, self.single_action_space)
        self.parent_pipes, self.processes = [], []
        self.closed = False
        for w, (a, b) in enumerate(self._slices):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=batched_worker, name=f"Worker<{type(self).__name__}>-{w}",
                               args=(a, CloudpickleWrapper(list(env_fns[a:b])), child, parent,
                                     buffer, n, self.autoreset_mode, check), daemon=daemon)
            self.parent_pipes.append(parent)
            self.processes.append(proc)
            proc.start()
            child.close()
        self._gather()

    def _batch_spaces(self, env_fns: Sequence[Callable[[], gym.Env]]) -> None:
        """Spaces, ``metadata`` and ``render_mode`` from one env built here (as Gymnasium's
        ``AsyncVectorEnv`` does), and the batched spaces for ``observation_mode``."""
        dummy = env_fns[0]()
        try:
            self.metadata = dict(dummy.metadata)
            self.metadata["autoreset_mode"] = self.autoreset_mode
            self.render_mode = dummy.render_mode
            self.single_action_space = dummy.action_space
            self.action_space = batch_space(self.single_action_space, self.num_envs)
            mode = self.observation_mode
            if isinstance(mode, tuple) and len(mode) == 2:
                self.observation_space, self.single_observation_space = mode
            elif mode == "same":
                self.single_observation_space = dummy.observation_space
                self.observation_space = batch_space(dummy.observation_space, self.num_envs)
            elif mode == "different":
                env_spaces = [dummy.observation_space]
                for fn in env_fns[1:]:
                    env = fn()
                    env_spaces.append(env.observation_space)
                    env.close()
                self.single_observation_space = env_spaces[0]
                self.observation_space = batch_differing_spaces(env_spaces)
            else:
                raise ValueError(f"Invalid `observation_mode`, expected 'same', 'different' or "
                                 f"a tuple of batch and single observation space, got {mode}")
        finally:
            dummy.close()

    @property
    def np_random_seed(self) -> tuple[int, ...]:
        """The wrapped envs' ``np_random_seed``."""
        return self.get_attr("np_random_seed")

    @property
    def np_random(self) -> tuple[np.random.Generator, ...]:
        """The wrapped envs' random generators (copies: they live in the workers)."""
        return self.get_attr("np_random")

    def reset(self, *, seed: int | list[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """As ``SyncVectorEnv.reset``: ``seed`` None, an int (``seed + i`` for env ``i``)
        or one per env; ``options["reset_mask"]`` resets only the envs it marks."""
        self._assert_is_running()
        n = self.num_envs
        if seed is None:
            seed = [None] * n
        elif isinstance(seed, int):
            seed = [seed + i for i in range(n)]
        if len(seed) != n:
            raise ValueError(f"If seeds are passed as a list the length must match "
                             f"num_envs={n} but got length={len(seed)}.")
        mask = np.ones(n, dtype=np.bool_)
        if options is not None and "reset_mask" in options:
            options = dict(options)
            mask = check_reset_mask(options.pop("reset_mask"), n)
        calls = [(s, options) if m else None for s, m in zip(seed, mask)]
        entries = []
        replies = self._ask("reset", [calls[a:b] for a, b in self._slices])
        for (a, _), (obs, env_infos) in zip(self._slices, replies):
            entries += [(a + j, info) for j, info in env_infos]
            if obs is not None:
                self._env_obs[a:a + len(obs)] = [o if m else old for o, m, old in
                                                 zip(obs, mask[a:], self._env_obs[a:])]
        return self._read_observations(), add_infos({}, entries, n)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """As ``SyncVectorEnv.step``: one command per worker, one reply each."""
        obs, rewards, terms, truncs, replies = self._step(actions)
        return obs, rewards, terms, truncs, self._stack_infos(replies)

    def step_infos(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray,
                                                list[dict], list[tuple[int, Any, dict]]]:
        """:meth:`step` with the infos unstacked: ``(obs, rewards, terminations,
        truncations, infos, finals)``, ``infos`` one dict per env (what it returned; under
        ``SameStep``, for an env whose episode ended, its reset's), ``finals`` the ``(index,
        final observation, final info)`` of the envs whose episodes ended at this step under
        ``SameStep`` (empty otherwise). What a caller that wants per-env dicts, such as
        stable-baselines3's ``VecEnv``, reads without stacking and unstacking."""
        obs, rewards, terms, truncs, replies = self._step(actions)
        infos: list[dict] = []
        finals: list[tuple[int, Any, dict]] = []
        for (a, _), (_, _, _, _, col, env_infos, ends) in zip(self._slices, replies):
            finals += [(a + j, o, info) for j, o, info in ends]
            if col is None:
                infos += [info for _, info in env_infos]
                continue
            lean = column_infos(col)
            for j, rest in env_infos:
                lean[j].update(rest)
            infos += lean
        return obs, rewards, terms, truncs, infos, finals

    def _step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, list]:
        """Send the actions, read the replies: observations, rewards, flags and the raw
        replies (their infos not yet stacked)."""
        self._assert_is_running()
        if not (self._array_actions and hasattr(actions, "__getitem__")):
            actions = list(iterate(self.action_space, actions))
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} actions for {self.num_envs} envs")
        if type(actions) is np.ndarray and actions.dtype.kind in "biuf":
            # as bytes: cheaper to pickle than an array (numbers only: an object array's
            # bytes are pointers, which mean nothing in the worker)
            replies = self._ask("step-array", [(actions[a:b].tobytes(), actions.dtype.str,
                                                actions[a:b].shape) for a, b in self._slices])
        else:
            replies = self._ask("step", [actions[a:b] for a, b in self._slices])
        rewards = np.array(list(chain.from_iterable(r[0] for r in replies)), dtype=np.float64)
        terms = np.array(list(chain.from_iterable(r[1] for r in replies)), dtype=np.bool_)
        truncs = np.array(list(chain.from_iterable(r[2] for r in replies)), dtype=np.bool_)
        if not self.shared_memory:
            self._env_obs = list(chain.from_iterable(r[3] for r in replies))
        return self._read_observations(), rewards, terms, truncs, replies

    def _stack_infos(self, replies: list[tuple]) -> dict:
        """The vector ``info`` of a step: the workers' lean columns stacked per key when
        they all agree, the other keys (and the ``final_obs`` / ``final_info`` of
        ``SameStep``) through :func:`~netarena_gym.vector.packing.add_infos`; when the
        columns disagree, every env's whole ``info`` through ``add_infos``."""
        merged = merge_columns([r[4] for r in replies])
        infos: dict[str, Any] = {} if merged is None else stack_columns(merged)
        entries, finals = [], []
        for (a, _), (_, _, _, _, col, env_infos, ends) in zip(self._slices, replies):
            finals += [(a + j, {"final_obs": obs, "final_info": info}) for j, obs, info in ends]
            if merged is None and col is not None:  # lean keys from the columns, then the rest
                rests = dict(env_infos)
                entries += [(a + j, {**lean, **rests.get(j, {})})
                            for j, lean in enumerate(column_infos(col))]
            else:
                entries += [(a + j, info) for j, info in env_infos]
        for part in (finals, entries):
            if part:
                infos = add_infos(infos, part, self.num_envs)
        return infos

    def _read_observations(self) -> Any:
        if not self.shared_memory:
            self._observations = concatenate(self.single_observation_space, self._env_obs,
                                             self._observations)
        return copy_observations(self._observations) if self.copy else self._observations

    def render(self) -> tuple | None:
        """Each env's ``render()``."""
        return self.call("render")

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Each env's ``name(*args, **kwargs)``, or its attribute ``name`` if not callable."""
        self._assert_is_running()
        return tuple(chain.from_iterable(self._ask("call", [(name, args, kwargs)] * self.workers)))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """Each env's attribute ``name``."""
        return self.call(name)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        """Set attribute ``name`` of each env: ``values`` one per env, or one for all."""
        self._assert_is_running()
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError("Values must be a list or tuple with length equal to the number "
                             f"of environments. Got `{len(values)}` values for "
                             f"{self.num_envs} environments.")
        self._ask("set_attr", [(name, list(values[a:b])) for a, b in self._slices])

    def apply(self, fn: Callable[[gym.Env], Any],
              indices: Sequence[int] | None = None) -> tuple[Any, ...]:
        """``fn(env)`` in the worker of each env of ``indices`` (None: every env), in the
        order of ``indices``; ``fn`` must pickle (a module-level function, or a
        ``functools.partial`` of one, such as
        :func:`~netarena_gym.vector.batched_worker.call_attr`). An error ``fn`` raises is
        raised here, as its own type where that pickles, and the vector env stays open
        (``fn`` is the caller's code, not the env's step)."""
        self._assert_is_running()
        order = list(range(self.num_envs)) if indices is None else [int(i) for i in indices]
        if any(not 0 <= i < self.num_envs for i in order):
            raise IndexError(f"env indices {order} out of range for {self.num_envs} envs")
        asked: list[list[int]] = [[] for _ in self._slices]
        owner = []
        for i in order:
            w = next(w for w, (a, b) in enumerate(self._slices) if a <= i < b)
            owner.append((w, len(asked[w])))
            asked[w].append(i - self._slices[w][0])
        replies = self._ask_some("apply", {w: (fn, local) for w, local in enumerate(asked)
                                           if local})
        results = [replies[w][k] for w, k in owner]
        for ok, value in results:
            if not ok:
                raise worker_error(*value)
        return tuple(value for _, value in results)

    def _ask(self, command: str, data: list) -> list:
        """Send ``(command, data[w])`` to each worker ``w`` and :meth:`_gather` the replies
        (a worker that is gone is found there, by its closed pipe)."""
        return list(self._ask_some(command, dict(enumerate(data))).values())

    def _ask_some(self, command: str, data: dict[int, Any]) -> dict[int, Any]:
        """:meth:`_ask` of the workers ``w`` of ``data`` only; their replies by worker."""
        for w, part in data.items():
            try:
                self.parent_pipes[w].send((command, part))
            except (BrokenPipeError, OSError):
                pass
        return dict(zip(data, self._gather(list(data))))

    def _gather(self, which: list[int] | None = None) -> list:
        """The reply of every worker of ``which`` (None: all), in order; raises a worker's
        error (after reading every reply, and closing this env) as Gymnasium's
        ``AsyncVectorEnv`` does."""
        replies, errors = [], []
        for w in range(len(self.parent_pipes)) if which is None else which:
            pipe = self.parent_pipes[w]
            try:
                data, ok = pipe.recv()
            except (EOFError, OSError):
                proc = self.processes[w]
                proc.join(1)
                data, ok = (self._slices[w][0], NetArenaError,
                            f"worker {w} (envs {self._slices[w]}) exited with code "
                            f"{proc.exitcode} without a reply", ""), False
            replies.append(data)
            if not ok:
                errors.append(data)
        if errors:
            self.close(timeout=CLOSE_AFTER_ERROR_S)
            for start, _, _, trace in errors:
                logger.error(f"Received the following error from the worker of envs from "
                             f"{start} - Shutting it down\n{trace}")
            _, etype, message, _ = errors[-1]
            raise worker_error(etype, message)
        return replies

    def _assert_is_running(self) -> None:
        if self.closed:
            raise ClosedEnvironmentError(
                f"Trying to operate on `{type(self).__name__}`, after a call to `close()`.")

    def close_extras(self, timeout: float | None = None, terminate: bool = False) -> None:
        """End the workers: ask each to close its envs and wait (``timeout`` seconds, None
        for no limit), then terminate any still running (at once when ``terminate``)."""
        if not terminate:
            for pipe in self.parent_pipes:
                try:
                    pipe.send(("close", None))
                except (BrokenPipeError, OSError):
                    pass
            for pipe in self.parent_pipes:
                try:
                    if pipe.poll(timeout):
                        pipe.recv()
                except (EOFError, OSError):
                    pass
        for proc in self.processes:
            if terminate:
                proc.terminate()
            proc.join(0 if terminate else timeout)
            if proc.is_alive():
                proc.terminate()
            proc.join()
        for pipe in self.parent_pipes:
            pipe.close()

    def __del__(self) -> None:
        if not getattr(self, "closed", True):
            self.close(terminate=True)


def worker_error(etype: type, message: str) -> Exception:
    """A worker's error rebuilt here: ``etype(message)``, or a
    :class:`~netarena_gym.errors.NetArenaError` naming the type where that cannot be built."""
    try:
        return etype(message)
    except Exception:
        return NetArenaError(f"{etype.__name__}: {message}")


def check_reset_mask(mask: Any, n: int) -> np.ndarray:
    """``options["reset_mask"]`` checked as Gymnasium's vector envs check it."""
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
    if mask.shape != (n,):
        raise ValueError(f"`options['reset_mask']` must have shape `({n},)`, got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
    if not np.any(mask):
        raise ValueError("`options['reset_mask']` must contain a boolean array with at least "
                         f"one True value, got reset_mask={mask}")
    return mask


__all__ = ["NetArenaBatchedVectorEnv", "batched_worker", "default_workers", "slices",
           "check_spaces", "check_reset_mask", "worker_error"]
