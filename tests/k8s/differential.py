"""Differential harness: the same command sequences through the simulated kubectl and
through real kubectl on a real API server; after every command the success or failure and
the NetworkPolicy objects (normalised) must be identical.

    NETARENA_KUBECONFIG=... python -m tests.k8s.differential --sequences 500 [--seed 0]
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from netarena_gym.core.scenario import Scenario
from netarena_gym.k8s.backends.kubernetes import KubernetesBackend
from netarena_gym.k8s.backends.sim import SimBackend
from tests.k8s.commandgen import CommandGen

_META = ("name", "labels", "annotations", "generation")


def normalise(cluster_policies: list[dict]) -> dict:
    out = {}
    for p in cluster_policies:
        md = p.get("metadata") or {}
        out[md["name"]] = {"metadata": {k: md.get(k) for k in _META if md.get(k) is not None},
                           "spec": p.get("spec") or {}}
    return json.loads(json.dumps(out, sort_keys=True))


def scenario_for(namespace: str) -> Scenario:
    return Scenario(task="k8s", level=1, params={"namespace": namespace, "probes": "full"},
                    faults=(), seed=None)


def run(sequences: int, seed: int, kubeconfig: str | None = None, length=(1, 4),
        verbose: bool = False) -> dict:
    real = KubernetesBackend(kubeconfig=kubeconfig)
    sim = SimBackend(end_port=False)
    sc = scenario_for(real.namespace)
    stats = {"sequences": 0, "commands": 0, "status_agree": 0, "objects_agree": 0,
             "output_agree": 0, "differences": []}
    t0 = time.perf_counter()
    try:
        for i in range(sequences):
            gen = CommandGen(seed * 100003 + i, end_port=False)
            real.apply(sc)
            sim.apply(sc)
            n = int(gen.r.integers(length[0], length[1] + 1))
            for cmd, stdin in gen.sequence(n):
                act = {"command": cmd, "stdin": stdin}
                a = sim.run(act)
                b = real.run(act)
                stats["commands"] += 1
                same_status = (a.status == 0) == (b.status == 0)
                oa = normalise(sim.objects().policies)
                ob = normalise(real.objects().policies)
                stats["status_agree"] += same_status
                stats["objects_agree"] += oa == ob
                stats["output_agree"] += a.output == b.output
                if a.output != b.output and verbose:
                    print("OUTPUT", cmd, stdin[:200], "\n sim:", a.output[-400:], "\n real:",
                          b.output[-400:], file=sys.stderr)
                if not same_status or oa != ob:
                    diff = {"sequence": i, "command": cmd, "stdin": stdin,
                            "sim": [a.status, a.output[-600:]], "real": [b.status, b.output[-600:]]}
                    if oa != ob:
                        names = sorted(set(oa) | set(ob))
                        diff["objects"] = {k: {"sim": oa.get(k), "real": ob.get(k)}
                                           for k in names if oa.get(k) != ob.get(k)}
                    stats["differences"].append(diff)
                    if verbose:
                        print(json.dumps(diff, indent=1)[:3000], file=sys.stderr)
                    break  # the states have diverged; the rest of the sequence says nothing
            stats["sequences"] += 1
    finally:
        real.close()
    stats["seconds"] = time.perf_counter() - t0
    return stats


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--sequences", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args()
    s = run(a.sequences, a.seed, verbose=a.verbose)
    diffs = s.pop("differences")
    print(json.dumps(s))
    print(f"differences: {len(diffs)}")
    return 0 if not diffs else 1


if __name__ == "__main__":
    sys.exit(main())
