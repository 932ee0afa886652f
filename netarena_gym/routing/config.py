"""The configuration of ``NetArena-Routing-v0`` (see :class:`~netarena_gym.routing.env.RoutingEnv`)."""
from __future__ import annotations

from dataclasses import dataclass

from netarena_gym.core.config import EnvConfig
from netarena_gym.errors import InvalidConfig


@dataclass(frozen=True, kw_only=True)
class RoutingConfig(EnvConfig):
    probe_timeout: float = 0.2
    topology: dict | None = None
    fault_types: tuple[str, ...] | None = None
    # router interface aliases ("LAN s3 192.168.3.1/24"): None = on, except in compat
    interface_labels: bool | None = None

    def __post_init__(self):
        if self.interface_labels is not None and not isinstance(self.interface_labels, bool):
            raise InvalidConfig("interface_labels must be True, False or None (off in compat, "
                                f"on otherwise), got {self.interface_labels!r}")
