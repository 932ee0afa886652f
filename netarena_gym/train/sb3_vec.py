"""stable-baselines3's ``VecEnv`` over NetArena's batched vector env.

Mirrors ``stable_baselines3.common.vec_env.DummyVecEnv`` (stable-baselines3 2.x): the same
observations (a dict of stacked arrays for a ``Dict`` space), ``float32`` rewards, ``dones``
(terminated or truncated), one ``info`` dict per env with ``TimeLimit.truncated`` and, when
an episode ends, ``terminal_observation`` (and the step's own ``info``, the reset's in
``reset_infos``), ``seed`` / ``set_options`` for the next ``reset``, ``get_attr``,
``set_attr``, ``env_method`` and ``env_is_wrapped`` with ``indices``. Fed the same env fns
and seeds, it returns what ``DummyVecEnv`` returns, step for step, so a seeded training run
learns the same policy on either (``tests/training/test_sb3_vec.py``).

The envs run in the worker processes of a
:class:`~netarena_gym.vector.batched.NetArenaBatchedVectorEnv` (``SameStep`` autoreset:
the step that ends an episode resets it, as SB3 does), several envs per worker and one pipe
round trip per worker per step, where ``SubprocVecEnv`` spends one per env (on a small
machine that round trip costs as much as an env step: with 8 envs on 2 cores
``SubprocVecEnv`` trains about half as fast as ``DummyVecEnv``). The env steps leave the
main process, which then only runs the policy and the updates; docs/training.md, "Vector
envs for PPO", has the figures. Infos come back as each env's own dict
(:meth:`~netarena_gym.vector.batched.NetArenaBatchedVectorEnv.step_infos`), never stacked.
``env_method("action_masks")`` over every env, which sb3-contrib's
``MaskablePPO`` calls before each step, is answered from the ``action_mask`` of the last
observation when the observation has one (the env's mask at that moment, as
``action_masks()`` returns it), not by another round trip.

Left out: ``render`` of ``"human"`` windows (``get_images`` returns each env's
``render()``), and ``step_async`` overlapping the policy (``step_wait`` does the step).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from stable_baselines3.common.env_util import is_wrapped as sb3_is_wrapped
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices

from netarena_gym.vector.batched import NetArenaBatchedVectorEnv
from netarena_gym.vector.batched_worker import call_attr, get_attr, set_attr

MASKS = "action_masks"
MASK_KEY = "action_mask"


def is_wrapped(env: gym.Env, wrapper_class: type) -> bool:
    """Whether ``wrapper_class`` wraps ``env`` (run in the worker)."""
    return sb3_is_wrapped(env, wrapper_class)


def unstack(infos: dict, i: int) -> dict:
    """Env ``i``'s ``info`` from a vector ``info`` (``_key`` masks, nested dicts)."""
    out = {}
    for key, value in infos.items():
        if key.startswith("_"):
            continue
        mask = infos.get("_" + key)
        if mask is not None and not mask[i]:
            continue
        out[key] = unstack(value, i) if isinstance(value, dict) else _item(value[i])
    return out


def _item(value: Any) -> Any:
    """A numpy scalar as the Python value the env gave (arrays stay arrays)."""
    return value.item() if isinstance(value, np.generic) else value


class BatchedSB3VecEnv(VecEnv):
    """``len(env_fns)`` envs over ``workers`` processes (default: one per core, at most one
    per env) as a stable-baselines3 ``VecEnv``; see the module docstring. ``context`` is the
    multiprocessing start method (default: the platform's)."""

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], *, workers: int | None = None,
                 context: str | None = None) -> None:
        self.venv = NetArenaBatchedVectorEnv(list(env_fns), workers=workers, context=context,
                                             autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
        space = self.venv.single_observation_space
        self._dict = isinstance(space, spaces.Dict)
        self._has_masks = self._dict and MASK_KEY in space.spaces
        self._obs: Any = None
        self._actions: np.ndarray | None = None
        super().__init__(len(env_fns), space, self.venv.single_action_space)

    @property
    def workers(self) -> int:
        return self.venv.workers

    # ------------------------------------------------------------------ VecEnv API
    def reset(self):
        seeds = [None if s is None else int(s) for s in self._seeds]
        options = [o or None for o in self._options]
        if any(o is not None for o in options):  # one call per distinct option set
            obs = infos = None
            for opt in {repr(o): o for o in options}.values():
                mask = np.array([o == opt for o in options], dtype=np.bool_)
                kw = {"reset_mask": mask} if opt is None else {**opt, "reset_mask": mask}
                obs, infos = self.venv.reset(seed=seeds, options=kw)
                for i in np.flatnonzero(mask):
                    self.reset_infos[i] = unstack(infos, i)
        else:
            obs, infos = self.venv.reset(seed=seeds)
            self.reset_infos = [unstack(infos, i) for i in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        self._obs = obs
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):
        obs, rewards, terms, truncs, infos, finals = self.venv.step_infos(self._actions)
        dones = terms | truncs
        for i, final_obs, final_info in finals:  # the step's info; the reset's kept aside
            self.reset_infos[i] = infos[i]
            final_info["TimeLimit.truncated"] = bool(truncs[i] and not terms[i])
            final_info["terminal_observation"] = final_obs
            infos[i] = final_info
        for i in np.flatnonzero(~dones):
            infos[i]["TimeLimit.truncated"] = False
        self._obs = obs
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return list(self.venv.apply(functools.partial(get_attr, name=attr_name),
                                    self._indices(indices)))

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        self.venv.apply(functools.partial(set_attr, name=attr_name, value=value),
                        self._indices(indices))

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None,
                   **method_kwargs) -> list[Any]:
        if (method_name == MASKS and indices is None and not method_args and not method_kwargs
                and self._has_masks and self._obs is not None):
            return list(self._obs[MASK_KEY].astype(bool))
        return list(self.venv.apply(functools.partial(call_attr, name=method_name,
                                                      args=method_args, kwargs=method_kwargs),
                                    self._indices(indices)))

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return list(self.venv.apply(functools.partial(is_wrapped, wrapper_class=wrapper_class),
                                    self._indices(indices)))

    def get_images(self) -> Sequence[np.ndarray | None]:
        return list(self.venv.call("render"))

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        return list(self._get_indices(indices))


__all__ = ["BatchedSB3VecEnv", "unstack", "is_wrapped"]
