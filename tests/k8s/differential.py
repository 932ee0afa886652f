"""Differential harness: the same command sequences through the simulated kubectl and
through real kubectl on a real API server; after every command the success or failure and
the NetworkPolicy objects (normalised) must be identical, and so must the output of every
read command (:data:`~tests.k8s.commandgen.READS`) and of every write that prints what it
wrote (``-o``) after :func:`normalise_output`.

    NETARENA_KUBECONFIG=... python -m tests.k8s.differential --sequences 500 [--seed 0]
"""
from __future__ import annotations

import argparse
import json
import re
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


_AGE = re.compile(r"(?<=  )(\d+[smhdy])+(?= |\n|$) *", re.M)
_AGE_HEAD = re.compile(r"(?<=  )AGE +(?=\S)")  # its width is that of the longest age
_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_RV = re.compile(r'(resourceVersion"?: )"\d+"')
_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d \+0000"
                 r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC")
_DUMP = re.compile(r"(object given to jsonpath engine was:\n\t\t).*", re.S)


def normalise_output(text: str) -> str:
    """What may differ between the two backends: ages (a table's AGE cell with its padding,
    so the columns after it line up again), uids, resourceVersions, timestamps and the
    object dump after a jsonpath execution error (the simulator leaves it out). Everything
    else must agree byte for byte."""
    text = _DUMP.sub(r"\1<object>\n", _TS.sub("<time>", text))
    text = _RV.sub(r'\1"<rv>"', _UID.sub("<uid>", text))
    return _AGE_HEAD.sub("AGE\t", _AGE.sub("<age>\t", text))


def scenario_for(namespace: str) -> Scenario:
    return Scenario(task="k8s", level=1, params={"namespace": namespace, "probes": "full"},
                    faults=(), seed=None)


def run(sequences: int, seed: int, kubeconfig: str | None = None, length=(1, 4),
        verbose: bool = False) -> dict:
    real = KubernetesBackend(kubeconfig=kubeconfig)
    sim = SimBackend(end_port=False)
    sc = scenario_for(real.namespace)
    stats = {"sequences": 0, "commands": 0, "status_agree": 0, "objects_agree": 0,
             "output_agree": 0, "reads": 0, "read_output_agree": 0, "differences": [],
             "read_differences": []}
    t0 = time.perf_counter()
    try:
        for i in range(sequences):
            gen = CommandGen(seed * 100003 + i, end_port=False)
            real.apply(sc)
            sim.apply(sc)
            n = int(gen.r.integers(length[0], length[1] + 1))
            seq = gen.sequence(n)
            reads = {c for c, _ in seq if c.split()[1] in ("get", "describe") or " -o " in c}
            for cmd, stdin in seq:
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
                if cmd in reads:
                    stats["reads"] += 1
                    same = normalise_output(a.output) == normalise_output(b.output)
                    stats["read_output_agree"] += same
                    if not same:
                        stats["read_differences"].append({"command": cmd, "sim": a.output[-1500:],
                                                          "real": b.output[-1500:]})
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
    reads = s.pop("read_differences")
    print(json.dumps(s))
    print(f"differences: {len(diffs)}, read output differences: {len(reads)}")
    for d in reads[:5]:
        print(json.dumps(d, indent=1)[:3000], file=sys.stderr)
    return 0 if not diffs and not reads else 1


if __name__ == "__main__":
    sys.exit(main())
