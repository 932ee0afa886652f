"""The configuration of ``NetArena-Routing-v0`` (see :class:`~netarena_gym.routing.env.RoutingEnv`)."""
from __future__ import annotations

from dataclasses import dataclass

from netarena_gym.core.config import EnvConfig


@dataclass(frozen=True, kw_only=True)
class RoutingConfig(EnvConfig):
    probe_timeout: float = 0.2
    topology: dict | None = None
    fault_types: tuple[str, ...] | None = None
