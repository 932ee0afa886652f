"""``NetArena-Routing-v0``: repair faults in Linux routers.

Text interface: the action is ``{"machine": "r0", "command": "ip addr show"}`` (a JSON
string or a dict); the observation is the pingall matrix, the last command and its output,
and the steps left (optionally the recent history, and with ``observability="full"`` the
configuration of every router). Discrete interface: a catalogue of atomic commands with a
mask, and fixed-size arrays (see :mod:`netarena_gym.routing.features`).
"""
from __future__ import annotations

import numpy as np

from netarena_gym.core.env import NetArenaEnv
from netarena_gym.core.scenario import Scenario
from netarena_gym.shell.parser import CommandResult
from netarena_gym.routing.catalogue import Dims, fill
from netarena_gym.routing.expert import RoutingExpert
from netarena_gym.routing.features import FeatureBuilder, feature_spaces
from netarena_gym.routing.generator import RoutingGenerator, level_config
from netarena_gym.routing.render import pingall_text
from netarena_gym.routing.backends.sim import SimBackend, SimState
from netarena_gym.routing.views import INSPECT, parse_inspection

BACKENDS = ("sim", "mininet")


def make_backend(name: str, **kw):
    if name == "sim":
        return SimBackend(**kw)
    if name == "mininet":
        try:
            from netarena_gym.routing.backends.mininet import MininetBackend
        except ImportError as e:
            raise RuntimeError(f"backend 'mininet' is not available: {e}") from None
        return MininetBackend(**kw)
    raise ValueError(f"backend must be one of {BACKENDS}, got {name!r}")


class RoutingEnv(NetArenaEnv):
    task = "routing"
    text_keys = ("machine", "command")
    expert_class = RoutingExpert

    def __init__(self, *, level: int | str = 1, interface: str = "text", backend: str = "sim",
                 max_steps: int | None = None, reward=None, observability: str = "partial",
                 history: int = 0, render_mode: str | None = None,
                 command_timeout: float = 10.0, step_timeout: float | None = None,
                 probe_timeout: float = 0.2, topology: dict | None = None,
                 fault_types: tuple[str, ...] | None = None):
        cfg = level_config(level, topology) if level in (1, 2, 3, "compat") else None
        if cfg is None:
            raise ValueError(f"level must be one of (1, 2, 3, 'compat'), got {level!r}")
        self.dims = Dims(*cfg.max_dims())
        self.backend = make_backend(backend, probe_timeout=probe_timeout,
                                    command_timeout=command_timeout)
        self.generator = RoutingGenerator(level, capabilities=self.backend.capabilities,
                                          topology=topology, fault_types=fault_types,
                                          probe_timeout=probe_timeout)
        self._features_builder: FeatureBuilder | None = None
        self._tokens: dict[str, int | None] = {}
        self._state_text_cache: tuple[object, str] | None = None
        super().__init__(level=level, interface=interface, backend=backend, max_steps=max_steps,
                         reward=reward, observability=observability, history=history,
                         render_mode=render_mode, command_timeout=command_timeout,
                         step_timeout=(step_timeout if step_timeout is not None
                                       else (5.0 if backend == "sim" else None)))

    # ------------------------------------------------------------------ hooks
    def _catalogue_size(self) -> int:
        return self.dims.size

    def _feature_spaces(self):
        return feature_spaces(self.dims)

    def _generate(self, rng: np.random.Generator, options: dict) -> Scenario:
        gen = self.generator.sample(rng, category=options.get("category"))
        self._prebuilt = gen.state
        return gen.scenario

    def _apply(self, scenario: Scenario) -> None:
        state = getattr(self, "_prebuilt", None)
        self._prebuilt = None
        if isinstance(self.backend, SimBackend):
            self.backend.apply(scenario, state if isinstance(state, SimState) else None)
        else:
            self.backend.apply(scenario)
        lay = self.backend.layout
        if (len(lay.routers) > self.dims.routers
                or max(len(h) for h in lay.spec.hosts) > self.dims.subnets
                or max(max(h) for h in lay.spec.hosts) > self.dims.hosts):
            raise ValueError("scenario topology exceeds this env's dimensions; make the env "
                             "with a matching level or topology")
        self._features_builder = (FeatureBuilder(lay, self.dims, self.backend.names)
                                  if self.interface == "discrete" else None)
        self._tokens = {}
        self._state_text_cache = None
        if self.interface == "discrete" and self.observability == "full":
            self._refresh_all()

    def _execute(self, action: dict[str, str]) -> CommandResult:
        return self.backend.run(action["machine"], action["command"])

    def _connectivity(self) -> np.ndarray:
        return self.backend.observe()

    def _fill_catalogue(self) -> None:
        fill(self.catalogue, self.backend.layout, self.dims)

    def _features(self) -> dict[str, np.ndarray]:
        return self._features_builder.arrays(self._matrix)

    def _state_text(self) -> str:
        m = self._matrix
        if self._state_text_cache is None or self._state_text_cache[0] is not m:
            self._state_text_cache = (m, "Pingall result:\n" + pingall_text(self.backend.names, m))
        return self._state_text_cache[1]

    def _config_text(self) -> str:
        parts = []
        for r in self.backend.layout.routers:
            parts.append(f"### {r}")
            parts.append(self.backend.run(r, INSPECT).output.rstrip("\n"))
        return "\n".join(parts)

    def _info_extra(self) -> dict:
        return {"capabilities": sorted(self.backend.capabilities)}

    def _format_action(self, action: dict[str, str]) -> str:
        return f"Machine: {action['machine']}\nCommand: {action['command']}"

    def _after_step(self, action, result: CommandResult) -> None:
        if self.interface != "discrete":
            return
        if self.observability == "full":
            self._refresh_all()
        elif action is not None and action["command"] == INSPECT and result.kind != "refused":
            self._features_builder.update_router(action["machine"], parse_inspection(result.output))

    def _refresh_all(self) -> None:
        for r in self.backend.layout.routers:
            tok = self.backend.state_token(r)
            if tok is None or self._tokens.get(r) != tok:
                out = self.backend.run(r, INSPECT).output
                self._features_builder.update_router(r, parse_inspection(out))
                self._tokens[r] = tok

    def close(self):
        self.backend.close()
