"""The routing task on Mininet: reset and step times, reset vs rebuild, and the simulator's
agreement with Mininet over many seeded episodes. Needs root and Mininet.

Targets (issue: routing on real Mininet): reset <= 0.5 s and step <= 0.3 s on a 1-router,
2-subnet network; agreement 100%.

    sudo python benchmarks/bench_mininet.py [--episodes 2000] [--skip-largest]
"""
from __future__ import annotations

import argparse
import collections
import json
import time

from netarena_gym.core.scenario import Scenario
from netarena_gym.routing.differential import (
    expert_commands, random_commands, run_both, wrong_fixes)
from netarena_gym.routing.faults import Fault
from netarena_gym.routing.generator import RoutingGenerator
from netarena_gym.routing.backends.mininet import MininetBackend
from netarena_gym.routing.backends.sim import SimBackend

SMALL = {"hosts": [[1, 1]], "parents": []}
LARGEST = {"hosts": [[4] * 8] * 4, "parents": [0, 0, 0]}


def timings(b: MininetBackend, topo: dict, n: int = 10) -> dict:
    sc = Scenario("routing", 1, {"topology": topo},
                  (Fault("disable_routing", 1, "r0", {}).to_dict(),))
    t0 = time.perf_counter()
    b.apply(sc)  # includes a build when the topology changed
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(n):
        b.apply(sc)
    reset = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    for _ in range(n):
        b.run({"machine": "r0", "command": "ip route show"})
        b.observe()
    step = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    b.run({"machine": "r0", "command": "sysctl -w net.ipv4.ip_forward=1"})
    b.observe()
    healthy_step = time.perf_counter() - t0
    return {"nodes": len(b.names), "build_s": build, "reset_s": reset,
            "step_s_broken": step, "step_s_healthy": healthy_step,
            "reset_vs_rebuild": reset / build}


def agreement(b: MininetBackend, episodes: int) -> dict:
    sim = SimBackend()
    plan = [(1, {"subnets": 3, "hosts": 2}), (2, {"subnets": 3, "hosts": 2}),
            ("compat", {"subnets": 3, "hosts": 2}), (3, None)]
    done = agree = 0
    by_level = collections.Counter()
    bad_by_level = collections.Counter()
    examples = []
    seed = 0
    t0 = time.perf_counter()
    while done < episodes:
        for level, topo in plan:
            g = RoutingGenerator(level, capabilities=b.capabilities, topology=topo)
            sc = g.generate(seed).scenario
            for cmds in (expert_commands(sc), random_commands(sc, 5, seed), wrong_fixes(sc, 5, seed)):
                rep = run_both(sc, cmds, sim, b)
                done += 1
                by_level[str(level)] += 1
                if rep.agree:
                    agree += 1
                else:
                    bad_by_level[str(level)] += 1
                    if len(examples) < 5:
                        examples.append({"scenario": rep.scenario, "diff": rep.diffs[0].__dict__})
        seed += 1
    return {"episodes": done, "agreement": agree / done, "by_level": dict(by_level),
            "disagreements_by_level": dict(bad_by_level), "examples": examples,
            "seconds": time.perf_counter() - t0}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--episodes", type=int, default=2000)
    p.add_argument("--skip-largest", action="store_true")
    a = p.parse_args()
    b = MininetBackend(probe_timeout=0.1)
    try:
        out = {"capabilities": sorted(b.capabilities), "small": timings(b, SMALL)}
        if not a.skip_largest:
            out["largest"] = timings(b, LARGEST, n=3)
        if a.episodes:
            out["differential"] = agreement(b, a.episodes)
    finally:
        b.close()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
