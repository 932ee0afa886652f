"""Session envs on Ray actors: ``SessionManager(..., make=ray_env_factory(address))``.

Each session's env lives in its own Ray actor (``num_cpus=1``, plus the resources the
backend needs: Mininet asks for ``netarena_root``, as in ``netarena-gym eval``), so a
server's sessions spread over a cluster's nodes while the server keeps the protocol. The
proxy offers what :class:`~netarena_gym.serve.sessions.Session` uses of an env:
``reset``, ``step``, ``render``, ``close`` and ``unwrapped.interface``, plus the actor's
``node_id`` and its real backend's ``instance`` (Mininet run id, K8s namespace). ``close`` closes the
env in the actor (real backends clean up there) and then ends the actor.
Left out: actor restarts (a dead actor is an error of that session, reported as such).
"""
from __future__ import annotations

import os
from typing import Any, Callable

import gymnasium as gym

from netarena_gym.errors import require


class EnvActor:
    """Holds one env in a Ray actor process."""

    def __init__(self, env_id: str, kwargs: dict):
        import netarena_gym  # noqa: F401  (registers the ids in the actor)

        self.env = gym.make(env_id, **kwargs)

    def interface(self) -> str:
        return self.env.unwrapped.interface

    def instance(self) -> str | None:
        """The real backend's instance name (a Mininet run id, a K8s namespace), else None."""
        backend = getattr(self.env.unwrapped, "backend", None)
        return getattr(backend, "run_id", None) or getattr(backend, "namespace", None)

    def node_id(self) -> str:
        import ray

        return ray.get_runtime_context().get_node_id()

    def reset(self, seed):
        return self.env.reset(seed=seed)

    def step(self, action):
        return self.env.step(action)

    def render(self):
        return self.env.render()

    def close(self) -> None:
        self.env.close()


class RayEnv:
    """A session's env proxy: calls go to its actor and wait for the answer."""

    def __init__(self, ray, handle, interface: str, node_id: str, timeout: float,
                 instance: str | None = None):
        self._ray, self._handle, self._timeout = ray, handle, timeout
        self.interface, self.node_id, self.instance = interface, node_id, instance

    @property
    def unwrapped(self) -> "RayEnv":
        return self

    def _call(self, name: str, *args):
        return self._ray.get(getattr(self._handle, name).remote(*args), timeout=self._timeout)

    def reset(self, *, seed: int | None = None, options: Any = None):
        return self._call("reset", seed)

    def step(self, action):
        return self._call("step", action)

    def render(self):
        return self._call("render")

    def close(self) -> None:
        try:
            self._call("close")
        finally:
            self._ray.kill(self._handle)


def ray_env_factory(address: str | None = None, *, timeout: float = 120.0,
                    resources: dict[str, float] | None = None) -> Callable[..., RayEnv]:
    """A ``make(env_id, **kwargs)`` for :class:`SessionManager` that starts one actor per
    env. ``address``: ``"auto"``, ``"HOST:PORT"`` or ``"ray://HOST:10001"``; None starts a
    local Ray. ``resources`` overrides the backend's (``{"netarena_root": 1}`` for Mininet)."""
    ray = require("ray", "ray")
    from netarena_gym.eval.executors import ROOT_RESOURCE

    if not ray.is_initialized():
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": root}})
    remote = ray.remote(EnvActor)

    def make(env_id: str, **kwargs) -> RayEnv:
        need = resources
        if need is None:
            need = {ROOT_RESOURCE: 1.0} if kwargs.get("backend") == "mininet" else {}
        handle = remote.options(num_cpus=1, resources=need or None).remote(env_id, kwargs)
        try:
            interface = ray.get(handle.interface.remote(), timeout=timeout)
            node = ray.get(handle.node_id.remote(), timeout=timeout)
            instance = ray.get(handle.instance.remote(), timeout=timeout)
        except BaseException:
            ray.kill(handle)
            raise
        return RayEnv(ray, handle, interface, node, timeout, instance)

    return make
