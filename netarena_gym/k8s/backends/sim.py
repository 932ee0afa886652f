"""The simulator backend of the Kubernetes task (the default: no cluster needed).

``apply(scenario)`` builds the in-memory API server with the scenario's faulty policies;
``run({"command": ..., "stdin": ...})`` executes one agent command line (allow-list,
shell, simulated kubectl); ``observe()`` evaluates the probe set with the policy engine
(cached until an object changes); ``objects()`` is the cluster as the engine reads it."""
from __future__ import annotations

from typing import Mapping

import numpy as np

from netarena_gym.core.scenario import Scenario
from netarena_gym.shell.parser import CommandResult
from netarena_gym.k8s.commands import executor
from netarena_gym.k8s.commands.allowlist import DEFAULT_VERBS
from netarena_gym.k8s.faults import apply_fault
from netarena_gym.k8s.commands.kubectl import Kubectl
from netarena_gym.k8s.cluster import base_cluster
from netarena_gym.k8s.grader import Cluster, PolicyEngine
from netarena_gym.k8s.workload import load_workload


def scenario_policies(scenario: Scenario) -> dict[str, dict]:
    """The faulty policy manifests of a scenario (baseline + faults, in order)."""
    pols = load_workload().policy_manifests()
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

    def apply(self, scenario: Scenario, prebuilt: dict | None = None) -> None:
        """``prebuilt``: the generator's policies for this scenario (else rebuilt from it)."""
        self.scenario = scenario
        self.namespace = scenario.params.get("namespace", "default")
        base = base_cluster(self.namespace, scenario.params.get("probes", "full"))
        pols = prebuilt if prebuilt is not None else scenario_policies(scenario)
        self.store = base.build_store(pols, end_port=self.end_port)
        self.kubectl = Kubectl(self.store, self.namespace)
        self.probe_set = base.probe_set
        self.engine = PolicyEngine(base.probe_set.probes, self.namespace)

    def reset_to_baseline(self) -> None:
        if self.scenario is not None:
            self.apply(self.scenario)

    def run(self, action: Mapping[str, str]) -> CommandResult:
        """``action``: ``{"command": <shell line>}`` plus an optional ``"stdin"``."""
        self.store.tick()
        return executor.run(action["command"], action.get("stdin", ""), self.namespace,
                            self.kubectl.run, self.verbs)

    def objects(self) -> Cluster:
        st = self.store
        ob = st.objects
        return Cluster(list(ob["namespaces"].values()), list(ob["pods"].values()),
                       list(ob["services"].values()), list(ob["networkpolicies"].values()),
                       st.version)

    def observe(self) -> np.ndarray:
        """Probe outcomes (True: the connection succeeds), in probe-set order."""
        return self.engine.evaluate(self.objects())

    def close(self) -> None:
        self.store = None
