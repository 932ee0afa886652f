"""``NetArena-Routing-v0``: repair faults in Linux routers.

Text interface: the action is ``{"machine": "r0", "command": "ip addr show"}`` (a JSON
string or a dict); the observation is the pingall matrix, the last command and its output,
and the steps left (optionally the recent history, and with ``observability="full"`` the
configuration of every router). Discrete interface: a catalogue of atomic commands with a
mask, and fixed-size arrays (see :mod:`netarena_gym.routing.features`).

A reset builds a whole network (thousands of objects at 64 routers) that lives for the
episode, so it runs with the cyclic garbage collector paused
(:func:`netarena_gym.core.collector.paused_gc`): left on,
the collector runs its young generations many times over objects that all survive, and
promotes them fast enough to trigger full collections of the whole heap every few resets
(about 12% of a reset at 64 routers, 7% at level 3). Nothing is leaked: what a reset
leaves as cyclic garbage is collected at the next pass after the collector is back on.
"""
from __future__ import annotations

import numpy as np

from netarena_gym.core.collector import paused_gc
from netarena_gym.core.env import NetArenaEnv
from netarena_gym.core.scenario import Scenario
from netarena_gym.errors import InvalidConfig, require
from netarena_gym.routing.config import RoutingConfig
from netarena_gym.routing.config import compat_profile as compat_profile_named
from netarena_gym.shell.parser import OK, REFUSED, CommandResult
from netarena_gym.routing.catalogue import Dims, fill
from netarena_gym.routing.expert import RoutingExpert
from netarena_gym.routing.features import FeatureBuilder, feature_spaces
from netarena_gym.routing.faults import check_supported
from netarena_gym.routing.generator import RoutingGenerator, level_config
from netarena_gym.routing.render import pingall_text
from netarena_gym.routing.backends.sim import SimBackend, SimState
from netarena_gym.routing.views import INSPECT, parse_inspection

BACKENDS = ("sim", "mininet")
#: upstream route's blacklist (``safety_check``): in compat a command containing any of
#: these (case-sensitive substrings, ``mapping`` included) is skipped as upstream skips it:
#: nothing runs, no output, and the step counts
COMPAT_BLACKLIST = ("sudo", "tcpdump", "systemctl", "frr", "ethtool", "ping")
HEALTHY_START = ("netarena: the network was healthy before this command; upstream reports "
                 "success at iteration 1 and does not run it\n")


def make_backend(name: str, **kw):
    if name == "sim":
        return SimBackend(**kw)
    if name == "mininet":
        require("mininet", "mininet")
        from netarena_gym.routing.backends.mininet import MininetBackend
        return MininetBackend(**kw)
    raise InvalidConfig(f"backend must be one of {BACKENDS}, got {name!r}")


class RoutingEnv(NetArenaEnv):
    """Repair faults in a network of Linux routers.

    ## Description

    A scenario is a small topology of routers and hosts (levels 1-3 grow it; "compat"
    follows upstream NetArena's route task) with one or more injected faults (addresses,
    routes, forwarding, firewall rules, ...). The agent runs one command on one router per
    step until every host pair pings.

    ## Action Space

    ``interface="text"``: ``Text(4096)``, a JSON object ``{"machine": "r0", "command":
    "ip addr show"}`` (a dict is accepted too; every field is bounded before parsing).
    ``interface="discrete"``: ``Discrete(n)``, an index into a fixed, padded catalogue of
    atomic commands with a validity mask (``info["action_mask"]``, ``action_masks()``).

    ## Observation Space

    Text: ``Text(n)``, the pingall matrix, the last command and its output, the steps
    left (optionally the history and, with ``observability="full"``, every router's
    configuration). ``n`` and the output limit grow with the network so that the whole
    matrix and the widest router's inspection fit (``Text(32768)`` and 6,000 output
    characters in ``compat``; ``env.max_obs_chars`` and ``env.max_output_chars`` give them). Discrete: a ``Dict`` of fixed-size arrays
    (:mod:`netarena_gym.routing.features`) plus ``action_mask``.

    ## Rewards

    The sum of the components in ``info["reward_components"]`` (weights from
    :class:`~netarena_gym.core.reward.RewardConfig`, defaults): ``success`` +1.0 on the step
    that solves, ``safety`` -1.0 times the fraction of the host pairs newly broken by the step
    (bounded: -1.0 when the step breaks every pair), ``step`` -0.01 every
    step, ``invalid`` -0.05, ``refused`` -0.2, ``timeout`` -0.05 (these three exclude each
    other), ``failed`` 0.0 and the optional ``progress`` shaping (0.0). ``env.reward_range``
    is a step's range, ``(-1.21, 0.99)`` with the defaults; zeros are never ``-0.0``.
    ``reward={"normalize_safety": False}`` charges ``safety`` per broken pair instead
    (the first release's unbounded penalty); verdicts do not depend on the reward.
    The kind of a command's result (``ok``/``error``/``invalid``) comes from
    :func:`~netarena_gym.routing.commands.executor.classify` on every backend, so the same
    actions earn the same reward on the simulator and Mininet.

    ## Starting State

    ``reset(seed=s)`` draws the topology and faults from the level's generator (the same
    seed gives the same episode); ``reset(options={"scenario": info["scenario"]})`` replays
    a recorded one (of the same kind: compat or levels 1-3), ``options={"category": ...}``
    fixes the fault types (a name such as ``"disable_routing+remove_ip"``, a list, or an
    index into upstream's 15 categories).

    ## Episode End

    Terminated when every pair that should ping does; truncated after ``max_steps``
    (level 1: 15, 2: 20, 3: 40, compat: 10). A step after the end, or before ``reset``,
    raises ``ResetNeeded``. Compat scores as upstream's loop, which measures before each
    command: the last step's command runs but is never measured (its verdicts are the
    step before's), and an episode that starts healthy ends on its first step, whose
    command is not run (0 steps). Compat also skips upstream's blacklist (commands
    containing ``sudo``, ``tcpdump``, ``systemctl``, ``frr``, ``ethtool`` or ``ping``):
    kind ``refused``, no output, the step counts.

    ## Arguments

    Keyword-only, the shared ones in this order (see :class:`~netarena_gym.core.config.EnvConfig`):
    ``level``, ``interface``, ``backend``, ``max_steps``, ``reward`` (a ``RewardConfig`` or a
    dict of weights), ``observability`` ("partial"|"full"), ``history`` (previous steps
    shown in the text observation), ``render_mode`` ("ansi"), ``command_timeout`` (seconds
    per tool run), ``step_timeout`` (wall-clock budget of one step, default 5 s; on Mininet the budget of the command line, whose overrunning command is killed, default 5 s or ``command_timeout`` if longer);
    then the task's own: ``probe_timeout``, ``topology`` (size ranges, and ``shape``:
    ``"tree"``, ``"ring"`` or ``"leaf-spine"`` networks of up to 64 routers, see
    :mod:`netarena_gym.routing.shapes`; more than four routers add one step per router
    to the default ``max_steps``), ``fault_types``,
    ``interface_labels`` (router interface aliases such as ``LAN s3 192.168.3.1/24`` that
    state each port's intended role and address; None, the default: off in compat, whose
    upstream nodes carry none, on at levels 1-3), ``netem_faults``
    (draw the netem fault methods; default: only in compat; the same seed draws the same
    scenario on every backend, and a backend lacking netem refuses an episode that needs
    it with ``ScenarioError``), ``compat_profile`` ("paper" or "agentbeats", the public
    leaderboard's image without iptables; see :mod:`netarena_gym.routing.config`). Unknown keys given to ``from_config`` raise
    ``InvalidConfig`` with the valid ones. ``info`` follows :mod:`netarena_gym.core.info`:
    the ``info`` argument (after ``step_timeout``), ``"full"`` (default) or ``"lean"``, says
    whether steps inside an episode carry every key or only ``LEAN_KEYS`` (for vector envs).

    ## Version History

    * v0: the shared info schema, keyword-only arguments, ``step_timeout``.
    * v0 (issue 12): ``netem_faults`` and ``compat_profile``; scenario draws no longer depend
      on the backend (netem methods are opt-in at levels 1-3); result kinds come from one
      classification on every backend (``executor.classify``).
    * v0 (issue 14): ``topology={"shape": ...}`` networks of up to 64 routers.
    * v0 (issue 14): the ``info`` argument, ``"lean"`` for vector envs.
    """
    config_class = RoutingConfig
    reset_options = frozenset({"scenario", "category"})
    task = "routing"
    text_keys = ("machine", "command")
    expert_class = RoutingExpert

    def __init__(self, *, level: int | str = 1, interface: str = "text", backend: str = "sim",
                 max_steps: int | None = None, reward=None, observability: str = "partial",
                 history: int = 0, render_mode: str | None = None,
                 command_timeout: float = 10.0, step_timeout: float | None = None,
                 info: str = "full",
                 probe_timeout: float = 0.2, topology: dict | None = None,
                 fault_types: tuple[str, ...] | None = None,
                 interface_labels: bool | None = None, netem_faults: bool | None = None,
                 compat_profile: str = "paper"):
        self.config = RoutingConfig(**{k: v for k, v in locals().items()
                                  if k in RoutingConfig.field_names()})
        cfg = level_config(level, topology) if level in (1, 2, 3, "compat") else None
        if cfg is None:
            raise InvalidConfig(f"level must be one of (1, 2, 3, 'compat'), got {level!r}")
        self.dims = Dims.of(cfg)
        self._large = self.dims.batches  # more than LARGE_ABOVE_ROUTERS routers
        if level != "compat" or topology is not None:
            # room for the widest router's inspection and the pingall of every node: the
            # limits follow the network's interfaces and nodes, not its router count (four
            # routers of eight subnets each overflowed fixed limits and cut the inspection)
            d = self.dims
            self.max_output_chars = max(self.max_output_chars,
                                        120 * (8 * d.ifaces + d.subnet_slots
                                               + d.link_slots + 40))
            self.max_obs_chars = max(self.max_obs_chars,
                                     6 * (d.nodes + 1) ** 2 + 2 * self.max_output_chars)
        self.profile = compat_profile_named(compat_profile)
        # a real backend keeps the budget of a command line itself (it kills the command
        # that overruns it); the core's step deadline (a signal) bounds the simulator
        real = {} if backend == "sim" else {"step_timeout": step_timeout}
        self.backend = make_backend(backend, probe_timeout=probe_timeout,
                                    command_timeout=command_timeout, **real,
                                    interface_labels=interface_labels,
                                    missing_programs=self.profile.missing_programs)
        self.generator = RoutingGenerator(level, capabilities=self.backend.capabilities,
                                          topology=topology, fault_types=fault_types,
                                          probe_timeout=probe_timeout, netem_faults=netem_faults)
        self._features_builder: FeatureBuilder | None = None
        self._tokens: dict[str, int | None] = {}
        self._state_text_cache: tuple[object, str] | None = None
        super().__init__(level=level, interface=interface, backend=backend, max_steps=max_steps,
                         reward=reward, observability=observability, history=history,
                         render_mode=render_mode, command_timeout=command_timeout,
                         step_timeout=((5.0 if step_timeout is None else step_timeout)
                                       if backend == "sim" else None),
                         info=info)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """See the class doc's Starting State (the build runs under :func:`paused_gc`)."""
        with paused_gc():
            return super().reset(seed=seed, options=options)

    # ------------------------------------------------------------------ hooks
    def _default_max_steps(self) -> int:
        """The level's default; networks of more than four routers add one step per router
        (an agent inspects each)."""
        base = super()._default_max_steps()
        return base + self.dims.routers if self._large else base

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
        # an episode this backend cannot run is refused (ScenarioError), never swapped
        check_supported(scenario.faults, self.backend.capabilities, f"the {self.backend.name} backend")
        if self.profile.missing_programs:
            state = None  # the generator's check ran with every tool; inject without them
        self.backend.apply(scenario, state if isinstance(state, SimState) else None)
        lay = self.backend.layout
        stray = sorted({f["router"] for f in scenario.faults} - set(lay.routers))
        if stray:  # injected nowhere: the episode would start solved
            raise ValueError(f"faults on routers {stray} that the scenario's topology does "
                             f"not have (r0..r{len(lay.routers) - 1})")
        if (len(lay.routers) > self.dims.routers
                or max(len(h) for h in lay.spec.hosts) > self.dims.subnets
                or max((max(h) for h in lay.spec.hosts if h), default=0) > self.dims.hosts
                or len(lay.links) > self.dims.link_slots):
            raise ValueError("scenario topology exceeds this env's dimensions; make the env "
                             "with a matching level or topology")
        self._features_builder = (FeatureBuilder(lay, self.dims, self.backend.names)
                                  if self.interface == "discrete" else None)
        self._tokens = {}
        self._state_text_cache = None
        if self.interface == "discrete" and self.observability == "full":
            self._refresh_all()

    def _execute(self, action: dict[str, str]) -> CommandResult:
        if self.level == "compat":
            if self._healthy_start():  # upstream discards the agent's first answer
                return CommandResult(HEALTHY_START, 0, OK)
            if any(word in action["command"] for word in COMPAT_BLACKLIST):
                return CommandResult("", 126, REFUSED)  # skipped silently, as upstream
        return self.backend.run(action)

    def _healthy_start(self) -> bool:
        """Compat: the query started healthy (every fault inert) and no step was taken."""
        return self.metrics.steps == 0 and self.metrics.correct

    def _score(self, action, result: CommandResult) -> tuple[int, bool, float]:
        """Compat scores as upstream's loop (spec route 3.1), which measures before each
        command: a query that starts healthy is a success at once (the first command is
        not run and is no step), and the command of the last step runs but is never
        measured (the verdicts stay those before it)."""
        if self.level == "compat":
            if self._healthy_start():
                return 0, True, 0.0
            if self.metrics.steps + 1 >= self.max_steps:
                self.metrics.skip()
                return 0, False, 0.0
        return super()._score(action, result)

    def _connectivity(self) -> np.ndarray:
        return self.backend.observe()

    def _fill_catalogue(self) -> None:
        fill(self.catalogue, self.backend.layout, self.dims)

    def _features(self) -> dict[str, np.ndarray]:
        return self._features_builder.arrays(self._matrix)

    def _state_text(self) -> str:
        m = self._matrix
        if self._state_text_cache is None or self._state_text_cache[0] is not m:
            # upstream's parallelPing prints no Mininet header line
            text = pingall_text(self.backend.names, m, header=self.level != "compat")
            self._state_text_cache = (m, "Pingall result:\n" + text)
        return self._state_text_cache[1]

    def _config_text(self) -> str:
        parts = []
        for r in self.backend.layout.routers:
            parts.append(f"### {r}")
            parts.append(self.backend.run({"machine": r, "command": INSPECT}).output.rstrip("\n"))
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
        elif (action is not None and action["command"] == INSPECT and result.kind != "refused"
              and result.output != HEALTHY_START):
            self._features_builder.update_router(action["machine"], parse_inspection(result.output))

    def _refresh_all(self) -> None:
        for r in self.backend.layout.routers:
            tok = self.backend.state_token(r)
            if tok is None or self._tokens.get(r) != tok:
                out = self.backend.run({"machine": r, "command": INSPECT}).output
                self._features_builder.update_router(r, parse_inspection(out))
                self._tokens[r] = tok


