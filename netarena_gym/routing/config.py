"""The configuration of ``NetArena-Routing-v0`` (see :class:`~netarena_gym.routing.env.RoutingEnv`).

``compat_profile`` names the environment a compat episode reproduces (:data:`COMPAT_PROFILES`):

* ``"paper"`` (default): the paper's Mininet image, every tool present;
* ``"agentbeats"``: the public AgentBeats leaderboard's route image, which installs only
  iputils-ping, net-tools, iproute2 and traceroute. ``iptables`` is absent there: an agent's
  ``iptables ...`` answers ``bash: iptables: command not found`` (exit 127, kind
  ``invalid`` like every missing program), and the iptables-based faults
  (``disable_routing`` methods 2 and 4, ``drop_traffic_to_from_subnet`` methods 1-3) are
  injected through the same missing program, so they are no-ops, as they were upstream. The
  scenario draw is the paper profile's (the same seed draws the same faults); an episode
  whose faults are all inert starts healthy and ends with success on its first step,
  whose command is not run and is no step (upstream measured first: success at
  iteration 1, the agent's answer discarded). Only with ``level="compat"``.

``netem_faults`` puts the netem fault methods into the draw (``None``: the level's default,
see :func:`~netarena_gym.routing.generator.default_netem_faults`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from netarena_gym.core.config import EnvConfig
from netarena_gym.errors import InvalidConfig


@dataclass(frozen=True)
class CompatProfile:
    name: str
    missing_programs: frozenset[str]
    description: str


COMPAT_PROFILES: dict[str, CompatProfile] = {
    "paper": CompatProfile("paper", frozenset(), "the paper's Mininet image (every tool present)"),
    "agentbeats": CompatProfile(
        "agentbeats", frozenset({"iptables"}),
        "the AgentBeats leaderboard's route image (no iptables: its faults are inert)"),
}


def compat_profile(name: str) -> CompatProfile:
    """The profile called ``name``; :class:`InvalidConfig` listing the valid ones otherwise."""
    try:
        return COMPAT_PROFILES[name]
    except (KeyError, TypeError):
        raise InvalidConfig(f"compat_profile must be one of {', '.join(map(repr, COMPAT_PROFILES))}"
                            f", got {name!r}") from None


@dataclass(frozen=True, kw_only=True)
class RoutingConfig(EnvConfig):
    probe_timeout: float = 0.2
    topology: dict | None = None
    fault_types: tuple[str, ...] | None = None
    # router interface aliases ("LAN s3 192.168.3.1/24"): None = on, except in compat
    interface_labels: bool | None = None
    netem_faults: bool | None = None
    compat_profile: str = "paper"

    name_lists: ClassVar[tuple[str, ...]] = ("fault_types",)
    # interface_labels None: off in compat, on otherwise; netem_faults None: the level's
    optional_flags: ClassVar[tuple[str, ...]] = ("interface_labels", "netem_faults")
    seconds: ClassVar[tuple[str, ...]] = ("command_timeout", "probe_timeout")

    def __post_init__(self):
        super().__post_init__()
        prof = compat_profile(self.compat_profile)
        if prof.missing_programs and self.level != "compat":
            raise InvalidConfig(f"compat_profile={self.compat_profile!r} reproduces a compat "
                                f"environment: use it with level='compat', not {self.level!r}")

