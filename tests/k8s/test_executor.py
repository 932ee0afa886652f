"""The executor's plans: a command line planned once (``executor.plan``) and applied with
``run_json_patch`` answers exactly what the full path (shell, allow-list, kubectl) answers,
and leaves the store in the same state."""
import numpy as np
import pytest

from netarena_gym.k8s.backends.sim import SimBackend
from netarena_gym.k8s.commands import executor
from netarena_gym.k8s.env import K8sPolicyEnv
from netarena_gym.k8s.state_patches import clone

P = "kubectl patch networkpolicy frontend --type=json -p "


def _pair(scenario):
    """Two backends on one scenario: the first plans, the second runs every line in full."""
    a, b = SimBackend(), SimBackend()
    a.apply(scenario)
    b.apply(scenario)
    return a, b


def _full(b: SimBackend, command: str, stdin: str = ""):
    b.store.tick()
    return executor.run(command, stdin, b.namespace, b.kubectl_as_agent, b.verbs)


def _policies(b: SimBackend):
    return {k: clone({**v, "metadata": {m: x for m, x in v["metadata"].items()
                                        if m != "creationTimestamp"}})
            for k, v in b.store.objects["networkpolicies"].items()}


def test_catalogue_actions_planned_answer_as_the_full_path():
    env = K8sPolicyEnv(level=3, interface="discrete")
    rng = np.random.default_rng(0)
    planned = 0
    for seed in range(6):
        _, info = env.reset(seed=seed)
        a, b = _pair(env.scenario)
        for _ in range(25):
            idx = int(rng.choice(np.flatnonzero(info["action_mask"])))
            command = env.catalogue.entries[idx].action["command"]
            planned += executor.plan(command, "", a.namespace) is not None
            assert a.run({"command": command}) == _full(b, command)
            assert _policies(a) == _policies(b)
            _, _, term, trunc, info = env.step(idx)
            if term or trunc:
                break
    assert planned > 20


@pytest.mark.parametrize("tail", [
    """'[{"op":"add","path":"/spec/egress","value":[{}]}]'""",
    """'[{"op":"remove","path":"/spec/ingress/7"}]'""",             # fails: 422
    """'[{"op":"add","path":"/spec/policyTypes","value":["Bogus"]}]'""",  # invalid
    """'[{"op":"add","path":"/spec/podSelector","value":7}]'""",   # does not decode
    """'[{"op":"replace","path":"/metadata/name","value":"x"}]'""",
    """'{"op":"add"}'""",                                            # malformed
    """'[{"op":"add","path":"/spec/egress","value":[{}]}]' -n kube-system""",
    """'[{"op":"add","path":"/spec/egress","value":[{}]}]' -n default""",
    """'[{"op":"add","path":"/spec/egress","value":[{}]}]' 2>/dev/null""",
    """'[{"op":"add","path":"/spec/egress","value":[{}]}]' | grep patched""",
    """'[{"op":"add","path":"/spec/egress","value":[{}]}]'; kubectl get netpol frontend""",
    """'[{"op":"add","path":"/spec/egress","value":[{}]}]' --dry-run=server""",
    """'[{"op":"add","path":"/spec/egress/-","value":{"to":[{"podSelector":{"matchLabels":{"app":"a\\/b"}}}]}}]'""",
    """'- {op: add, path: /spec/egress, value: [{}]}'""",           # YAML
])
def test_edge_cases_answer_as_the_full_path(tail):
    env = K8sPolicyEnv(level=1, interface="discrete")
    env.reset(seed=3)
    for command in (P + tail, P.replace("networkpolicy frontend", "netpol/frontend") + tail,
                    P.replace("frontend", "nosuchpolicy") + tail):
        a, b = _pair(env.scenario)
        for _ in range(2):  # the second run answers from the plan cache
            assert a.run({"command": command}) == _full(b, command)
            assert _policies(a) == _policies(b)


def test_plans_only_what_they_can_answer():
    assert executor.plan(P + """'[{"op":"add","path":"/spec/egress","value":[{}]}]'""", "", "default")
    for command in (P + "'[]' | grep x", P + "'[]' 2>/dev/null", "kubectl get netpol",
                    P.replace("json", "merge") + "'{}'", P + "'not json'",
                    P + "'[]' --dry-run=server", "kubectl patch pod frontend --type=json -p '[]'"):
        assert executor.plan(command, "", "default") is None
    assert executor.plan(P + "'[]'", "stdin", "default") is None


def test_a_failed_kubectl_prints_on_stderr_on_both_backends():
    """What 2>/dev/null drops and a pipe does not carry; ``> /dev/null`` hides stdout only."""
    env = K8sPolicyEnv(level=1, interface="text")
    env.reset(seed=0)
    b = env.backend

    def run(command):
        r = _full(b, command)
        return r.output, r.status, r.kind
    missing = ('Error from server (NotFound): networkpolicies.networking.k8s.io "nosuch" '
               'not found\n')
    assert run("kubectl get networkpolicy nosuch") == (missing, 1, "error")
    assert run("kubectl get networkpolicy nosuch 2>/dev/null") == ("", 1, "error")
    assert run("kubectl get networkpolicy nosuch | grep -c x") == (missing + "0\n", 1, "error")
    assert run("kubectl get networkpolicy nosuch 2>&1 | grep -c NotFound") == ("1\n", 0, "error")
    assert run("kubectl get networkpolicies > /dev/null") == ("", 0, "ok")
    assert run("kubectl get networkpolicy nosuch > /dev/null") == (missing, 1, "error")


def test_beside_a_success_kubectl_warns_and_finds_nothing_on_stderr():
    """kubectl 1.32 against kube-apiserver 1.20 (compared through both backends): ``get``'s
    ``No resources found`` and the short-name warning are stderr, ``delete``'s is stdout."""
    env = K8sPolicyEnv(level=1, interface="text")
    env.reset(seed=0)
    b = env.backend

    def run(command):
        return _full(b, command).output
    none = "No resources found in default namespace.\n"
    warn = 'Warning: short name "ev" could also match lower priority resource events.events.k8s.io\n'
    assert run("kubectl get pods -l app=zzz | wc -l") == none + "0\n"
    assert run("kubectl get pods -l app=zzz 2>/dev/null") == ""
    assert run("kubectl get ev > /dev/null") == warn + none
    assert run("kubectl get ev 2>/dev/null | wc -l") == "0\n"
    assert run("kubectl delete networkpolicy -l app=zzz 2>/dev/null") == "No resources found\n"
    assert run("kubectl get networkpolicy | wc -l") == "13\n"
