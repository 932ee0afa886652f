"""The embedded simulator backend of the routing task (the default: no root, no services)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from netarena_gym.core.scenario import Scenario
from netarena_gym.shell.parser import CommandResult
from netarena_gym.routing import pristine
from netarena_gym.routing.commands import executor
from netarena_gym.routing.inject import inject
from netarena_gym.routing.state import Network
from netarena_gym.routing.grader import ReachabilityOracle
from netarena_gym.routing.topology import (Layout, TopologySpec, build_network, is_kept,
                                           labels_for)

SIM_CAPABILITIES = frozenset({"netem"})


@dataclass
class SimState:
    """A built network with its scenario's faults injected."""
    net: Network
    layout: Layout
    oracle: ReachabilityOracle
    switches: frozenset[str]
    injection: list[tuple[str, str, CommandResult]] = field(default_factory=list)
    labels: bool = True

    @classmethod
    def build(cls, scenario: Scenario, *, probe_timeout: float = 0.2,
              command_timeout: float = 10.0, labels: bool | None = None,
              missing_programs: frozenset[str] = frozenset(),
              recurring: bool = False) -> "SimState":
        """``labels``: interface aliases (None: :func:`~netarena_gym.routing.topology.labels_for`
        the scenario's level); ``missing_programs``: tools absent from the image;
        ``recurring``: the topology will be drawn again (a fixed one), so its pristine
        network and probes are kept from this first sighting on."""
        labels = labels_for(scenario.level, labels)
        spec = TopologySpec.from_dict(scenario.params["topology"])
        net, lay = build_network(spec, labels=labels, recurring=recurring)
        switches = frozenset(s.switch for s in lay.subnets)
        log = inject(net, switches, (spec, labels) if is_kept(spec, labels) else None,
                     scenario.faults, command_timeout, frozenset(missing_programs))
        base = pristine.base_for(spec, labels, probe_timeout, recurring=recurring)
        return cls(net, lay, ReachabilityOracle(net, probe_timeout, base=base), switches, log,
                   labels)


class SimBackend:
    """Implements the routing backend protocol on the simulator.

    ``apply(scenario)`` builds the topology and injects the faults with the same commands
    a real backend runs; ``run({"machine": ..., "command": ...})`` executes one agent command line;
    ``observe()`` returns the all-pairs reachability matrix over ``names``.
    ``interface_labels``: router interface aliases (None: off in compat, on otherwise)."""

    name = "sim"
    capabilities = SIM_CAPABILITIES

    def __init__(self, *, probe_timeout: float = 0.2, command_timeout: float = 10.0,
                 interface_labels: bool | None = None,
                 missing_programs: frozenset[str] = frozenset()):
        """``missing_programs``: tools absent from the image (a compat profile); faults
        and agent commands that call them get bash's ``command not found``."""
        self.missing_programs = frozenset(missing_programs)
        self.probe_timeout = probe_timeout
        self.command_timeout = command_timeout
        self.interface_labels = interface_labels
        self.state: SimState | None = None
        self.scenario: Scenario | None = None

    def apply(self, scenario: Scenario, prebuilt: SimState | None = None) -> None:
        self.scenario = scenario
        labels = labels_for(scenario.level, self.interface_labels)
        if prebuilt is not None and prebuilt.labels != labels:
            prebuilt = None
        self.state = prebuilt or SimState.build(scenario, probe_timeout=self.probe_timeout,
                                                command_timeout=self.command_timeout,
                                                labels=labels,
                                                missing_programs=self.missing_programs)

    def reset_to_baseline(self) -> None:
        if self.scenario is not None:
            self.apply(self.scenario)

    @property
    def names(self) -> list[str]:
        return self.state.oracle.names

    @property
    def layout(self) -> Layout:
        return self.state.layout

    def run(self, action: Mapping[str, str]) -> CommandResult:
        """``action``: ``{"machine": <node name>, "command": <shell line>}``."""
        s = self.state
        machine, command = action["machine"], action["command"]
        return executor.run(s.net, s.switches, machine, command, self.command_timeout,
                            self.missing_programs)

    def observe(self) -> np.ndarray:
        """The probe matrix; the probe round also refills the neighbour caches."""
        self.state.net.new_traffic_round()
        return self.state.oracle.matrix()

    def state_token(self, machine: str) -> int | None:
        """Changes whenever ``machine``'s configuration changes (None: unknown)."""
        node = self.state.net.nodes.get(machine)
        return None if node is None else node.version

    def close(self) -> None:
        self.state = None
