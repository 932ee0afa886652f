"""The simulator backend of the Kubernetes task (the default: no cluster needed).

``apply(scenario)`` builds the in-memory API server with the scenario's faulty policies;
``run({"command": ..., "stdin": ...})`` executes one agent command line (allow-list,
shell, simulated kubectl; a JSON patch of one policy, what the discrete catalogue sends,
is parsed once per command line and then applied directly, see ``executor.plan``; the
catalogue's ``kubectl get networkpolicy NAME -o yaml`` is kept per stored policy); ``observe()`` evaluates the probe set with the policy engine
(incremental, cached until an object changes; one engine across resets); ``objects()`` is the cluster as the engine reads it.

The agent is held to the same RBAC as on a real cluster (:mod:`netarena_gym.k8s.rbac`):
reads the Role does not allow (another namespace, ``-A``, cluster-scoped kinds) answer
with the API server's ``Error from server (Forbidden)`` lines, exit status 1."""
from __future__ import annotations

import re
from typing import Mapping

import numpy as np

from netarena_gym.core.scenario import Scenario
from netarena_gym.shell.parser import ERROR, CommandResult
from netarena_gym.k8s.commands import executor
from netarena_gym.k8s.commands.allowlist import DEFAULT_VERBS
from netarena_gym.k8s.commands.cmdline import BOOL_FLAGS, VALUE_FLAGS, UsageError, parse, resource_args
from netarena_gym.k8s.faults import apply_fault
from netarena_gym.k8s.commands.kubectl import Kubectl, run_json_patch
from netarena_gym.k8s.cluster import base_cluster, store_cluster
from netarena_gym.k8s.grader import Cluster, PolicyEngine
from netarena_gym.k8s.rbac import denials
from netarena_gym.k8s.workload_large import workload_for

PLAN_CACHE = 4096  # command lines whose plan a backend keeps
_UNPLANNED = object()
_READ_ONE = re.compile(r"kubectl get networkpolicy ([a-z0-9]([-a-z0-9]*[a-z0-9])?) -o yaml")
_LONG = {v: k for k, v in {**VALUE_FLAGS, **BOOL_FLAGS}.items() if k.startswith("--")}


def scenario_policies(scenario: Scenario) -> dict[str, dict]:
    """The faulty policy manifests of a scenario (baseline + faults, in order)."""
    pols = workload_for(scenario.params.get("app", "boutique")).policy_manifests()
    for f in scenario.faults:
        apply_fault(pols, f)
    return pols


class SimBackend:
    name = "sim"
    capabilities: frozenset[str] = frozenset()

    def __init__(self, *, verbs=DEFAULT_VERBS, end_port: bool = True, **_):
        self.verbs = frozenset(verbs)
        self.end_port = end_port
        self.store = None
        self.kubectl: Kubectl | None = None
        self.scenario: Scenario | None = None
        self.namespace = "default"
        self.engine: PolicyEngine | None = None
        self._cluster: Cluster | None = None
        self._workload = None  # (store token, workload version) of self._cluster
        self._plans: dict = {}  # (command, namespace) -> JsonPatchPlan | None (see executor.plan)
        self._reads: dict = {}  # (command, namespace, id(policy)) -> (policy, result), see _read_one

    def apply(self, scenario: Scenario, prebuilt: dict | None = None) -> None:
        """``prebuilt``: the generator's policies for this scenario (else rebuilt from it)."""
        self.scenario = scenario
        self.namespace = scenario.params.get("namespace", "default")
        base = base_cluster(self.namespace, scenario.params.get("probes", "full"),
                            scenario.params.get("app", "boutique"))
        pols = prebuilt if prebuilt is not None else scenario_policies(scenario)
        self.store = base.build_store(pols, end_port=self.end_port)
        self.kubectl = Kubectl(self.store, self.namespace)
        self.probe_set = base.probe_set
        if self.engine is None or self.engine.probes != base.probe_set.probes \
                or self.engine.namespace != self.namespace:
            self.engine = PolicyEngine(base.probe_set.probes, self.namespace)

    def reset_to_baseline(self) -> None:
        if self.scenario is not None:
            self.apply(self.scenario)

    def run(self, action: Mapping[str, str]) -> CommandResult:
        """``action``: ``{"command": <shell line>}`` plus an optional ``"stdin"``."""
        self.store.tick()
        command, stdin = action["command"], action.get("stdin", "")
        key = (command, self.namespace)
        plan = self._plans.get(key, _UNPLANNED)
        if plan is _UNPLANNED:
            if len(self._plans) >= PLAN_CACHE:
                self._plans.clear()
            plan = self._plans[key] = executor.plan(command, "", self.namespace, self.verbs)
        if plan is not None and not stdin:
            return run_json_patch(self.kubectl, plan)
        if not stdin:
            m = _READ_ONE.fullmatch(command)
            if m is not None:
                return self._read_one(command, m.group(1))
        return executor.run(command, stdin, self.namespace, self.kubectl_as_agent, self.verbs)

    def _read_one(self, command: str, name: str) -> CommandResult:
        """``kubectl get networkpolicy NAME -o yaml`` (the catalogue's inspect): its answer
        is a function of the stored policy alone (the object's text, or NotFound; refused
        the same way every time), so it is kept per (line, namespace, object) and replayed
        (stored objects are never changed in place)."""
        obj = self.store.find("networkpolicies", self.namespace, name)
        key = (command, self.namespace, id(obj))
        hit = self._reads.get(key)
        if hit is None or hit[0] is not obj:
            res = executor.run(command, "", self.namespace, self.kubectl_as_agent, self.verbs)
            if len(self._reads) >= PLAN_CACHE:
                self._reads.clear()
            hit = self._reads[key] = (obj, res)
        res = hit[1]
        return CommandResult(res.output, res.status, res.kind)

    def kubectl_as_agent(self, argv: list[str], stdin: str = "") -> CommandResult:
        """The simulated kubectl, with the agent's RBAC applied to its reads."""
        inv = parse(argv[1:])  # the executor answered usage errors already
        if inv.verb not in ("get", "describe") or inv.flags.get("help"):
            return self.kubectl.run(argv, stdin)
        try:
            targets = resource_args(inv.args)
        except UsageError:
            return self.kubectl.run(argv, stdin)
        ns = inv.flags.get("namespace", self.namespace)
        refused, msg = denials(targets, ns, bool(inv.flags.get("all-namespaces")), self.namespace)
        if not refused:
            return self.kubectl.run(argv, stdin)
        rest = [t for i, t in enumerate(targets) if i not in refused]
        if not rest:
            return CommandResult(msg, 1, ERROR)
        # the allowed requests still print (kubectl says "No resources found" only without errors)
        res = self.kubectl.run(_argv(inv, rest), stdin)
        out = "".join(line for line in res.output.splitlines(keepends=True)
                      if not line.startswith("No resources found"))
        return CommandResult(out + msg, 1, ERROR)

    def objects(self) -> Cluster:
        """The store's objects (the same :class:`Cluster` until the store changes: its
        ``version`` moves on every write and a new store has a new token; after writes to
        policies only, the new one shares the workload's lists with the last)."""
        st = self.store
        c = self._cluster
        if c is None or c.version != (st.token, st.version):
            workload = (st.token, st.workload_version)
            c = self._cluster = store_cluster(st, c if workload == self._workload else None)
            self._workload = workload
        return c

    def observe(self) -> np.ndarray:
        """Probe outcomes (True: the connection succeeds), in probe-set order."""
        return self.engine.evaluate(self.objects())

    def close(self) -> None:
        self.store = None
        self._cluster = None
        self._workload = None


def _argv(inv, targets) -> list[str]:
    """A kubectl argv for the same verb and flags on ``targets`` only."""
    types = {t for t, _ in targets}
    if len(types) == 1 and all(n for _, n in targets):
        pos = [targets[0][0], *(n for _, n in targets)]
    elif any(n for _, n in targets):
        pos = [f"{t}/{n}" if n else t for t, n in targets]
    else:
        pos = [",".join(t for t, _ in targets)]
    flags = [f"{_LONG[k]}={v}" if v is not True else _LONG[k] for k, v in inv.flags.items()
             if k in _LONG]
    return ["kubectl", inv.verb, *pos, *flags]
