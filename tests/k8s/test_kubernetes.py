"""Against a real API server (``NETARENA_KUBECONFIG``; skipped without one): the real
backend, its clean-up, and the differential test of simulated against real kubectl."""
import subprocess

import gymnasium as gym
import pytest

from netarena_gym.agents.episode import play_episode
from netarena_gym.k8s.expert import K8sExpert
from tests.k8s import differential
from tests.k8s.conftest import ENV_ID

pytestmark = pytest.mark.kubernetes


def _namespaces(kubeconfig):
    out = subprocess.run(["kubectl", "--kubeconfig", kubeconfig, "get", "ns", "-o", "name"],
                         capture_output=True, text=True, timeout=30).stdout
    return {line.split("/", 1)[1] for line in out.split()}


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


def test_existing_namespace_is_used_and_kept(kubeconfig):
    import secrets
    name = f"netarena-kept-{secrets.token_hex(3)}"
    kc = ["kubectl", "--kubeconfig", kubeconfig]
    subprocess.run(kc + ["create", "ns", name], check=True, capture_output=True, timeout=30)
    try:
        env = gym.make(ENV_ID, level=1, backend="kubernetes", kubeconfig=kubeconfig, namespace=name)
        env.reset(seed=1)
        assert not env.unwrapped.backend.created_namespace
        env.close()
        phase = subprocess.run(kc + ["get", "ns", name, "-o", "jsonpath={.status.phase}"],
                               capture_output=True, text=True, timeout=30)
        assert phase.stdout == "Active"
    finally:
        subprocess.run(kc + ["delete", "ns", name, "--wait=false"], capture_output=True, timeout=30)


@pytest.mark.slow
def test_differential_sim_vs_real_kubectl(kubeconfig):
    stats = differential.run(500, seed=20260101, kubeconfig=kubeconfig, length=(1, 3))
    diffs = stats["differences"]
    assert stats["sequences"] == 500 and stats["commands"] >= 500
    assert not diffs, diffs[:3]


def test_live_probes_run_through_kubectl_exec(kubeconfig):
    """probe_mode="live" execs nc in every source pod; on a server without nodes no pod runs,
    so every probe fails (and the report says so) instead of hanging."""
    env = gym.make(ENV_ID, level="compat", backend="kubernetes", kubeconfig=kubeconfig,
                   probe_mode="live", command_timeout=5)
    try:
        obs, info = env.reset(seed=1)
        base = env.unwrapped
        assert base._actual.shape == (92,) and not base._actual.any()
        assert "(92 probes, 15 mismatches)" in obs
    finally:
        env.close()
