"""``NetArena-K8sPolicy-v0``: repair the NetworkPolicies of Online Boutique with kubectl.

Text interface: the action is ``{"command": "kubectl ..."}`` (a JSON string or a dict; a
bare string starting with ``kubectl`` is accepted too), one command line per step. For
``kubectl apply -f -`` the manifest goes in ``"stdin"``:
``{"command": "kubectl apply -f -", "stdin": "apiVersion: networking.k8s.io/v1\\n..."}``
(the core shell refuses ``<<EOF``). The observation is the connectivity report (upstream's
mismatch lines), the last command and its output, and the steps left.

Discrete interface: a catalogue of atomic policy edits with a mask, and arrays (see
:mod:`netarena_gym.k8s.features`).

Backends: ``"sim"`` (default, the in-memory API server and simulated kubectl) and
``"kubernetes"`` (any cluster through a kubeconfig; see :mod:`netarena_gym.k8s.backends.kubernetes`).
"""
from __future__ import annotations

from operator import itemgetter
from typing import Any

import numpy as np

from netarena_gym.core.actions import MAX_ACTION_CHARS, ActionError, parse_json_action
from netarena_gym.core.env import NetArenaEnv
from netarena_gym.core.metrics import EpisodeMetrics
from netarena_gym.core.scenario import Scenario
from netarena_gym.k8s.config import DNS_LABEL, K8sPolicyConfig
from netarena_gym.errors import InvalidConfig
from netarena_gym.shell.parser import REFUSED, CommandResult
from netarena_gym.k8s import catalogue as cat_mod
from netarena_gym.k8s.commands.allowlist import DEFAULT_VERBS
from netarena_gym.k8s.expert import K8sExpert
from netarena_gym.k8s.features import FeatureBuilder, feature_spaces
from netarena_gym.k8s.generator import K8sGenerator
from netarena_gym.k8s.render import mismatch_report
from netarena_gym.k8s.state_validation import DecodeError
from netarena_gym.k8s.backends.sim import SimBackend
from netarena_gym.k8s.workload_large import APPS, workload_for

BACKENDS = ("sim", "kubernetes")
LARGE_TEXT_CHARS = 4_000_000  # text observation and tool output limits with app="large"
MAX_STDIN = 65536
REPORTS_KEPT = 1024  # connectivity reports kept per outcome array
#: upstream K8s's blacklist (``check_disallowed_commands``, spec k8s 3.3): in compat a
#: command containing any of these (case-sensitive substrings, ``<namespace>`` literally)
#: is not run; its output is upstream's ``Disallowed command detected.`` and the step counts
COMPAT_BLACKLIST = ("kubectl exec", "kubectl edit", "kubectl delete", "kubectl create",
                    "kubectl apply", "bash", "<namespace>", "sudo")
DISALLOWED = "Disallowed command detected."
SKIPPED = "Skipped due to disallowed command."  # upstream's summary of such a step
_METADATA, _NAME = itemgetter("metadata"), itemgetter("name")


class K8sPolicyEnv(NetArenaEnv):
    """Repair the NetworkPolicies of the Online Boutique microservices with kubectl.

    ## Description

    The workload is Online Boutique; a scenario injects faults into its NetworkPolicies
    (levels 1-3, and "compat" as in upstream NetArena). The agent edits policies with
    kubectl until every probe (source pod, destination, port) has its expected outcome.

    ## Action Space

    ``interface="text"``: ``Text(2 * (65536 + 4096))``, a JSON object ``{"command":
    "kubectl ...", "stdin": "..."}``: ``command`` at most 4,096 characters, ``stdin`` (the
    manifest of ``kubectl apply -f -``) at most 65,536; the space's bound is the longest
    JSON text holding both. ``interface="discrete"``: ``Discrete(n)``, a catalogue of
    atomic policy edits with a mask. In compat a command containing one of upstream's
    blacklisted substrings (:data:`COMPAT_BLACKLIST`: ``kubectl delete``, ``kubectl
    apply``, ``bash``, ...) is not run: its output is ``Disallowed command detected.``
    (kind ``refused``) and the step counts without a check, as upstream's loop.

    ## Observation Space

    Text: ``Text(131072)``, the connectivity report (upstream's mismatch lines), the last
    command and its output, the steps left. Discrete: a ``Dict`` of arrays
    (:mod:`netarena_gym.k8s.features`) plus ``action_mask``.

    ## Rewards

    The sum of the components in ``info["reward_components"]`` (weights from
    :class:`~netarena_gym.core.reward.RewardConfig`, defaults): ``success`` +1.0 on the step
    that solves, ``safety`` -1.0 times the fraction of the probes newly broken by the step
    (bounded: -1.0 when the step breaks every probe), ``step`` -0.01 every
    step, ``invalid`` -0.05, ``refused`` -0.2, ``timeout`` -0.05 (these three exclude each
    other), ``failed`` 0.0 and the optional ``progress`` shaping (0.0). ``env.reward_range``
    is a step's range, ``(-1.21, 0.99)`` with the defaults; zeros are never ``-0.0``.
    ``reward={"normalize_safety": False}`` charges ``safety`` per broken probe instead
    (the first release's unbounded penalty); verdicts do not depend on the reward.

    ## Starting State

    ``reset(seed=s)`` draws the faults (deterministic per seed); ``options={"scenario":
    info["scenario"]}`` replays a recorded episode.

    ## Episode End

    Terminated when every probe matches; truncated after ``max_steps`` (level 1: 10, 2: 15,
    3: 25, compat: 10). A step after the end, or before ``reset``, raises ``ResetNeeded``.

    ## Arguments

    Keyword-only, the shared ones in this order (see :class:`~netarena_gym.core.config.EnvConfig`):
    ``level``, ``interface``, ``backend``, ``max_steps``, ``reward`` (a ``RewardConfig`` or a
    dict of weights), ``observability`` ("partial"|"full"), ``history`` (previous steps
    shown in the text observation), ``render_mode`` ("ansi"), ``command_timeout`` (seconds
    per tool run), ``step_timeout`` (wall-clock budget of one step, default 5 s; on a real cluster the budget of the command line, whose overrunning kubectl is killed, default 5 s or ``command_timeout`` if longer);
    then the task's own: ``probe_set`` ("full"|"compat"), ``probe_mode`` ("policy"|"live"), ``namespace``, ``fault_types``, ``allowed_verbs``, ``initial_report`` (the
    connectivity report before the first step; None, the default: shown at levels 1-3, not in
    compat, whose upstream agent starts blind), ``end_port``, ``kubeconfig``, ``agent_user`` (the unprivileged user the
    agent's kubectl runs as on the real backend when the grader is root; default ``"nobody"``),
    ``app`` (``"boutique"``, the default, or ``"large"``: a generated app of 120 services,
    :mod:`netarena_gym.k8s.workload_large`, on the simulator at levels 1-3, with text limits
    of 4,000,000 characters). Unknown keys given to ``from_config`` raise
    ``InvalidConfig`` with the valid ones. ``info`` follows :mod:`netarena_gym.core.info`:
    the ``info`` argument (after ``step_timeout``), ``"full"`` (default) or ``"lean"``, says
    whether steps inside an episode carry every key or only ``LEAN_KEYS`` (for vector envs).

    ## Version History

    * v0: the shared info schema; ``probes=``/``probe=`` renamed ``probe_set=``/``probe_mode=``;
      the text action space sized from the stdin limit.
    * v0 (issue 14): the ``info`` argument, ``"lean"`` for vector envs.
    """
    config_class = K8sPolicyConfig
    reset_options = frozenset({"scenario", "category"})
    task = "k8s"
    text_keys = ("command",)
    expert_class = K8sExpert
    levels = (1, 2, 3, "compat")
    default_max_steps = {1: 10, 2: 15, 3: 25, "compat": 10}
    max_obs_chars = 131072
    max_output_chars = 100000
    #: a JSON text action holds a command (<= MAX_ACTION_CHARS) and a stdin (<= MAX_STDIN),
    #: each character of which JSON may escape to two
    max_action_chars = 2 * (MAX_STDIN + MAX_ACTION_CHARS)

    def __init__(self, *, level: int | str = 1, interface: str = "text", backend: str = "sim",
                 max_steps: int | None = None, reward=None, observability: str = "partial",
                 history: int = 0, render_mode: str | None = None,
                 command_timeout: float = 10.0, step_timeout: float | None = None,
                 info: str = "full",
                 probe_set: str | None = None, probe_mode: str = "policy",
                 namespace: str | None = None, fault_types: tuple[str, ...] | None = None,
                 allowed_verbs=DEFAULT_VERBS, initial_report: bool | None = None,
                 end_port: bool = True, kubeconfig: str | None = None,
                 agent_user: str | int | None = "nobody", app: str = "boutique"):
        self.config = K8sPolicyConfig(**{k: v for k, v in locals().items()
                                  if k in K8sPolicyConfig.field_names()})
        if level not in self.levels:
            raise InvalidConfig(f"level must be one of {self.levels}, got {level!r}")
        if probe_mode not in ("policy", "live"):
            raise InvalidConfig(f"probe_mode must be 'policy' or 'live', got {probe_mode!r}")
        if app not in APPS:
            raise InvalidConfig(f"app must be one of {APPS}, got {app!r}")
        if app != "boutique" and (level == "compat" or backend != "sim"):
            raise InvalidConfig(f"app={app!r} runs on the simulator at levels 1-3 (compat and "
                                "the real backend are Online Boutique's)")
        self.app = app
        self.wl = workload_for(app)
        if app != "boutique":  # kubectl's JSON of a large app is long: room for it in the text
            self.max_output_chars = self.max_obs_chars = LARGE_TEXT_CHARS
        self.probes_name = probe_set or ("compat" if level == "compat" else "full")
        if self.probes_name not in self.wl.probe_sets:
            raise InvalidConfig(f"probe_set must be one of {sorted(self.wl.probe_sets)}, "
                                f"got {probe_set!r}")
        self.probe_set = self.wl.probe_sets[self.probes_name]
        # None: the report is shown before the first step, except in compat, where
        # upstream's agent starts blind (<NO PREVIOUS OUTPUT>; spec k8s 3.2)
        self.initial_report = level != "compat" if initial_report is None else initial_report
        if backend == "sim":
            self.backend = SimBackend(verbs=allowed_verbs, end_port=end_port)
            ns = namespace or "default"
        elif backend == "kubernetes":
            from netarena_gym.k8s.backends.kubernetes import KubernetesBackend
            self.backend = KubernetesBackend(kubeconfig=kubeconfig, namespace=namespace,
                                             probe=probe_mode, verbs=allowed_verbs,
                                             command_timeout=command_timeout,
                                             step_timeout=step_timeout,
                                             agent_user=agent_user)
            ns = self.backend.namespace
        else:
            raise InvalidConfig(f"backend must be one of {BACKENDS}, got {backend!r}")
        self.generator = K8sGenerator(level, probes=self.probes_name, namespace=ns,
                                      fault_types=fault_types, app=app)
        self.expected = np.array(self.probe_set.expected, dtype=bool)
        self._cat_builder = cat_mod.CatalogueBuilder(self.wl)
        self._feat = FeatureBuilder(self.wl, self.probe_set)
        self._actual: np.ndarray | None = None
        self._reports: dict = {}  # id(outcome array) -> (array, report text)
        self._prebuilt = None
        self._by_name: tuple | None = None
        try:
            super().__init__(level=level, interface=interface, backend=backend,
                             max_steps=max_steps, reward=reward, observability=observability,
                             history=history, render_mode=render_mode,
                             command_timeout=command_timeout,
                             step_timeout=((5.0 if step_timeout is None else step_timeout)
                                           if backend == "sim" else None),
                             info=info)
        except BaseException:  # a bad option after the backend was made: nothing is left
            self.backend.close()
            raise

    # ------------------------------------------------------------------ hooks
    def _catalogue_size(self) -> int:
        return cat_mod.size(self.wl)

    def _feature_spaces(self):
        return feature_spaces(self.wl, self.probe_set)

    def _generate(self, rng: np.random.Generator, options: dict) -> Scenario:
        gen = self.generator.sample(rng, category=options.get("category"))
        self._prebuilt = gen.policies
        return gen.scenario

    def _apply(self, scenario: Scenario) -> None:
        if scenario.params.get("app", "boutique") != self.app:
            raise ValueError(f"scenario is for app {scenario.params.get('app', 'boutique')!r}, "
                             f"this env runs {self.app!r}")
        if scenario.params.get("probes", self.probes_name) != self.probes_name:
            raise ValueError(f"scenario uses probe set {scenario.params.get('probes')!r}, this env "
                             f"{self.probes_name!r}")
        ns = scenario.params.get("namespace", "default")
        if not (isinstance(ns, str) and DNS_LABEL.fullmatch(ns)):
            raise ValueError(f"scenario namespace {ns!r:.80} is not a Kubernetes name (a DNS "
                             "label: lowercase letters, digits and '-', at most 63)")
        try:
            self.backend.apply(scenario, self._prebuilt)
        except DecodeError as e:  # a policy of the record that kubectl could not decode
            raise ValueError(f"a policy of the scenario does not decode: "
                             f"{e.path + ': ' if e.path else ''}{e}") from None
        self._prebuilt = None

    def _new_metrics(self) -> EpisodeMetrics:
        """Compat: upstream K8s has no safety baseline: it checks only after commands, and
        its first check is never unsafe (spec k8s 4.2), so ``safe_compat``'s first
        reference is a loss of 100, not the injected state's."""
        self._matrix = self._connectivity()
        self._skipped = False
        return EpisodeMetrics(initial=self._matrix,
                              compat_reference=100 if self.level == "compat" else None)

    def _execute(self, action: dict[str, str]) -> CommandResult:
        if self._disallowed(action):
            return CommandResult(DISALLOWED + "\n", 126, REFUSED)
        return self.backend.run(action)

    def _disallowed(self, action: dict[str, str] | None) -> bool:
        """Compat: whether upstream's blacklist skips this command."""
        return (self.level == "compat" and action is not None
                and any(w in action.get("command", "") for w in COMPAT_BLACKLIST))

    def _score(self, action, result: CommandResult) -> tuple[int, bool, float]:
        """Compat: upstream checks nothing after a disallowed command (spec k8s 3.3), so
        the step counts but its (unchanged) state is not measured and the safety
        reference stays where it was; the report after it is upstream's summary of such a
        step (:data:`SKIPPED`) in place of a connectivity check."""
        self._skipped = result.kind == REFUSED and self._disallowed(action)
        if self._skipped:
            self.metrics.skip()
            return 0, False, 0.0
        return super()._score(action, result)

    def _connectivity(self) -> np.ndarray:
        actual = self.backend.observe()
        if actual is self._actual and self._matrix is not None:
            return self._matrix  # unchanged (the engine's cache answered)
        self._actual = actual
        return actual == self.expected

    def _policies(self) -> dict[str, dict]:
        """The policies by name (kept while the backend answers the same objects)."""
        c = self.backend.objects()
        if self._by_name is None or self._by_name[0] is not c:
            self._by_name = (c, dict(zip(map(_NAME, map(_METADATA, c.policies)), c.policies)))
        return self._by_name[1]

    def _fill_catalogue(self) -> None:
        self._cat_builder.fill(self.catalogue, self._policies())

    def _features(self) -> dict[str, np.ndarray]:
        return self._feat.arrays(self._actual, self._policies())

    def _state_text(self) -> str:
        if not self.initial_report and self.metrics.steps == 0:
            return "Connectivity check: <NO PREVIOUS OUTPUT>"
        if self._skipped:
            return f"Connectivity check: {SKIPPED}"
        m, actual = self._matrix, self._actual
        # kept per outcome array: the engine hands out the same array for the same outcomes
        hit = self._reports.get(id(actual))
        if hit is None or hit[0] is not actual:
            rep = mismatch_report(self.probe_set, actual)
            n = int(m.size - np.count_nonzero(m))
            if len(self._reports) >= REPORTS_KEPT:
                self._reports.clear()
            hit = self._reports[id(actual)] = (
                actual, f"Connectivity check ({len(m)} probes, {n} mismatches):\n{rep}")
        return hit[1]

    def _config_text(self) -> str:
        res = self.backend.run({"command": "kubectl get networkpolicies -o yaml"})
        return res.output.rstrip("\n")

    def _text_observation(self) -> str:
        text = super()._text_observation()
        return text.replace("\nConfiguration of every node:\n", "\nConfiguration of every policy:\n")

    def _format_action(self, action: dict[str, str]) -> str:
        s = f"Command: {action['command']}"
        if action.get("stdin"):
            s += f"\nStdin: ({action['stdin'].count(chr(10)) + 1} lines)"
        return s

    def _after_step(self, action, result: CommandResult) -> None:
        self._fill_catalogue()  # entries render from the current policies (both interfaces)

    def _info_extra(self) -> dict:
        return {"namespace": str(self.generator.namespace), "probe_set": self.probes_name}

    def _decode(self, action: Any) -> dict[str, str]:
        if self.interface == "discrete":
            return super()._decode(action)
        command = action.get("command") if isinstance(action, dict) else None
        if isinstance(command, str) and len(command) > MAX_ACTION_CHARS:
            raise ActionError(f'"command" too long (at most {MAX_ACTION_CHARS} characters)')
        try:
            out = parse_json_action(action, self.text_keys, optional=("stdin",),
                                    max_chars=self.max_action_chars)
        except ActionError:
            text = action.decode("utf-8", "replace") if isinstance(action, bytes) else action
            if isinstance(text, str):
                t = text.strip().strip("`").strip()
                if t.startswith("kubectl ") and "\n" not in t and len(t) <= MAX_ACTION_CHARS:
                    return {"command": t}
            raise
        if len(out["command"]) > MAX_ACTION_CHARS:
            raise ActionError(f'"command" too long (at most {MAX_ACTION_CHARS} characters)')
        if "stdin" in out:
            if not isinstance(out["stdin"], str):
                raise ActionError('"stdin" must be a string (the manifest for kubectl apply -f -)')
            if len(out["stdin"]) > MAX_STDIN:
                raise ActionError(f'"stdin" too long (at most {MAX_STDIN} characters)')
        return out

