"""The configuration of ``NetArena-CapacityPlanning-v0``
(see :class:`~netarena_gym.capacity_planning.env.CapacityPlanningEnv`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from netarena_gym.capacity_planning.commands.sandbox import Limits
from netarena_gym.core.config import EnvConfig
from netarena_gym.errors import InvalidConfig


@dataclass(frozen=True, kw_only=True)
class CapacityPlanningConfig(EnvConfig):
    interface: str = "code"
    topologies: object = None
    templates: tuple[str, ...] | None = None
    limits: object = None
    python_guard: bool = True
    unsafe_sandbox: bool = False

    name_lists: ClassVar[tuple[str, ...]] = ("templates",)
    flags: ClassVar[tuple[str, ...]] = ("python_guard", "unsafe_sandbox")

    def __post_init__(self):
        super().__post_init__()
        if not (self.limits is None or isinstance(self.limits, (dict, Limits))):
            raise InvalidConfig(f"limits must be a dict of {', '.join(Limits.field_names())}, "
                                f"a Limits or None, got {self.limits!r}")
        if isinstance(self.limits, dict):
            Limits.from_dict(self.limits)  # raises InvalidConfig naming a bad key or value
