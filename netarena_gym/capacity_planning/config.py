"""The configuration of ``NetArena-CapacityPlanning-v0``
(see :class:`~netarena_gym.capacity_planning.env.CapacityPlanningEnv`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from netarena_gym.core.config import EnvConfig


@dataclass(frozen=True, kw_only=True)
class CapacityPlanningConfig(EnvConfig):
    interface: str = "code"
    topologies: object = None
    templates: tuple[str, ...] | None = None
    limits: object = None
    python_guard: bool = True
    unsafe_sandbox: bool = False

    name_lists: ClassVar[tuple[str, ...]] = ("templates",)
