"""The real backend (``backend="kubernetes"``): any cluster reachable through a kubeconfig.

* Each env instance works in its own namespace (``netarena-<8 hex>`` unless ``namespace=``
  names one), created on first use and deleted by ``close()`` only if this backend created
  it. Nothing outside that namespace is ever changed: the allow-list refuses writes
  elsewhere and kubectl runs with a private kubeconfig whose context namespace is this one.
* ``apply(scenario)`` creates the Online Boutique pods and Services (once; pod labels are
  restored on every reset), deletes the namespace's NetworkPolicies and creates the
  scenario's, with the ``last-applied-configuration`` annotation ``kubectl apply`` writes,
  through the ``kubernetes`` Python client.
* ``run(command, stdin)`` checks the command line with the shared allow-list and runs each
  ``kubectl`` with the real binary (``subprocess``, ``command_timeout`` seconds).
* ``observe()``: ``probe="policy"`` (default) evaluates the policy engine over the live
  objects (works on any API server, even one without nodes); ``probe="live"`` runs
  ``nc -z -w 1 <service> <port>`` in every source pod with ``kubectl exec``, for clusters
  whose pods run and whose network plugin enforces NetworkPolicies.
"""
from __future__ import annotations

import copy
import json
import os
import secrets
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Mapping

import numpy as np

from netarena_gym.core.scenario import Scenario
from netarena_gym.errors import require
from netarena_gym.shell.parser import ERROR, INVALID, OK, REFUSED, TIMEOUT, CommandResult
from netarena_gym.k8s.commands import executor
from netarena_gym.k8s.commands.allowlist import DEFAULT_VERBS, apply_refusal
from netarena_gym.k8s.commands.cmdline import UsageError, parse
from netarena_gym.k8s.commands.kubectl import LAST_APPLIED, last_applied, parse_manifests
from netarena_gym.k8s.cluster import DNS_POD
from netarena_gym.k8s.grader import Cluster, PolicyEngine
from netarena_gym.k8s.backends.sim import scenario_policies
from netarena_gym.k8s.workload import load_workload, yaml_module

MANAGED_BY = {"app.kubernetes.io/managed-by": "netarena-gym"}
_SKEW = "WARNING: version difference between client"


def find_kubeconfig(path: str | None = None) -> str:
    for cand in (path, os.environ.get("NETARENA_KUBECONFIG"), os.environ.get("KUBECONFIG"),
                 os.path.expanduser("~/.kube/config")):
        if cand and Path(cand).is_file():
            return cand
    raise FileNotFoundError("no kubeconfig: pass kubeconfig=, or set NETARENA_KUBECONFIG "
                            "(envs/k8s/start-apiserver.sh starts a local API server)")


class KubernetesBackend:
    name = "kubernetes"
    capabilities: frozenset[str] = frozenset()

    def __init__(self, *, kubeconfig: str | None = None, namespace: str | None = None,
                 probe: str = "policy", verbs=DEFAULT_VERBS, command_timeout: float = 10.0,
                 kubectl: str | None = None):
        if probe not in ("policy", "live"):
            raise ValueError("probe must be 'policy' or 'live'")
        client = require("kubernetes.client", "k8s")
        config = require("kubernetes.config", "k8s")
        self._client_mod = client
        self.kubeconfig = find_kubeconfig(kubeconfig)
        self.api_client = config.new_client_from_config(config_file=self.kubeconfig)
        if not self.api_client.configuration.verify_ssl:
            import urllib3
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        self.core = client.CoreV1Api(self.api_client)
        self.net = client.NetworkingV1Api(self.api_client)
        self.namespace = namespace or f"netarena-{secrets.token_hex(4)}"
        self.probe = probe
        self.verbs = frozenset(verbs)
        self.command_timeout = float(command_timeout)
        self.kubectl_bin = kubectl or shutil.which("kubectl") or "kubectl"
        self.created_namespace = False
        self._workload_ready = False
        self.scenario: Scenario | None = None
        self.engine: PolicyEngine | None = None
        self._kc_dir = tempfile.mkdtemp(prefix="netarena-kubeconfig-")
        self.private_kubeconfig = self._write_kubeconfig()
        self._dns_cache: list | None = None

    # ------------------------------------------------------------ kubeconfig
    def _write_kubeconfig(self) -> str:
        yaml = yaml_module()
        cfg = yaml.safe_load(Path(self.kubeconfig).read_text())
        cur = cfg.get("current-context")
        for ctx in cfg.get("contexts") or ():
            if ctx.get("name") == cur:
                ctx.setdefault("context", {})["namespace"] = self.namespace
        path = os.path.join(self._kc_dir, "kubeconfig")
        with open(path, "w") as f:
            yaml.safe_dump(cfg, f)
        os.chmod(path, 0o600)
        return path

    # ------------------------------------------------------------------ raw API
    def _list(self, what: str, namespace: str | None = None, **kw) -> dict:
        """A list call answered as raw JSON (dicts as the API server sends them)."""
        t = self.command_timeout
        calls = {"pods": lambda: self.core.list_namespaced_pod(namespace, **kw),
                 "services": lambda: self.core.list_namespaced_service(namespace, **kw),
                 "networkpolicies": lambda: self.net.list_namespaced_network_policy(namespace, **kw),
                 "namespaces": lambda: self.core.list_namespace(**kw)}
        kw.update(_preload_content=False, _request_timeout=t)
        return json.loads(calls[what]().data)

    def _ns_exists(self) -> bool:
        from kubernetes.client.rest import ApiException
        try:
            self.core.read_namespace(self.namespace, _request_timeout=self.command_timeout)
            return True
        except ApiException as e:
            if e.status == 404:
                return False
            raise

    # ------------------------------------------------------------------- apply
    def apply(self, scenario: Scenario, prebuilt=None) -> None:
        """``prebuilt`` (the generator's in-memory state, a simulator hint) is ignored."""
        from kubernetes.client.rest import ApiException
        self.scenario = scenario
        ns = self.namespace
        if scenario.params.get("namespace") not in (None, ns):
            scenario = Scenario.from_dict({**scenario.to_dict(),
                                           "params": {**scenario.params, "namespace": ns}})
        wl = load_workload()
        if not self._ns_exists():
            self.core.create_namespace({"apiVersion": "v1", "kind": "Namespace",
                                        "metadata": {"name": ns, "labels": {
                                            **MANAGED_BY, "kubernetes.io/metadata.name": ns}}})
            self.created_namespace = True
            self._workload_ready = False
        if not self._workload_ready:
            # Deployments, ReplicaSets, pods, Services and Endpoints, as the controllers of a
            # full cluster would hold them (the bundled server runs none)
            from netarena_gym.k8s.backends.kubernetes_workload import create_workload
            create_workload(self.api_client, ns, self.command_timeout)
            self._workload_ready = True
        want = {p["metadata"]["name"]: p["metadata"]["labels"] for p in wl.pods}
        for pod in self._list("pods", ns)["items"]:
            name = pod["metadata"]["name"]
            labels = pod["metadata"].get("labels") or {}
            if name in want and labels != want[name]:
                patch = {k: None for k in labels if k not in want[name]}
                patch.update(want[name])
                self.core.patch_namespaced_pod(name, ns, {"metadata": {"labels": patch}})
        for p in self._list("networkpolicies", ns)["items"]:
            try:
                self.net.delete_namespaced_network_policy(p["metadata"]["name"], ns)
            except ApiException as e:
                if e.status != 404:
                    raise
        for m in scenario_policies(scenario).values():
            body = copy.deepcopy(m)
            md = body.setdefault("metadata", {})
            md["annotations"] = {**(md.get("annotations") or {}), LAST_APPLIED: last_applied(m, ns)}
            self.net.create_namespaced_network_policy(ns, body)
        probes = load_workload().probe_sets[scenario.params.get("probes", "full")].probes
        self.engine = PolicyEngine(probes, ns)
        self._probes = probes

    def reset_to_baseline(self) -> None:
        if self.scenario is not None:
            self.apply(self.scenario)

    # --------------------------------------------------------------------- run
    def kubectl(self, argv: list[str], stdin: str = "") -> CommandResult:
        # A minimal environment: no KUBECONFIG or HOME of the caller, no proxy settings.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "KUBECONFIG": self.private_kubeconfig,
               "HOME": self._kc_dir, "LANG": "C.UTF-8"}
        # kubectl reads stdin only for ``apply -f -``: it gets exactly the documents the
        # allow-list checked (re-encoded as a JSON stream), never the agent's raw text.
        feed = ""
        try:
            verb = parse(argv[1:]).verb
        except UsageError:
            verb = None
        if stdin and verb == "apply":
            try:
                docs = parse_manifests(stdin)
            except ValueError as e:
                return CommandResult(f"error: {e}\n", 1, INVALID)
            why = apply_refusal(docs, self.namespace)
            if why:
                return CommandResult(f"netarena: command refused: {why}\n", 126, REFUSED)
            feed = "\n".join(json.dumps(d) for d in docs) + "\n"
        try:
            p = subprocess.run([self.kubectl_bin, *argv[1:]], input=feed, capture_output=True,
                               text=True, timeout=self.command_timeout, env=env)
        except subprocess.TimeoutExpired:
            return CommandResult(f"netarena: command timed out after {self.command_timeout:g} s\n",
                                 124, TIMEOUT)
        except OSError as e:
            return CommandResult(f"netarena: cannot run kubectl: {e}\n", 127, ERROR)
        err = "".join(line for line in p.stderr.splitlines(keepends=True) if not line.startswith(_SKEW))
        out = p.stdout + err
        if p.returncode == 0:
            return CommandResult(out, 0, OK)
        low = err.lstrip().lower()
        usage = low.startswith(("error: unknown command", "error: unknown flag",
                                "error: unknown shorthand", "error: flag needs"))
        return CommandResult(out, p.returncode, INVALID if usage else ERROR)

    def run(self, action: Mapping[str, str]) -> CommandResult:
        """``action``: ``{"command": <shell line>}`` plus an optional ``"stdin"``."""
        command = action["command"]
        stdin = action.get("stdin", "")
        return executor.run(command, stdin, self.namespace, self.kubectl, self.verbs)

    # ----------------------------------------------------------------- observe
    def objects(self) -> Cluster:
        ns = self.namespace
        pods = self._list("pods", ns)
        svcs = self._list("services", ns)
        pols = self._list("networkpolicies", ns)
        try:
            nss = self._list("namespaces")["items"]
        except Exception:  # noqa: BLE001 - no cluster-wide read: our namespace only
            nss = [{"metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}}]
        version = (pods["metadata"].get("resourceVersion"), svcs["metadata"].get("resourceVersion"),
                   pols["metadata"].get("resourceVersion"))
        return Cluster(nss, pods["items"] + self._dns_pods(), svcs["items"], pols["items"], version)

    def _dns_pods(self) -> list:
        if self._dns_cache is None:
            try:
                items = self._list("pods", "kube-system", label_selector="k8s-app=kube-dns")["items"]
            except Exception:  # noqa: BLE001
                items = []
            if not items:  # no DNS pods visible (e.g. an API server without nodes): the model's
                dns = copy.deepcopy(DNS_POD)
                dns["metadata"]["namespace"] = "kube-system"
                items = [dns]
            self._dns_cache = items
        return self._dns_cache

    def observe(self) -> np.ndarray:
        if self.probe == "policy":
            return self.engine.evaluate(self.objects())
        return self._live()

    def _live(self) -> np.ndarray:
        wl = load_workload()
        container = {p["metadata"]["name"]: p["spec"]["containers"][0]["name"] for p in wl.pods}

        def probe(pr) -> bool:
            argv = ["kubectl", "exec", pr.source, "-c", container[pr.source], "--", "nc", "-z",
                    "-w", "1", pr.service, str(pr.port)]
            env = dict(os.environ, KUBECONFIG=self.private_kubeconfig)
            try:
                r = subprocess.run([self.kubectl_bin, *argv[1:]], capture_output=True, text=True,
                                   timeout=min(self.command_timeout, 5.0), env=env)
            except subprocess.TimeoutExpired:
                return False
            return r.returncode == 0

        with ThreadPoolExecutor(max_workers=16) as pool:
            return np.array(list(pool.map(probe, self._probes)), dtype=bool)

    # ------------------------------------------------------------------- close
    def close(self) -> None:
        try:
            if self.created_namespace:
                self.core.delete_namespace(self.namespace, _request_timeout=self.command_timeout)
                self.created_namespace = False
        finally:
            shutil.rmtree(self._kc_dir, ignore_errors=True)
            self.api_client.close()
