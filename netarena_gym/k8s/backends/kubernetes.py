"""The real backend (``backend="kubernetes"``): any cluster reachable through a kubeconfig.

* Each env instance works in its own namespace (``netarena-<8 hex>`` unless ``namespace=``
  names one), created on first use and deleted by ``close()`` only if this backend created
  it. An existing ``namespace=`` must hold no NetworkPolicy (each reset replaces all of
  them); one that does is refused (:class:`BackendUnavailable`) and left untouched.
* **The agent never holds the caller's credentials.** With them (the grader's side) the
  backend creates, in that namespace, a ServiceAccount, a Role and a RoleBinding named
  ``netarena-agent`` (:mod:`netarena_gym.k8s.rbac`: reads of the namespace's objects, writes
  of its NetworkPolicies, nothing else), labelled with this instance's id, and asks the
  TokenRequest API for a short-lived token of that account. The agent's ``kubectl`` runs
  with a kubeconfig holding only that token (mode 0600, in a folder only the grader
  writes and only the grader and the agent user may enter, never opened through a link), in a
  minimal environment, and, when the grader runs as root, as an unprivileged user
  (``agent_user``, default ``nobody``) that cannot read the caller's kubeconfig. The API
  server enforces the Role; the shared allow-list is the second line.
* ``apply(scenario)`` creates the Online Boutique pods and Services (once; pod labels are
  restored on every reset), deletes the namespace's NetworkPolicies and creates the
  scenario's, with the ``last-applied-configuration`` annotation ``kubectl apply`` writes,
  through the ``kubernetes`` Python client.
* ``run(command, stdin)`` checks the command line with the shared allow-list and runs each
  ``kubectl`` with the real binary (``subprocess``). Each kubectl runs at most
  ``command_timeout`` seconds, and the whole line at most ``step_timeout`` (default 5 s or
  ``command_timeout``, whichever is longer; :class:`~netarena_gym.shell.policy.LineBudget`):
  a kubectl past either is killed, the result is a ``timeout`` and the rest of the line is
  not run.
* ``observe()``: ``probe="policy"`` (default) evaluates the policy engine over the live
  objects (works on any API server, even one without nodes; namespaces are read with the
  ``kubernetes.io/metadata.name`` label servers add from 1.21 on, :func:`with_name_label`); ``probe="live"`` runs
  ``nc -z -w 1 <service> <port>`` in every source pod with ``kubectl exec`` (the grader's
  credentials), for clusters whose pods run and whose network plugin enforces policies.
* Every API call waits ``command_timeout`` seconds at most; a failed or stalled server
  during ``apply`` raises :class:`BackendUnavailable` with the server's message.
* ``close()`` deletes the RoleBinding, Role and ServiceAccount it created, each by its
  recorded name and uid after checking the instance label, then the namespace if it
  created it; in an existing ``namespace=``, the workload objects it created (by recorded
  name and uid) and the namespace's NetworkPolicies (the scenario's and the agent's).
  Nothing else is touched. A ``reset`` after ``close`` starts again, in a new namespace
  unless ``namespace=`` fixed one.

The caller's credentials need: create/delete of namespaces (or an existing ``namespace=``),
pods, services, networkpolicies, serviceaccounts, roles, rolebindings and
``serviceaccounts/token`` in that namespace, and ``escalate``-free binding of the Role (the
caller must hold every permission the Role grants, as RBAC requires).
"""
from __future__ import annotations

import copy
import json
import os
import secrets
import shutil
import subprocess
import tempfile
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Mapping

import numpy as np

from netarena_gym.core.scenario import Scenario
from netarena_gym.errors import BackendUnavailable, require
from netarena_gym.shell.parser import ERROR, INVALID, OK, REFUSED, CommandResult
from netarena_gym.shell.policy import LineBudget, line_budget_seconds
from netarena_gym.k8s.commands import executor
from netarena_gym.k8s.commands.allowlist import DEFAULT_VERBS, apply_refusal
from netarena_gym.k8s.commands.cmdline import UsageError, parse
from netarena_gym.k8s.commands.kubectl import LAST_APPLIED, last_applied, parse_manifests
from netarena_gym.k8s.cluster import DNS_POD
from netarena_gym.k8s.grader import Cluster, PolicyEngine
from netarena_gym.k8s.rbac import AGENT_NAME, agent_objects
from netarena_gym.k8s.backends.kubernetes_credentials import (
    agent_ids, find_kubeconfig, remove_folders, write_agent_kubeconfig, write_grader_kubeconfig)
from netarena_gym.k8s.backends.sim import scenario_policies
from netarena_gym.k8s.workload import load_workload

MANAGED_BY = {"app.kubernetes.io/managed-by": "netarena-gym"}
INSTANCE_LABEL = "netarena-gym/instance"
TOKEN_AUDIENCE = "https://kubernetes.default.svc"
_SKEW = "WARNING: version difference between client"


class KubernetesBackend:
    name = "kubernetes"
    capabilities: frozenset[str] = frozenset()

    def __init__(self, *, kubeconfig: str | None = None, namespace: str | None = None,
                 probe: str = "policy", verbs=DEFAULT_VERBS, command_timeout: float = 10.0,
                 step_timeout: float | None = None,
                 kubectl: str | None = None, agent_user: str | int | None = "nobody",
                 token_ttl: int = 3600):
        if probe not in ("policy", "live"):
            raise ValueError("probe must be 'policy' or 'live'")
        client = require("kubernetes.client", "k8s")
        config = require("kubernetes.config", "k8s")
        self._client_mod = client
        self._config_mod = config
        self.kubeconfig = find_kubeconfig(kubeconfig)
        self._given_namespace = namespace
        self.probe = probe
        self.verbs = frozenset(verbs)
        self.command_timeout = float(command_timeout)
        self.step_timeout = line_budget_seconds(step_timeout, self.command_timeout)
        self.token_ttl = max(600, int(token_ttl))
        self.kubectl_bin = kubectl or shutil.which("kubectl") or "kubectl"
        self._uid, self._gid = agent_ids(agent_user)
        self.scenario: Scenario | None = None
        self.engine: PolicyEngine | None = None
        self._open()

    def _open(self) -> None:
        """A fresh connection, instance id, namespace name (unless ``namespace=`` fixed one)
        and private folders: what ``__init__`` sets up and ``close()`` takes down, so a
        closed backend opens again on the next ``apply`` (a reset after ``close``)."""
        client = self._client_mod
        self.api_client = self._config_mod.new_client_from_config(config_file=self.kubeconfig)
        if not self.api_client.configuration.verify_ssl:
            import urllib3
            urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        self.core = client.CoreV1Api(self.api_client)
        self.net = client.NetworkingV1Api(self.api_client)
        self.rbac = client.RbacAuthorizationV1Api(self.api_client)
        # a namespace this backend deleted stays Terminating a while (for good on a server
        # without a namespace controller): a generated name is never used twice
        self.namespace = self._given_namespace or f"netarena-{secrets.token_hex(4)}"
        self.instance = secrets.token_hex(6)
        self.labels = {**MANAGED_BY, INSTANCE_LABEL: self.instance}
        self.created_namespace = False
        self._namespace_checked = False
        self.created: list[tuple[str, str, str]] = []  # (kind, name, uid) of the agent's RBAC
        self.workload_created: list[tuple[str, str, str]] = []  # (kind, name, uid) we made
        self._workload_ready = False
        self._closed = False
        # the grader's kubeconfig (the caller's credentials, for ``kubectl exec`` probes)
        self._kc_dir = tempfile.mkdtemp(prefix="netarena-grader-")
        # the agent's files: the grader's folder (mode 0710, group the agent's: the agent may
        # enter it, not write to it, nobody else may enter) holding the token kubeconfig,
        # which only the grader writes, and inside it the agent's HOME and working
        # directory (the agent user's), where kubectl keeps its cache
        self._agent_dir = tempfile.mkdtemp(prefix="netarena-agent-")
        self._agent_home = os.path.join(self._agent_dir, "home")
        os.mkdir(self._agent_home, 0o700)
        if self._uid is not None:
            os.chown(self._agent_dir, -1, self._gid)
            os.chmod(self._agent_dir, 0o710)
            os.chown(self._agent_home, self._uid, self._gid)
        self.agent_kubeconfig = os.path.join(self._agent_dir, "kubeconfig")
        self._token_expires = 0.0
        self._dns_cache: list | None = None
        # the folders go with the object even when close() is never called
        self._finalizer = weakref.finalize(self, remove_folders, self._kc_dir, self._agent_dir)
        self.grader_kubeconfig = write_grader_kubeconfig(self.kubeconfig, self.namespace,
                                                         self._kc_dir)

    # ------------------------------------------------------------ kubeconfig
    def _ensure_agent(self) -> None:
        """The agent's ServiceAccount, Role and RoleBinding (created once, with the caller's
        credentials), and a fresh token kubeconfig when the last token is near its end."""
        from kubernetes.client.rest import ApiException
        ns = self.namespace
        have_kinds = {kind for kind, _, _ in self.created}
        for body in agent_objects(ns, self.labels):
            kind = body["kind"]
            if kind in have_kinds:
                continue  # made before (an earlier call failed after it: the rest is made now)
            read, create, _ = self._rbac_calls(kind)
            try:
                have = read(AGENT_NAME, ns, _request_timeout=self.command_timeout)
            except ApiException as e:
                if e.status != 404:
                    raise
                have = create(ns, body, _request_timeout=self.command_timeout)
            if (have.metadata.labels or {}).get(INSTANCE_LABEL) != self.instance:
                raise BackendUnavailable(
                    f"{kind} {ns}/{AGENT_NAME} exists and was not created by this env: "
                    "use another namespace= (one env per namespace)")
            self.created.append((kind, AGENT_NAME, have.metadata.uid))
        if time.time() < self._token_expires - 300:
            return
        req = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"audiences": [TOKEN_AUDIENCE], "expirationSeconds": self.token_ttl}}
        tr = self.core.create_namespaced_service_account_token(
            AGENT_NAME, ns, req, _request_timeout=self.command_timeout)
        self._write_agent_kubeconfig(tr.status.token)
        self._token_expires = time.time() + self.token_ttl

    def _rbac_calls(self, kind: str):
        c, r = self.core, self.rbac
        return {"ServiceAccount": (c.read_namespaced_service_account,
                                   c.create_namespaced_service_account,
                                   c.delete_namespaced_service_account),
                "Role": (r.read_namespaced_role, r.create_namespaced_role,
                         r.delete_namespaced_role),
                "RoleBinding": (r.read_namespaced_role_binding, r.create_namespaced_role_binding,
                                r.delete_namespaced_role_binding)}[kind]

    def _write_agent_kubeconfig(self, token: str) -> None:
        write_agent_kubeconfig(self.agent_kubeconfig, self.api_client.configuration, token,
                               self.namespace, self._uid, self._gid)

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
        """``prebuilt`` (the generator's in-memory state, a simulator hint) is ignored. An API
        server that fails or stops answering (each call waits ``command_timeout`` seconds
        at most) raises :class:`BackendUnavailable`."""
        import urllib3
        from kubernetes.client.rest import ApiException
        if self._closed:
            self._open()
        try:
            self._apply(scenario)
        except (ApiException, urllib3.exceptions.HTTPError) as e:
            raise BackendUnavailable(
                f"the API server failed while setting up the episode in namespace "
                f"{self.namespace}: {_api_error(e)}") from e

    def _apply(self, scenario: Scenario) -> None:
        self.scenario = scenario
        ns, t = self.namespace, self.command_timeout
        if scenario.params.get("namespace") not in (None, ns):
            scenario = Scenario.from_dict({**scenario.to_dict(),
                                           "params": {**scenario.params, "namespace": ns}})
        wl = load_workload()
        if not self._ns_exists():
            self.core.create_namespace({"apiVersion": "v1", "kind": "Namespace",
                                        "metadata": {"name": ns, "labels": {
                                            **MANAGED_BY, "kubernetes.io/metadata.name": ns}}},
                                       _request_timeout=t)
            self.created_namespace = True
            self._workload_ready = False
        elif not self._namespace_checked and not self.created_namespace:
            self._check_foreign_namespace()
        self._namespace_checked = True
        self._ensure_agent()
        if not self._workload_ready:
            # Deployments, ReplicaSets, pods, Services and Endpoints, as the controllers of a
            # full cluster would hold them (the bundled server runs none)
            from netarena_gym.k8s.backends.kubernetes_workload import create_workload
            self.workload_created += create_workload(self.api_client, ns, t)
            self._workload_ready = True
        want = {p["metadata"]["name"]: p["metadata"]["labels"] for p in wl.pods}
        for pod in self._list("pods", ns)["items"]:
            name = pod["metadata"]["name"]
            labels = pod["metadata"].get("labels") or {}
            if name in want and labels != want[name]:
                patch = {k: None for k in labels if k not in want[name]}
                patch.update(want[name])
                self.core.patch_namespaced_pod(name, ns, {"metadata": {"labels": patch}},
                                               _request_timeout=t)
        self._delete_policies()
        for m in scenario_policies(scenario).values():
            body = copy.deepcopy(m)
            md = body.setdefault("metadata", {})
            md["annotations"] = {**(md.get("annotations") or {}), LAST_APPLIED: last_applied(m, ns)}
            self.net.create_namespaced_network_policy(ns, body, _request_timeout=t)
        probes = load_workload().probe_sets[scenario.params.get("probes", "full")].probes
        self.engine = PolicyEngine(probes, ns)
        self._probes = probes

    def _check_foreign_namespace(self) -> None:
        """A namespace this backend did not create (``namespace=``) is used only when it
        holds no NetworkPolicy: every reset replaces all of the namespace's NetworkPolicies
        with the scenario's (the agent's own included), and ``close()`` removes them, so one
        that was there before would be deleted, and would change every probe besides."""
        have = [p["metadata"]["name"] for p in self._list("networkpolicies", self.namespace)["items"]]
        if have:
            names = ", ".join(sorted(have)[:5]) + (", ..." if len(have) > 5 else "")
            raise BackendUnavailable(
                f"namespace {self.namespace} already holds NetworkPolicies ({names}): the env "
                "replaces every NetworkPolicy of its namespace at each reset; give it an empty "
                "namespace= (one env per namespace), or none to let it create its own")

    def _delete_policies(self) -> None:
        """Every NetworkPolicy of the namespace: the scenario's and what the agent made (the
        namespace held none of anybody else's, :meth:`_check_foreign_namespace`). The agent
        may write ``metadata.finalizers``, which no controller here removes: a policy that
        has them would stay (``Terminating``) and block the next reset's create of its name,
        and the namespace's deletion, so they are cleared first."""
        from kubernetes.client.rest import ApiException
        t = self.command_timeout
        for p in self._list("networkpolicies", self.namespace)["items"]:
            name = p["metadata"]["name"]
            try:
                if p["metadata"].get("finalizers"):
                    self.net.patch_namespaced_network_policy(
                        name, self.namespace, [{"op": "remove", "path": "/metadata/finalizers"}],
                        _request_timeout=t)
                self.net.delete_namespaced_network_policy(name, self.namespace, _request_timeout=t)
            except ApiException as e:
                if e.status != 404:
                    raise

    def reset_to_baseline(self) -> None:
        if self.scenario is not None:
            self.apply(self.scenario)

    # --------------------------------------------------------------------- run
    def kubectl(self, argv: list[str], stdin: str = "",
                budget: LineBudget | None = None) -> CommandResult:
        """One kubectl of a command line, as the agent, within what is left of the line's
        ``budget`` (None: ``command_timeout``); killed when it runs past it."""
        # kubectl reads stdin only for ``apply -f -``: it gets exactly the documents the
        # allow-list checked (re-encoded as a JSON stream), never the agent's raw text.
        if budget is None:
            budget = LineBudget(self.command_timeout, self.command_timeout)
        spent = budget.spent("kubectl")
        if spent is not None:
            return spent
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
        limit = budget.limit()
        try:
            p = self.agent_process(argv, feed, timeout=limit)
        except subprocess.TimeoutExpired as e:
            out = e.stdout or ""
            return budget.timed_out(limit, out.decode(errors="replace")
                                    if isinstance(out, bytes) else out)
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

    def agent_process(self, argv: list[str], stdin: str = "",
                      timeout: float | None = None) -> subprocess.CompletedProcess:
        """Run the real kubectl as the agent, with no checks of ours: the agent's token
        kubeconfig only, a minimal environment (no KUBECONFIG or HOME of the caller, no
        proxy settings), its private folder as HOME and working directory, and the
        unprivileged agent user when we are root. What the API server then allows is what
        the agent can do; the attack tests call this to check exactly that."""
        self._ensure_agent()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "KUBECONFIG": self.agent_kubeconfig,
               "HOME": self._agent_home, "LANG": "C.UTF-8"}
        return subprocess.run([self.kubectl_bin, *argv[1:]], input=stdin, capture_output=True,
                              text=True, env=env, cwd=self._agent_home,
                              timeout=self.command_timeout if timeout is None else timeout,
                              **self._drop())

    def run(self, action: Mapping[str, str]) -> CommandResult:
        """``action``: ``{"command": <shell line>}`` plus an optional ``"stdin"``."""
        command = action["command"]
        stdin = action.get("stdin", "")
        budget = LineBudget(self.step_timeout, self.command_timeout)
        return executor.run(command, stdin, self.namespace,
                            lambda argv, feed: self.kubectl(argv, feed, budget), self.verbs)

    # ----------------------------------------------------------------- observe
    def objects(self) -> Cluster:
        ns = self.namespace
        pods = self._list("pods", ns)
        svcs = self._list("services", ns)
        pols = self._list("networkpolicies", ns)
        try:
            nss = self._list("namespaces")["items"]
        except Exception:  # noqa: BLE001 - no cluster-wide read: our namespace only
            nss = [{"metadata": {"name": ns}}]
        nss = [with_name_label(n) for n in nss]
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
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self._kc_dir,
                   "KUBECONFIG": self.grader_kubeconfig}
            try:
                r = subprocess.run([self.kubectl_bin, *argv[1:]], capture_output=True, text=True,
                                   timeout=min(self.command_timeout, 5.0), env=env)
            except subprocess.TimeoutExpired:
                return False
            return r.returncode == 0

        with ThreadPoolExecutor(max_workers=16) as pool:
            return np.array(list(pool.map(probe, self._probes)), dtype=bool)

    def _drop(self) -> dict:
        """``subprocess`` arguments that run the agent's kubectl as the agent user."""
        if self._uid is None:
            return {}
        return {"user": self._uid, "group": self._gid, "extra_groups": [], "umask": 0o077}

    # ------------------------------------------------------------------- close
    def close(self) -> None:
        """Deletes what this backend created, each by its recorded name and uid: the agent's
        RoleBinding, Role and ServiceAccount (after checking this instance's label), then
        the namespace if it created it; in a namespace it did not create, the workload
        objects it made and the namespace's NetworkPolicies (the scenario's and the
        agent's). A later ``apply`` opens it again, in a new namespace unless ``namespace=``
        fixed one."""
        if self._closed:
            return
        from kubernetes.client.rest import ApiException
        t = self.command_timeout
        try:
            for kind, name, uid in reversed(self.created):
                read, _, delete = self._rbac_calls(kind)
                try:
                    have = read(name, self.namespace, _request_timeout=t)
                    if (have.metadata.uid == uid and
                            (have.metadata.labels or {}).get(INSTANCE_LABEL) == self.instance):
                        delete(name, self.namespace, _request_timeout=t,
                               body={"preconditions": {"uid": uid}})
                except ApiException as e:
                    if e.status != 404:
                        raise
            self.created = []
            if self.created_namespace:
                self._delete_policies()  # finalizers the agent set would keep it Terminating
                self.core.delete_namespace(self.namespace, _request_timeout=t)
                self.created_namespace = False
            elif self._namespace_checked:
                self._delete_policies()
                from netarena_gym.k8s.backends.kubernetes_workload import delete_workload
                delete_workload(self.api_client, self.namespace, self.workload_created, t)
            self.workload_created = []
        finally:
            self._closed = True
            self._finalizer()
            self.api_client.close()


NAME_LABEL = "kubernetes.io/metadata.name"


def with_name_label(namespace: dict) -> dict:
    """A Namespace as servers from 1.21 on keep it, labelled ``kubernetes.io/metadata.name``
    with its name (upstream's KinD cluster and the simulator's namespaces have it; 1.20,
    the bundled server, does not add it): a policy selecting kube-system by that label, the
    usual way to allow DNS, is judged as on the simulator."""
    md = namespace.get("metadata") or {}
    labels = md.get("labels") or {}
    if not md.get("name") or labels.get(NAME_LABEL) == md["name"]:
        return namespace
    return {**namespace, "metadata": {**md, "labels": {**labels, NAME_LABEL: md["name"]}}}


def _api_error(e: Exception) -> str:
    """One line for an API failure: the status and the server's message when it sent one."""
    status, reason, body = getattr(e, "status", None), getattr(e, "reason", None), getattr(e, "body", None)
    if status is None:
        return f"{type(e).__name__}: {e}"
    try:
        msg = json.loads(body).get("message") if body else None
    except (ValueError, AttributeError):
        msg = None
    return f"{status} {reason}" + (f": {msg}" if msg else "")
