"""The routing task on Mininet: reset and step times, reset vs rebuild, and the simulator's
agreement with Mininet over many seeded episodes. Needs root and Mininet.

Targets (issue: routing on real Mininet): reset <= 0.5 s and step <= 0.3 s on a 1-router,
2-subnet network; agreement 100%.

    sudo python benchmarks/bench_mininet.py [--episodes 2000] [--skip-largest] [--skip-timings]
        [--log episodes.jsonl] [--sequences grammar]
        [--shape tree,ring,leaf-spine --routers 16 --subnets 2 --hosts 1] [--sizes 16,32,64]

``--shape`` runs the campaign on level 3 with ``topology={"shape": ..., "routers": ...,
"subnets": ..., "hosts": ...}`` instead of the small levels (``--episodes`` split evenly
over the shapes, each shape's share in turn, rounded up to whole scenarios), and times
that network; ``--sizes`` times the build and reset of every shape at each router count
(subnets and hosts as given).

The differential campaign runs each scenario with four command sequences (expert, random
catalogue entries, random commands over the full grammar, plausible wrong fixes) through a
simulator env and a Mininet env and compares matrices, result kinds and statuses, rewards,
``info``, episode ends and normalised diagnostic outputs after every step.
"""
from __future__ import annotations

import argparse
import collections
import json
import time

from netarena_gym.core.scenario import Scenario
from netarena_gym.routing.differential import (
    ASPECTS, EnvPair, expert_commands, grammar_commands, random_commands, run_both, wrong_fixes)
from netarena_gym.routing.faults import Fault
from netarena_gym.routing.generator import RoutingGenerator
from netarena_gym.routing.backends.mininet import MininetBackend
from netarena_gym.routing.shapes import SHAPES, shape_spec

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


SEQUENCES = {"expert": lambda sc, seed, topo: expert_commands(  # large: the env's default
                 sc, None if topo and "shape" in topo else 40, topology=topo),
             "catalogue": lambda sc, seed, topo: random_commands(sc, 5, seed, topology=topo),
             "grammar": lambda sc, seed, topo: grammar_commands(sc, 8, seed),
             "wrong_fix": lambda sc, seed, topo: wrong_fixes(sc, 5, seed)}

SMALL_PLAN = [(1, {"subnets": 3, "hosts": 2}), (2, {"subnets": 3, "hosts": 2}),
              ("compat", {"subnets": 3, "hosts": 2}), (3, None)]


def shape_plan(shapes, routers, subnets, hosts) -> list:
    """Level 3 on each named shape: ``[(3, topology option), ...]``."""
    return [(3, {"shape": sh, "routers": routers, "subnets": subnets, "hosts": hosts})
            for sh in shapes]


def fixed_shape(shape: str, routers: int, subnets: int, hosts: int) -> dict:
    """The topology record of a ``shape`` network of fixed sizes."""
    return shape_spec(shape, [(hosts,) * subnets] * routers).to_dict()


def sweep(b: MininetBackend, shapes, sizes, subnets: int, hosts: int) -> list[dict]:
    """Build, reset and step times of every shape at each router count."""
    out = []
    for sh in shapes:
        for n in sizes:
            t = timings(b, fixed_shape(sh, n, subnets, hosts), n=2)
            out.append({"shape": sh, "routers": n, "subnets": subnets, "hosts": hosts, **t})
            print(json.dumps(out[-1]), flush=True)
    return out


def _shaped(plan) -> bool:
    return all(topo and "shape" in topo for _, topo in plan)


def _order(plan, episodes: int, per_scenario: int):
    """(plan index, seed) in campaign order: the levels in turn seed by seed, or, when every
    entry is a large shape, each shape's share of the episodes at once, rounded up to whole
    scenarios (a network of fixed sizes is then built once)."""
    if _shaped(plan):
        for k in range(len(plan)):
            for seed in range(-(-episodes // (len(plan) * per_scenario))):
                yield k, seed
        return
    seed = 0
    while True:
        for k in range(len(plan)):
            yield k, seed
        seed += 1


def agreement(b: MininetBackend, episodes: int, log_path: str | None = None,
              sequences=tuple(SEQUENCES), plan=None) -> dict:
    """Sim vs Mininet through the env (:class:`EnvPair`): per aspect (matrix, outcome,
    reward, info, done, output), the share of episodes with no difference in it. The same
    seeds draw the same scenarios on both (checked for every scenario). With ``log_path``,
    one JSON line per episode (disagreeing aspects, first difference) as it finishes.
    ``sequences``: which of :data:`SEQUENCES` each scenario runs (all by default).
    ``plan``: ``[(level, topology option), ...]`` taken in turn (:data:`SMALL_PLAN` by
    default; :func:`shape_plan` for large shapes)."""
    chosen = {name: SEQUENCES[name] for name in sequences}
    plan = plan or SMALL_PLAN
    pairs = [EnvPair(level, b, topology=topo, max_steps=None if topo and "shape" in topo else 60)
             for level, topo in plan]
    netem = "netem" in b.capabilities
    done = agree = same_scenario = scenarios = 0
    by_level, bad_by_level = collections.Counter(), collections.Counter()
    by_aspect, by_sequence, bad_by_sequence = collections.Counter(), collections.Counter(), collections.Counter()
    examples = []
    t0 = time.perf_counter()
    log = open(log_path, "a") if log_path else None
    limit = float("inf") if _shaped(plan) else episodes
    try:
        for k, seed in _order(plan, episodes, len(chosen)):
            (level, topo), pair = plan[k], pairs[k]
            if done >= limit:
                break
            g = RoutingGenerator(level, capabilities=b.capabilities, topology=topo, netem_faults=netem)
            sc = g.generate(seed).scenario
            scenarios += 1
            same_scenario += sc == RoutingGenerator(level, topology=topo, netem_faults=netem).generate(seed).scenario
            for name, make in chosen.items():
                if done >= limit:
                    break
                rep = run_both(sc, make(sc, seed, topo), pair)
                done += 1
                key = topo["shape"] if topo and "shape" in topo else str(level)
                by_level[key] += 1
                by_sequence[name] += 1
                aspects = sorted(rep.disagrees_on())
                by_aspect.update(aspects)
                if rep.agree:
                    agree += 1
                else:
                    bad_by_level[key] += 1
                    bad_by_sequence[name] += 1
                    if len(examples) < 8:
                        examples.append({"scenario": rep.scenario, "diff": rep.diffs[0].__dict__})
                if log:
                    log.write(json.dumps({"episode": done, "level": key, "seed": seed,
                                          "sequence": name, "steps": rep.steps,
                                          "disagree": aspects,
                                          "first": rep.diffs[0].__dict__ if rep.diffs else None})
                              + "\n")
                    log.flush()
    finally:
        if log:
            log.close()
        for pair in pairs:
            pair.close()
    return {"episodes": done, "scenarios": scenarios,
            "same_scenario_as_sim": same_scenario / max(scenarios, 1),
            "agreement": agree / done,
            "agreement_by_aspect": {a: 1 - by_aspect[a] / done for a in ASPECTS},
            "by_level": dict(by_level), "disagreements_by_level": dict(bad_by_level),
            "by_sequence": dict(by_sequence), "disagreements_by_sequence": dict(bad_by_sequence),
            "examples": examples, "seconds": time.perf_counter() - t0}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--episodes", type=int, default=2000)
    p.add_argument("--skip-largest", action="store_true")
    p.add_argument("--skip-timings", action="store_true")
    p.add_argument("--log", help="append one JSON line per differential episode to this file")
    p.add_argument("--sequences", default=",".join(SEQUENCES),
                   help=f"comma-separated command sequences per scenario, of {', '.join(SEQUENCES)} "
                        "(default: all); e.g. grammar for the full-grammar random agent only")
    p.add_argument("--shape", help=f"comma-separated shapes of {', '.join(SHAPES)}: run the "
                   "campaign and the timings on level 3 with these large topologies")
    p.add_argument("--routers", type=int, default=16)
    p.add_argument("--subnets", type=int, default=2, help="per router (fixed)")
    p.add_argument("--hosts", type=int, default=1, help="per subnet (fixed)")
    p.add_argument("--sizes", help="comma-separated router counts: time build and reset of "
                   "every --shape at each")
    a = p.parse_args()
    shapes = [s for s in (a.shape or "").split(",") if s]
    if sorted(set(shapes) - set(SHAPES)):
        p.error(f"--shape: choose from {', '.join(SHAPES)}")
    if a.sizes and not shapes:
        p.error("--sizes needs --shape")
    seqs = [s for s in a.sequences.split(",") if s]
    unknown = sorted(set(seqs) - set(SEQUENCES))
    if unknown or not seqs:
        p.error(f"--sequences: unknown {unknown}; choose from {', '.join(SEQUENCES)}")
    b = MininetBackend(probe_timeout=0.1)
    try:
        out = {"capabilities": sorted(b.capabilities)}
        plan = shape_plan(shapes, a.routers, a.subnets, a.hosts) if shapes else None
        if a.sizes:
            out["sweep"] = sweep(b, shapes, [int(n) for n in a.sizes.split(",")],
                                 a.subnets, a.hosts)
        elif not a.skip_timings and shapes:
            out["shapes"] = {sh: timings(b, fixed_shape(sh, a.routers, a.subnets, a.hosts), n=3)
                             for sh in shapes}
        elif not a.skip_timings:
            out["small"] = timings(b, SMALL)
            if not a.skip_largest:
                out["largest"] = timings(b, LARGEST, n=3)
        if a.episodes:
            out["differential"] = agreement(b, a.episodes, a.log, seqs, plan)
    finally:
        b.close()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
