"""Speed of NetArena-K8sPolicy-v0 (one process, one core).

Targets (issue 4): simulated step >= 5,000 steps/s; full connectivity evaluation <= 1 ms;
expert <= 1 ms per decision; a step on the real API server <= 0.5 s (needs
``NETARENA_KUBECONFIG``; skipped otherwise).

    python benchmarks/bench_k8s.py [--seconds 3] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import time

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import registry

from netarena_gym.core.scenario import Scenario
from netarena_gym.core import benchkit
from netarena_gym.k8s.expert import K8sExpert
from netarena_gym.k8s.grader import PolicyEngine
from netarena_gym.k8s.backends.sim import SimBackend

ENV = "NetArena-K8sPolicy-v0"
if ENV not in registry:
    gym.register(id=ENV, entry_point="netarena_gym.k8s.env:K8sPolicyEnv")

# an agent's typical mix: reads, diagnostics through pipes, patches that change a policy
TEXT_ACTIONS = [
    {"command": "kubectl get networkpolicies"},
    {"command": "kubectl get networkpolicy cartservice -o yaml | grep -A3 ports"},
    {"command": "kubectl describe networkpolicy adservice"},
    {"command": "kubectl patch networkpolicy adservice --type=json -p "
                "'[{\"op\":\"replace\",\"path\":\"/spec/ingress/0/ports/0/port\",\"value\":9555}]'"},
    {"command": "kubectl patch networkpolicy emailservice --type=merge -p "
                "'{\"spec\":{\"egress\":[{}]}}'"},
    {"command": "kubectl label networkpolicy frontend tier=web --overwrite"},
    {"command": "kubectl get pods -l app=frontend -o wide"},
    {"command": "kubectl patch networkpolicy paymentservice -p "
                "'{\"spec\":{\"policyTypes\":[\"Ingress\",\"Egress\"]}}'"},
]


def steps_per_second(level, interface, seconds, seed=0):
    env = gym.make(ENV, level=level, interface=interface, max_steps=50)
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    steps, ep = 0, 0
    t0 = time.perf_counter()
    t_end = t0 + seconds
    while time.perf_counter() < t_end:
        for _ in range(100):
            if interface == "discrete":
                valid = np.flatnonzero(info["action_mask"])
                action = int(valid[rng.integers(len(valid))])
            else:
                action = TEXT_ACTIONS[int(rng.integers(len(TEXT_ACTIONS)))]
            obs, r, term, trunc, info = env.step(action)
            steps += 1
            if term or trunc:
                ep += 1
                obs, info = env.reset(seed=seed + ep)
    return steps / (time.perf_counter() - t0)


def connectivity_ms(n=2000, incremental=False):
    """Full evaluation of the 121 probes: from scratch (a new engine compiles pods,
    namespaces and every policy), or incremental (one policy changed since the last call)."""
    b = SimBackend()
    b.apply(Scenario(task="k8s", level=1, params={"namespace": "default", "probes": "full"},
                     faults=()))
    c = b.objects()
    c.version = None  # no result cache: every call evaluates
    c.frozen = False  # the loop below changes a policy in place: key it by resourceVersion
    probes = b.engine.probes
    pol = next(p for p in c.policies if p["metadata"]["name"] == "cartservice")
    t0 = time.perf_counter()
    for i in range(n):
        if incremental:
            pol["metadata"]["resourceVersion"] = str(i)  # as if it had been patched
            b.engine.evaluate(c)
        else:
            PolicyEngine(probes, "default").evaluate(c)
    return 1000 * (time.perf_counter() - t0) / n


def reset_ms(level, n=200):
    return benchkit.reset_ms(gym.make(ENV, level=level), n)


def expert_ms(level, episodes=100):
    return benchkit.decision_ms(gym.make(ENV, level=level), K8sExpert(), episodes)


def real_step_s(steps=20):
    kc = os.environ.get("NETARENA_KUBECONFIG")
    if not kc:
        return None
    env = gym.make(ENV, level=2, backend="kubernetes", kubeconfig=kc)
    try:
        env.reset(seed=0)
        t0 = time.perf_counter()
        for i in range(steps):
            env.step(TEXT_ACTIONS[i % len(TEXT_ACTIONS)])
        return (time.perf_counter() - t0) / steps
    finally:
        env.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    res = {
        "text_steps_per_s_L1": steps_per_second(1, "text", a.seconds),
        "discrete_steps_per_s_L1": steps_per_second(1, "discrete", a.seconds),
        "text_steps_per_s_L3": steps_per_second(3, "text", a.seconds),
        "connectivity_eval_ms": connectivity_ms(),
        "connectivity_incremental_ms": connectivity_ms(incremental=True),
        "reset_ms_L1": reset_ms(1),
        "reset_ms_L3": reset_ms(3),
        "expert_ms_per_decision_L1": expert_ms(1),
        "expert_ms_per_decision_L3": expert_ms(3, episodes=50),
        "real_step_s": real_step_s(),
    }
    targets = {"text_steps_per_s_L1": (">=", 5000), "discrete_steps_per_s_L1": (">=", 5000),
               "connectivity_eval_ms": ("<=", 1.0), "expert_ms_per_decision_L1": ("<=", 1.0),
               "expert_ms_per_decision_L3": ("<=", 1.0), "real_step_s": ("<=", 0.5)}
    if a.json:
        print(json.dumps(res))
        return
    print(benchkit.report(res, targets, skipped="skipped (set NETARENA_KUBECONFIG)"))


if __name__ == "__main__":
    main()
