"""Real backends behind the session manager: each session is its own isolated instance
(Mininet: its own run prefix for every root-namespace name; Kubernetes: its own
namespace), both play at once, and closing the sessions removes what they created."""
from __future__ import annotations

import os
import subprocess

import pytest

from netarena_gym.serve.sessions import SessionManager


def _links() -> str:
    return subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                          timeout=30).stdout


@pytest.mark.mininet
def test_two_mininet_sessions_are_isolated_and_cleaned_up():
    from netarena_gym.routing.backends.mininet import requirements_missing

    if requirements_missing():
        pytest.skip(f"mininet backend needs {requirements_missing()}")
    m = SessionManager("NetArena-Routing-v0", env_options={"backend": "mininet"},
                       max_sessions=2)
    try:
        a, b = m.open(), m.open()
        ta, _ = a.reset(seed=1)
        tb, _ = b.reset(seed=2)
        ids = {a.env.unwrapped.backend.run_id, b.env.unwrapped.backend.run_id}
        assert len(ids) == 2
        assert all(i in _links() for i in ids)
        out, _, _, info = a.step({"machine": "r0", "command": "ip route"})
        assert info["command_kind"] == "ok" and "Steps left" in out
        assert b.status().startswith("Pingall result")
    finally:
        m.close_all()
    assert not any(i in _links() for i in ids)


@pytest.mark.kubernetes
def test_two_kubernetes_sessions_get_their_own_namespaces():
    path = os.environ.get("NETARENA_KUBECONFIG")
    if not path or not os.path.isfile(path):
        pytest.skip("no Kubernetes API server: set NETARENA_KUBECONFIG "
                    "(envs/k8s/start-apiserver.sh starts one on loopback)")
    m = SessionManager("NetArena-K8sPolicy-v0",
                       env_options={"backend": "kubernetes", "kubeconfig": path}, max_sessions=2)
    try:
        a, b = m.open(), m.open()
        nss = {a.env.unwrapped.backend.namespace, b.env.unwrapped.backend.namespace}
        assert len(nss) == 2
        assert a.reset(seed=1)[0].startswith("Connectivity check")
        assert b.reset(seed=2)[0].startswith("Connectivity check")
        out, _, _, info = a.step({"command": "kubectl get networkpolicies"})
        assert info["command_kind"] == "ok"
    finally:
        m.close_all()
    for ns in nss:
        phase = subprocess.run(["kubectl", "--kubeconfig", path, "get", "ns", ns, "-o",
                                "jsonpath={.status.phase}"], capture_output=True, text=True,
                               timeout=30)
        assert phase.returncode != 0 or phase.stdout == "Terminating"
