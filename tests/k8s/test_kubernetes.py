"""Against a real API server (``NETARENA_KUBECONFIG``; skipped without one): the real
backend, its clean-up, and the differential test of simulated against real kubectl. The
tests without the ``kubernetes`` mark need only the Python client: a stalled server on
loopback, or no server at all."""
import http.server
import json
import os
import secrets
import subprocess
import threading
import time
import types

import gymnasium as gym
import pytest

from netarena_gym.agents.episode import play_episode
from netarena_gym.k8s.expert import K8sExpert
from tests.k8s import differential
from tests.k8s.conftest import ENV_ID

K = pytest.mark.kubernetes


def _namespaces(kubeconfig):
    out = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "ns", "-o", "name"],
                         capture_output=True, text=True, timeout=30).stdout
    return {line.split("/", 1)[1] for line in out.split()}


@K
def test_real_backend_episode_and_cleanup(kubeconfig):
    before = _namespaces(kubeconfig)
    env = gym.make(ENV_ID, level=2, backend="kubernetes", kubeconfig=kubeconfig)
    ns = env.unwrapped.backend.namespace
    try:
        obs, info = env.reset(seed=4)
        assert ns in _namespaces(kubeconfig) and ns not in before
        assert obs.startswith("Connectivity check (121 probes, ")
        obs, r, term, trunc, info = env.step({"command": "kubectl get networkpolicies"})
        assert "adservice               app=adservice" in obs
        # refused commands never reach the cluster
        obs, r, term, trunc, info = env.step({"command": "kubectl delete pod frontend"})
        assert info["command_kind"] == "refused"
        obs, r, term, trunc, info = env.step({"command": "kubectl -n default delete netpol x"})
        assert info["command_kind"] == "refused"
        res = [play_episode(env, K8sExpert(), seed=10 + i) for i in range(4)]
        assert all(x.correct and x.safe for x in res)
        # the same scenario gives the same observation on both backends
        sim = gym.make(ENV_ID, level=2, namespace=ns)
        o_sim, i_sim = sim.reset(seed=21)
        o_real, _ = env.reset(options={"scenario": i_sim["scenario"]})
        assert o_sim == o_real
    finally:
        env.close()
    phase = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "ns", ns, "-o",
                            "jsonpath={.status.phase}"], capture_output=True, text=True, timeout=30)
    assert phase.returncode != 0 or phase.stdout == "Terminating"
    assert _namespaces(kubeconfig) - {ns} >= before - {ns}  # nothing else was touched


@K
def test_a_finalizer_the_agent_sets_blocks_neither_the_next_reset_nor_the_clean_up(kubeconfig):
    """NetworkPolicies are the agent's to write, ``metadata.finalizers`` too, and nothing
    here removes a finalizer: a policy deleted with one stays ``Terminating``, so the next
    reset could not make its name again (409 "object is being deleted"), and the namespace
    would never go."""
    env = gym.make(ENV_ID, level=1, backend="kubernetes", kubeconfig=kubeconfig)
    ns = env.unwrapped.backend.namespace
    kc = ["kubectl", "--kubeconfig", kubeconfig, "-n", ns]

    def field(name, path):
        out = subprocess.run(kc + ["get", "netpol", name, "-o", f"jsonpath={{{path}}}"],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        return out.stdout

    try:
        env.reset(seed=1)
        name = env.unwrapped.backend.objects().policies[0]["metadata"]["name"]
        _, _, _, _, info = env.step({"command": f"kubectl patch netpol {name} -p "
                                     """'{"metadata":{"finalizers":["example.com/keep"]}}'"""})
        assert info["command_kind"] == "ok"
        env.step({"command": f"kubectl delete netpol {name}"})
        assert field(name, ".metadata.deletionTimestamp")  # Terminating, still enforced
        env.reset(seed=1)
        assert field(name, ".metadata.finalizers") == ""
        assert not field(name, ".metadata.deletionTimestamp")
        env.step({"command": f"kubectl patch netpol {name} -p "
                  """'{"metadata":{"finalizers":["example.com/keep"]}}'"""})
    finally:
        env.close()
    phase = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "netpol", "-n", ns,
                            "-o", "name"], capture_output=True, text=True, timeout=30)
    assert phase.stdout == ""  # the namespace holds nothing that would keep it


@K
def test_existing_namespace_is_used_kept_and_left_as_found(kubeconfig):
    """``namespace=`` an existing one: used, not deleted, and on close emptied of what the
    env made there (the workload it created, the scenario's and the agent's policies)."""
    name = f"netarena-kept-{secrets.token_hex(3)}"
    kc = ["kubectl", "--kubeconfig", kubeconfig, "-n", name]

    def names(kind):
        out = subprocess.run(kc + ["get", kind, "-o", "name"], capture_output=True, text=True,
                             timeout=30)
        assert out.returncode == 0, out.stderr
        return out.stdout.split()

    subprocess.run(kc + ["create", "ns", name], check=True, capture_output=True, timeout=30)
    try:
        env = gym.make(ENV_ID, level=1, backend="kubernetes", kubeconfig=kubeconfig, namespace=name)
        env.reset(seed=1)
        assert not env.unwrapped.backend.created_namespace
        assert len(names("pods")) == 12 and names("networkpolicies")
        env.step({"command": "kubectl apply -f -", "stdin": json.dumps({
            "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "agents-own"}, "spec": {"podSelector": {}}})})
        assert "networkpolicy.networking.k8s.io/agents-own" in names("networkpolicies")
        env.close()
        phase = subprocess.run(kc + ["get", "ns", name, "-o", "jsonpath={.status.phase}"],
                               capture_output=True, text=True, timeout=30)
        assert phase.stdout == "Active"
        for kind in ("pods", "services", "endpoints", "deployments", "replicasets",
                     "networkpolicies", "serviceaccounts", "roles", "rolebindings"):
            left = [n for n in names(kind) if not n.endswith("/default")]  # the server's own
            assert not left, (kind, left)
    finally:
        subprocess.run(kc + ["delete", "ns", name, "--wait=false"], capture_output=True, timeout=30)


@K
def test_a_namespace_holding_somebody_elses_policies_is_refused_and_untouched(kubeconfig):
    from netarena_gym.errors import BackendUnavailable
    name = f"netarena-kept-{secrets.token_hex(3)}"
    kc = ["kubectl", "--kubeconfig", kubeconfig, "-n", name]
    subprocess.run(kc + ["create", "ns", name], check=True, capture_output=True, timeout=30)
    mine = json.dumps({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                       "metadata": {"name": "users-own-policy"}, "spec": {"podSelector": {}}})
    subprocess.run(kc + ["apply", "-f", "-"], input=mine, check=True, capture_output=True,
                   text=True, timeout=30)
    try:
        env = gym.make(ENV_ID, level=1, backend="kubernetes", kubeconfig=kubeconfig, namespace=name)
        with pytest.raises(BackendUnavailable, match="already holds NetworkPolicies "
                                                     r"\(users-own-policy\)"):
            env.reset(seed=1)
        env.close()
        out = subprocess.run(kc + ["get", "networkpolicies,pods", "-o", "name"],
                             capture_output=True, text=True, timeout=30).stdout.split()
        assert out == ["networkpolicy.networking.k8s.io/users-own-policy"]
    finally:
        subprocess.run(kc + ["delete", "ns", name, "--wait=false"], capture_output=True, timeout=30)


@K
def test_reset_after_close_starts_again_in_a_new_namespace(kubeconfig):
    env = gym.make(ENV_ID, level=1, backend="kubernetes", kubeconfig=kubeconfig)
    try:
        env.reset(seed=3)
        first = env.unwrapped.backend.namespace
        env.close()
        obs, _ = env.reset(seed=3)
        second = env.unwrapped.backend.namespace
        assert second != first and obs.startswith("Connectivity check (121 probes, ")
        _, _, _, _, info = env.step({"command": "kubectl get networkpolicies"})
        assert info["command_kind"] == "ok"
    finally:
        env.close()
    assert second not in _namespaces(kubeconfig) or subprocess.run(
        ["kubectl", "--kubeconfig", kubeconfig, "get", "ns", second, "-o",
         "jsonpath={.status.phase}"], capture_output=True, text=True, timeout=30
    ).stdout == "Terminating"


@K
@pytest.mark.skipif(os.geteuid() != 0, reason="the agent user is dropped to only as root")
def test_the_agent_cannot_redirect_the_graders_kubeconfig_write(kubeconfig, tmp_path):
    """The token kubeconfig is written into a folder only the grader can write (0711, the
    grader's), never through a link, and handed to the agent user by descriptor; the
    agent's HOME (its kubectl cache) is a folder of its own inside."""
    import pwd
    from netarena_gym.k8s.backends.kubernetes import KubernetesBackend
    nobody = pwd.getpwnam("nobody").pw_uid
    b = KubernetesBackend(kubeconfig=kubeconfig)
    try:
        st = os.stat(b._agent_dir)
        assert st.st_uid == 0 and st.st_mode & 0o777 == 0o710 and st.st_gid == pwd.getpwnam("nobody").pw_gid
        assert os.stat(b._agent_home).st_uid == nobody
        victim = tmp_path / "victim"
        victim.write_text("root's own")
        os.symlink(victim, b.agent_kubeconfig + ".tmp")  # what a writable folder would allow
        b._write_agent_kubeconfig("token")
        assert victim.read_text() == "root's own" and os.stat(victim).st_uid == 0
        st = os.lstat(b.agent_kubeconfig)
        assert st.st_uid == nobody and st.st_mode & 0o777 == 0o600
        assert json.loads(open(b.agent_kubeconfig).read())["users"][0]["user"]["token"] == "token"
    finally:
        b.close()
    assert not os.path.exists(b._agent_dir)


@K
@pytest.mark.slow
def test_differential_sim_vs_real_kubectl(kubeconfig):
    stats = differential.run(500, seed=20260101, kubeconfig=kubeconfig, length=(1, 3))
    diffs = stats["differences"]
    assert stats["sequences"] == 500 and stats["commands"] >= 500
    assert not diffs, diffs[:3]


@K
def test_live_probes_run_through_kubectl_exec(kubeconfig):
    """probe_mode="live" execs nc in every source pod; on a server without nodes no pod runs,
    so every probe fails (and the report says so) instead of hanging."""
    env = gym.make(ENV_ID, level="compat", backend="kubernetes", kubeconfig=kubeconfig,
                   probe_mode="live", command_timeout=5, initial_report=True)  # compat: blind
    try:
        obs, info = env.reset(seed=1)
        base = env.unwrapped
        assert base._actual.shape == (92,) and not base._actual.any()
        assert "(92 probes, 15 mismatches)" in obs
    finally:
        env.close()


# ------------------------------------------------- without a real server (the client only)
def _kubeconfig_for(tmp_path, port: int) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "http://127.0.0.1:{port}"}}}}]
users: [{{name: u, user: {{token: x}}}}]
contexts: [{{name: c, context: {{cluster: c, user: u}}}}]
current-context: c
""")
    return str(path)


@pytest.fixture
def stalled_server(tmp_path):
    """An API server that answers reads with 404 and never answers a write."""
    pytest.importorskip("kubernetes")
    release = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                               "reason": "NotFound", "code": 404}).encode()
            self.send_response(404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            release.wait(60)

        do_DELETE = do_PATCH = do_PUT = do_POST

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield _kubeconfig_for(tmp_path, srv.server_address[1])
    finally:
        release.set()
        srv.shutdown()
        srv.server_close()


def test_a_stalled_api_server_fails_the_reset_within_the_command_timeout(stalled_server):
    from netarena_gym.core.scenario import Scenario
    from netarena_gym.errors import BackendUnavailable
    from netarena_gym.k8s.backends.kubernetes import KubernetesBackend
    b = KubernetesBackend(kubeconfig=stalled_server, command_timeout=1.0, agent_user=None)
    t = time.monotonic()
    try:
        with pytest.raises(BackendUnavailable, match="API server failed while setting up"):
            b.apply(Scenario(task="k8s", level=1, params={}, faults=()))
        assert time.monotonic() - t < 10
    finally:
        b.close()


def test_a_bad_option_after_the_backend_was_made_leaves_no_files(stalled_server):
    from netarena_gym.errors import InvalidConfig
    from netarena_gym.k8s.env import K8sPolicyEnv
    before = {p for p in os.listdir("/tmp") if p.startswith(("netarena-grader-", "netarena-agent-"))}
    with pytest.raises(InvalidConfig, match="interface"):
        K8sPolicyEnv(backend="kubernetes", kubeconfig=stalled_server, interface="bogus")
    after = {p for p in os.listdir("/tmp") if p.startswith(("netarena-grader-", "netarena-agent-"))}
    assert after <= before


def test_an_agent_object_that_failed_once_is_made_on_the_next_reset(stalled_server):
    """The ServiceAccount made, the Role refused once (a 500, a restart): the next call
    makes the Role and the RoleBinding instead of leaving the agent without rights."""
    from kubernetes.client.rest import ApiException
    from netarena_gym.k8s.backends.kubernetes import KubernetesBackend
    b = KubernetesBackend(kubeconfig=stalled_server, agent_user=None)
    made, fail = [], {"Role": 1}

    def calls(kind):
        def read(name, ns, **kw):
            raise ApiException(status=404)

        def create(ns, body, **kw):
            if fail.get(kind):
                fail[kind] -= 1
                raise ApiException(status=500, reason="etcdserver: request timed out")
            made.append(kind)
            return types.SimpleNamespace(metadata=types.SimpleNamespace(
                labels=body["metadata"]["labels"], uid=f"uid-{kind}"))
        return read, create, None

    b._rbac_calls = calls
    b.core = types.SimpleNamespace(create_namespaced_service_account_token=lambda *a, **k:
                                   types.SimpleNamespace(status=types.SimpleNamespace(token="T")))
    try:
        with pytest.raises(ApiException):
            b._ensure_agent()
        b._ensure_agent()
        assert made == ["ServiceAccount", "Role", "RoleBinding"]
        assert [k for k, _, _ in b.created] == ["ServiceAccount", "Role", "RoleBinding"]
    finally:
        b.created = []
        b.api_client.close()
        b._finalizer()


def test_a_command_line_of_kubectls_is_killed_at_its_step_budget(stalled_server, tmp_path):
    """Each kubectl had ``command_timeout`` and the line none: three kubectls of 1 s each
    took 3 s in one step, and any number of them as long. Now the line stops at
    ``step_timeout``: the kubectl running then is killed and the rest is not run."""
    from netarena_gym.k8s.backends.kubernetes import KubernetesBackend
    from netarena_gym.shell.parser import TIMEOUT
    slow = tmp_path / "kubectl"
    slow.write_text("#!/bin/sh\necho listed\nexec sleep 1\n")
    slow.chmod(0o755)
    b = KubernetesBackend(kubeconfig=stalled_server, kubectl=str(slow), agent_user=None,
                          command_timeout=3.0, step_timeout=1.5)
    b._ensure_agent = lambda: None  # no RBAC objects on this server; the budget is tested
    try:
        t = time.monotonic()
        res = b.run({"command": "kubectl get pods; kubectl get svc; kubectl get netpol"})
        took = time.monotonic() - t
        assert res.kind == TIMEOUT and 1.4 < took < 2.5, (took, res)
        assert res.output.count("listed") == 2  # the first ran, the second was killed
        assert "the command line's budget of 1.5 s (step_timeout) is spent (killed)" \
            in res.output
        slow.write_text("#!/bin/sh\nexec sleep 30\n")
        res = b.run({"command": "kubectl get pods"})  # alone: killed at the budget too
        assert res.kind == TIMEOUT and "timed out after 1.5 s" in res.output
        b.step_timeout = 10.0
        t = time.monotonic()
        res = b.run({"command": "kubectl get pods"})  # its own timeout comes first
        assert res.kind == TIMEOUT and "timed out after 3 s (killed)" in res.output
        assert time.monotonic() - t < 5
    finally:
        b.close()


def test_the_line_budget_defaults_to_the_command_timeout_when_longer(stalled_server):
    from netarena_gym.k8s.backends.kubernetes import KubernetesBackend
    from netarena_gym.shell.policy import STEP_TIMEOUT
    bs = [KubernetesBackend(kubeconfig=stalled_server, agent_user=None, command_timeout=t)
          for t in (2.0, 30.0)]
    try:
        assert [b.step_timeout for b in bs] == [STEP_TIMEOUT, 30.0]
    finally:
        for b in bs:
            b.close()
    with pytest.raises(ValueError, match="step_timeout"):
        KubernetesBackend(kubeconfig=stalled_server, agent_user=None, step_timeout=0)


def test_a_dns_rule_by_namespace_name_is_judged_as_on_the_simulator(kubeconfig):
    # kube-apiserver 1.20 does not label namespaces kubernetes.io/metadata.name (1.21 on
    # does, as upstream's KinD cluster and the simulator): the engine reads them labelled
    from netarena_gym.k8s.backends.kubernetes import KubernetesBackend
    from netarena_gym.k8s.backends.sim import SimBackend
    real = KubernetesBackend(kubeconfig=kubeconfig)
    sim = SimBackend(end_port=False)
    sc = differential.scenario_for(real.namespace)
    patch = ('{"spec":{"egress":[{"to":[{"namespaceSelector":{"matchLabels":'
             '{"kubernetes.io/metadata.name":"kube-system"}}}],"ports":[{"port":53,"protocol":"UDP"}]},'
             '{"to":[{"podSelector":{}}]}]}}')
    try:
        real.apply(sc)
        sim.apply(sc)
        for b in (real, sim):
            r = b.run({"command": f"kubectl patch networkpolicy frontend --type=merge -p '{patch}'",
                       "stdin": ""})
            assert r.status == 0, r.output
        assert sim.observe().tolist() == real.observe().tolist()
        kube_system = next(n for n in real.objects().namespaces if n["metadata"]["name"] == "kube-system")
        assert kube_system["metadata"]["labels"]["kubernetes.io/metadata.name"] == "kube-system"
    finally:
        real.close()
