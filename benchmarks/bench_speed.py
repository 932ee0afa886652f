"""Speed of every env as a ratio to CartPole-v1 measured in the same process (issue #14).

    python benchmarks/bench_speed.py [--seconds 2] [--quick] [--only SECTIONS] [--markdown]
                                     [--readme README.md]

Prints one JSON object (last line): ``table``, one row per figure (``figure``, ``value``,
``unit``, ``goal`` such as ``">= 0.2"`` or null, ``ok`` true/false/null), and ``cartpole``,
the reference steps/s. Figures: per env, steps/s with random masked actions *including the
resets between episodes* and of ``step`` alone, as ratios to CartPole-v1 (random actions,
same loop); FrozenLake-v1 beside CartPole, and NASim (Tiny, Small) where it is installed;
reset times in ms after ``RESET_WARMUP`` untimed resets (the steady state, as the
throughput figures count it) and the first reset of each of those envs in a fresh process
(one reset plus what the warm-up builds once and keeps); expert times in ms; per env of
``VECTOR`` (``info="lean"``), 2 workers with shared memory for array observations
against one env of the same options:
``netarena_gym.vector.make_vec`` with ``VECTOR_ENVS`` envs over the 2 workers (the batched
env, several envs per worker: the goal's row) and Gymnasium's own
``gym.make_vec(..., vectorization_mode="async")`` with 2 envs (one per worker) beside, each
with the speedup its CPU time allows on 2 free cores (one env's CPU per step twice, over
the main process's and the workers' per env step: what the wall-clock figure would
approach on an idle machine, with the workers' wake-up latency left out), and the main
process's CPU per env step (CartPole-v1 beside: Gymnasium's vector env's own cost, the
round-trip floor); and
the K8s policy engine's incremental evaluation on the large app. ``--only`` measures some
sections: ``throughput``, ``reset``, ``expert``, ``k8s_large``, ``vector`` (comma-separated;
the CartPole reference is always measured).

``--markdown`` also prints the table as Markdown; ``--readme PATH`` writes it into PATH
between the ``<!-- bench_speed:begin -->`` and ``<!-- bench_speed:end -->`` lines (the
README's performance table is made this way).

Times are process CPU time (``time.process_time``), so figures stay comparable on a shared
machine, except the vector-env figure, which is wall-clock (its work runs in worker
processes; single and vector runs alternate for five rounds and the best round of each
counts, so a burst of other load on a shared machine lowers neither side alone; under steady
other load the vector env's 3 processes get a larger share of the cores than one env's 1,
so its wall-clock ratio can pass its CPU-time bound: read both). Each throughput figure
has its own CartPole-v1 run, taking turns with the env in ``PAIR_SLICES`` slices
(:func:`paired_throughput`), so a change of the machine's speed during the run (on a
shared VM CartPole alone has read 79,000 and 47,000 steps/s a few seconds apart) moves both
sides of that ratio alike; the reference row is the mean of those runs. The step at 64
routers over the step at L1 is the quotient of their two ratios.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import netarena_gym  # noqa: F401
from netarena_gym.agents.experts import make_expert
from netarena_gym.core import benchkit
from netarena_gym.errors import NetArenaError

clock = time.process_time

# name -> (env id, make kwargs, goal as a ratio to CartPole with resets)
ROUTING_64 = {"shape": "tree", "routers": 64, "subnets": 2, "hosts": 2}
ENVS = {
    "routing_discrete_L1": ("NetArena-Routing-v0", {"level": 1, "interface": "discrete"}, 0.33),
    "routing_text_L1": ("NetArena-Routing-v0", {"level": 1, "interface": "text"}, 0.25),
    "routing_discrete_L3": ("NetArena-Routing-v0", {"level": 3, "interface": "discrete"}, 0.15),
    # issue 14's scale goal: a step here costs <= 10x a step at L1 (see goals below)
    "routing_discrete_tree64": ("NetArena-Routing-v0", {"level": 3, "interface": "discrete",
                                                        "topology": ROUTING_64}, None),
    "routing_discrete_ring64": ("NetArena-Routing-v0", {
        "level": 3, "interface": "discrete", "topology": {**ROUTING_64, "shape": "ring"}}, None),
    "routing_discrete_leafspine64": ("NetArena-Routing-v0", {
        "level": 3, "interface": "discrete", "topology": {**ROUTING_64, "shape": "leaf-spine"}},
        None),
    "k8s_discrete_L1": ("NetArena-K8sPolicy-v0", {"level": 1, "interface": "discrete"}, 0.20),
    "k8s_text_L1": ("NetArena-K8sPolicy-v0", {"level": 1, "interface": "text"}, None),
    "capacity_discrete_L1": ("NetArena-CapacityPlanning-v0", {"level": 1, "interface": "discrete"}, 0.30),
}
# name -> (env id, kwargs, levels, goal ms per reset)
RESETS = {
    "routing": ("NetArena-Routing-v0", {}, {1: 1.0, 3: 3.0}),
    "routing_tree64": ("NetArena-Routing-v0", {"topology": ROUTING_64}, {3: 100.0}),
    "routing_ring64": ("NetArena-Routing-v0", {"topology": {**ROUTING_64, "shape": "ring"}},
                       {3: 100.0}),
    "routing_leafspine64": ("NetArena-Routing-v0",
                            {"topology": {**ROUTING_64, "shape": "leaf-spine"}}, {3: 100.0}),
    "k8s": ("NetArena-K8sPolicy-v0", {}, {1: 1.0, 2: 1.0}),
    "capacity": ("NetArena-CapacityPlanning-v0", {"interface": "text"}, {1: 2.0, 2: 2.0, 3: 2.0, 4: 2.0}),
}
# untimed resets before a reset row's timed ones: what a process builds once and keeps (MALT
# base graphs, 4 topologies per level; a fixed topology's pristine network and probes) is
# not a per-reset cost; the "first reset in a fresh process" rows give it
RESET_WARMUP = 30
# a throughput figure's env and its CartPole-v1 reference take turns in this many slices
PAIR_SLICES = 10
EXPERTS = {"routing": "NetArena-Routing-v0", "k8s": "NetArena-K8sPolicy-v0",
           "capacity": "NetArena-CapacityPlanning-v0"}
EXPERT_GOAL_MS = 1.0
STEP_64_GOAL = 10.0  # a random step at 64 routers costs at most this many L1 steps
SHAPES_64 = ("tree", "ring", "leafspine")  # the ENVS and RESETS rows at 64 routers
# vector envs: these ENVS entries, 2 workers with shared memory / one env, info="lean";
# make_vec batches VECTOR_ENVS envs over the 2 workers (one round trip per worker per step)
VECTOR = ("k8s_discrete_L1", "capacity_discrete_L1", "routing_discrete_L1",
          "routing_discrete_L3", "routing_text_L1", "routing_discrete_tree64")
# text vector rows: this read-only command on router r0 every step (its output is the text)
TEXT_ACTION = json.dumps({"machine": "r0", "command": "ip -d addr show; ip route show; "
                                                      "ip rule show; iptables -S"})
VECTOR_GOAL = 1.6
VECTOR_WORKERS, VECTOR_ENVS = 2, 32  # 16 envs per worker share each round trip
VECTOR_ROUNDS = 5
VECTOR_LONG = {"routing_discrete_tree64": 2.0}  # x the seconds: ~11 ms steps, 0.1 s resets
SECTIONS = ("throughput", "reset", "expert", "k8s_large", "vector")
# the K8s policy engine on the generated large app: ms per evaluation after one changed policy
LARGE_APP_SERVICES, LARGE_APP_GOAL_MS = 120, 5.0
README_BEGIN, README_END = "<!-- bench_speed:begin -->", "<!-- bench_speed:end -->"


def _random_action(env, info, rng):
    """A uniformly random valid action: an index under the mask, rendered as the text
    action for text interfaces."""
    base = env.unwrapped
    mask = info.get("action_mask")
    if mask is None:
        return env.action_space.sample()
    valid = np.flatnonzero(mask)
    idx = int(valid[rng.integers(len(valid))])
    if getattr(base, "interface", "discrete") == "discrete":
        return idx
    return base.catalogue.entries[idx].action


class Stepper:
    """One env under random valid actions, run in slices of CPU time: each
    :meth:`run` goes on from where the last one stopped (the same episode), so a run can
    be split into slices that alternate with another env's (:func:`paired_throughput`).
    ``warmup`` untimed resets first (what a process builds once and keeps, such as a MALT
    topology's base graph, is not a per-reset cost)."""

    def __init__(self, env, seed: int = 0, warmup: int = 30):
        self.env, self.seed = env, seed
        self.rng = np.random.default_rng(seed)
        env.action_space.seed(seed)
        for i in range(warmup):
            env.reset(seed=10_000 + i)
        self.info = env.reset(seed=seed)[1]
        self.steps = self.episodes = 0
        self.in_step = self.total = 0.0

    def run(self, seconds: float | None = None, steps: int | None = None,
            trace: list | None = None) -> None:
        """Step for about ``seconds`` of CPU time (whole batches of 100 steps) or for
        exactly ``steps`` steps, resetting at episode ends; ``trace`` (if given) gets
        (reward, terminated, truncated, action mask bytes or None) per step."""
        env, rng, info, seed = self.env, self.rng, self.info, self.seed
        steps_done, episodes, in_step = self.steps, self.episodes, self.in_step
        left = float("inf") if steps is None else steps
        t_start = clock()
        t_end = float("inf") if seconds is None else t_start + seconds
        while left > 0 and clock() < t_end:
            for _ in range(int(min(100, left))):
                a = _random_action(env, info, rng)
                t0 = clock()
                _, reward, term, trunc, info = env.step(a)
                in_step += clock() - t0
                steps_done += 1
                if trace is not None:
                    mask = info.get("action_mask")
                    trace.append((float(reward), bool(term), bool(trunc),
                                  None if mask is None else mask.tobytes()))
                if term or trunc:
                    episodes += 1
                    info = env.reset(seed=seed + episodes)[1]
            left -= 100
        self.total += clock() - t_start
        self.info, self.steps, self.episodes, self.in_step = (info, steps_done, episodes,
                                                              in_step)

    def rates(self) -> tuple[float, float]:
        """(steps/s including resets, steps/s of ``step`` alone) so far."""
        return self.steps / self.total, self.steps / self.in_step


def throughput(env, seconds: float, seed: int = 0, warmup: int = 30) -> tuple[float, float]:
    """(steps/s including resets, steps/s of ``step`` alone) with random valid actions,
    in one run of ``seconds`` CPU seconds after ``warmup`` untimed resets."""
    s = Stepper(env, seed, warmup)
    s.run(seconds)
    return s.rates()


def paired_throughput(env, reference, seconds: float, slices: int = PAIR_SLICES,
                      seed: int = 0) -> tuple[float, float, float]:
    """(steps/s including resets, steps/s of ``step`` alone, the reference's steps/s
    including resets): ``env`` and ``reference`` (CartPole-v1 in the bench) take turns,
    ``slices`` slices of ``seconds / slices`` CPU seconds each, so that a change in the
    machine's speed during the run (another job's load, a CPU's clock) falls on both
    sides of their ratio alike."""
    a, b = Stepper(env, seed), Stepper(reference, seed)
    for _ in range(slices):
        b.run(seconds / slices)
        a.run(seconds / slices)
    return (*a.rates(), b.rates()[0])


def masked_choice(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random valid index per row of ``masks`` (a row without one gives 0),
    for the whole batch at once: the valid entries of all rows in one ``flatnonzero``,
    then one uniform draw per row among its own. Its cost grows with the valid entries,
    not with a random number per entry (at 64 routers a batch of 32 masks has 1M entries:
    the agent's choice cost the main process more than the vector env did)."""
    n, width = masks.shape
    valid = masks != 0  # bool: flatnonzero reads it twice as fast as int8
    flat = np.flatnonzero(valid)
    counts = np.count_nonzero(valid, axis=1)
    pick = np.cumsum(counts) - counts + (rng.random(n) * counts).astype(np.int64)
    out = np.zeros(n, dtype=np.int64)
    has = counts > 0
    out[has] = flat[pick[has]] % width
    return out


def _proc_cpu(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes ``pids`` have used so far, from
    ``/proc/PID/stat`` (clock-tick resolution)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def make_vector(kind: str, env_id: str, kw: dict, workers: int = VECTOR_WORKERS,
                num_envs: int = VECTOR_WORKERS):
    """The vector env compared: ``"gymnasium"``, ``gym.make_vec(...,
    vectorization_mode="async")`` with one env per worker and shared memory where
    Gymnasium reads it back (not for text), or ``"netarena"``,
    :func:`netarena_gym.vector.make_vec` with ``num_envs`` envs over ``workers`` (the
    bench's rows give it ``VECTOR_ENVS``)."""
    from netarena_gym.vector import make_vec, shares_memory
    if kind == "netarena":
        return make_vec(env_id, num_envs, workers=workers, **kw)
    probe = gym.make(env_id, **kw)
    shared = shares_memory(probe.observation_space)
    probe.close()
    return gym.make_vec(env_id, num_envs=workers, vectorization_mode="async",
                        vector_kwargs={"shared_memory": shared}, **kw)


def vector_speedup(env_id: str, kw: dict, seconds: float, kind: str = "gymnasium",
                   workers: int = VECTOR_WORKERS, num_envs: int = VECTOR_ENVS,
                   rounds: int = VECTOR_ROUNDS) -> tuple[float, float, float]:
    """(steps/s of the vector env :func:`make_vector` makes, with ``workers`` worker
    processes, over steps/s of one env (``make_vec`` with one env, sync); the main process's
    CPU microseconds per env step of the vector env; the CPU-time bound of that speedup on
    ``workers`` free cores). Steps/s are wall clock with random valid actions and next-step
    autoreset; after one untimed round each (the workers' first episodes build what a
    process keeps), one env and the vector env alternate for ``rounds`` rounds of
    ``seconds / rounds`` each, and each rate is its best round. One vector env per call: a
    second one in the same process measured slower than the first whichever it was. Main
    CPU: receiving and stacking the workers' ``info``, copying observations, choosing
    actions. Bound: ``workers`` x one env's CPU per step / (main + workers' CPU per env
    step), the workers' CPU read from ``/proc`` around the timed runs: what the wall-clock
    figure would approach on an idle machine, wake-up latency left out."""
    text = kw.get("interface") == "text"

    def run(envs, secs, rng, info):
        n = envs.num_envs
        steps, t0, c0 = 0, time.perf_counter(), time.process_time()
        pids = [p.pid for p in getattr(envs, "processes", [])]
        k0 = _proc_cpu(pids)
        while time.perf_counter() - t0 < secs:
            masks = info.get("action_mask")
            acts = envs.action_space.sample() if masks is None else masked_choice(masks, rng)
            if text:
                acts = [TEXT_ACTION] * n
            _, _, _, _, info = envs.step(acts)
            steps += n
        rate = steps / (time.perf_counter() - t0)
        return rate, time.process_time() - c0, _proc_cpu(pids) - k0, info, steps

    one = gym.make_vec(env_id, num_envs=1, vectorization_mode="sync", **kw)
    vec = make_vector(kind, env_id, kw, workers, num_envs)
    try:
        rng = np.random.default_rng(0)
        info1, infos = one.reset(seed=0)[1], vec.reset(seed=0)[1]
        info1, infos = run(one, seconds / rounds, rng, info1)[3], run(vec, seconds / rounds,
                                                                       rng, infos)[3]
        single = many = 0.0
        one_cpu, one_steps, main_s, kids_s, vec_steps = 0.0, 0, 0.0, 0.0, 0
        for _ in range(rounds):
            rate, cpu, _, info1, n = run(one, seconds / rounds, rng, info1)
            single, one_cpu, one_steps = max(single, rate), one_cpu + cpu, one_steps + n
            rate, cpu, kids, infos, n = run(vec, seconds / rounds, rng, infos)
            many, main_s, kids_s, vec_steps = (max(many, rate), main_s + cpu, kids_s + kids,
                                               vec_steps + n)
    finally:
        one.close()
        vec.close()
    main_us = 1e6 * main_s / vec_steps
    bound = workers * (1e6 * one_cpu / one_steps) / (main_us + 1e6 * kids_s / vec_steps)
    return many / single, main_us, bound


def large_app_incremental_ms(changes: int, services: int = LARGE_APP_SERVICES) -> float:
    """Mean CPU ms of ``PolicyEngine.evaluate`` after one policy of the generated large app
    changed (the store and engine as the simulator keeps them)."""
    from netarena_gym.k8s.cluster import BaseCluster, store_cluster
    from netarena_gym.k8s.grader import PolicyEngine
    from netarena_gym.k8s.workload_large import generate_workload, random_edit
    wl = generate_workload(services, 0)
    base = BaseCluster("default", "full", wl)
    st = base.build_store({m["metadata"]["name"]: m for _, m in wl.policies})
    engine = PolicyEngine(base.probe_set.probes, "default")
    engine.evaluate(store_cluster(st))
    rng = np.random.default_rng(0)
    secs = 0.0
    for _ in range(changes):
        name = wl.apps[int(rng.integers(len(wl.apps)))]
        pol = st.get("networkpolicies", "default", name)
        st.update_policy("default", name, random_edit(pol, wl.apps, rng))
        c = store_cluster(st)
        t0 = clock()
        engine.evaluate(c)
        secs += clock() - t0
    return 1000 * secs / changes


def nasim(seconds: float, rate=None) -> dict:
    """NASim Tiny and Small (where NASim is installed): ``rate(env)``'s first figure, by
    default steps/s including resets (:func:`throughput` over ``seconds``)."""
    try:
        import nasim as ns  # noqa: F401
    except ImportError:
        return {}
    if rate is None:
        def rate(env):
            return throughput(env, seconds)
    out = {}
    for name, scen in (("NASim Tiny", "tiny"), ("NASim Small", "small")):
        env = ns.make_benchmark(scen, seed=0, fully_obs=False, flat_actions=True, flat_obs=True)
        out[name] = rate(_GymnasiumShim(env))[0]
    return out


class _GymnasiumShim:
    """NASim's env through the loop above (it has no ``unwrapped`` catalogue)."""

    def __init__(self, env):
        self.env, self.action_space, self.unwrapped = env, env.action_space, env

    def reset(self, seed=None):
        return self.env.reset(seed=seed)

    def step(self, a):
        return self.env.step(int(a))  # NASim asserts a plain int (a sample is numpy)


def row(figure: str, value: float, unit: str, goal: tuple[str, float] | None = None) -> dict:
    return {"figure": figure, "value": round(float(value), 4), "unit": unit,
            "goal": None if goal is None else f"{goal[0]} {goal[1]}",
            "ok": None if goal is None else bool(benchkit.meets(value, goal))}


def skipped(figure: str, unit: str, why: str) -> dict:
    """A row that could not be measured here, with the reason (``value`` is null)."""
    return {"figure": figure, "value": None, "unit": unit, "goal": None, "ok": None,
            "skipped": why}


def measure(secs: float, n_reset: int, n_expert: int, vector_secs: float,
            only: tuple[str, ...] = SECTIONS) -> dict:
    rows: list[dict] = []
    refs: list[float] = []  # every CartPole-v1 run's steps/s

    def paired(env) -> tuple[float, float]:
        """(steps/s including resets, of ``step`` alone) of ``env``, each over the
        CartPole-v1 steps/s measured in turns with it."""
        with_resets, step_only, cart = paired_throughput(env, gym.make("CartPole-v1"), secs)
        refs.append(cart)
        return with_resets / cart, step_only / cart

    if "throughput" in only:
        peers = {"FrozenLake-v1": paired(gym.make("FrozenLake-v1"))[0]}
        envs = {name: paired(gym.make(env_id, **kw)) for name, (env_id, kw, _) in ENVS.items()}
        peers.update(nasim(secs, paired))
    else:
        refs.append(throughput(gym.make("CartPole-v1"), secs)[0])
    cart = sum(refs) / len(refs)
    rows.append(row("CartPole-v1 steps/s (the reference)", cart, "steps/s"))
    if "throughput" in only:
        rows += [row(f"{name} (random actions, resets included)", v, "x CartPole")
                 for name, v in peers.items()]
        for name, (with_resets, step_only) in envs.items():
            goal = ENVS[name][2]
            rows.append(row(f"{name} (resets included)", with_resets, "x CartPole",
                            None if goal is None else (">=", goal)))
            rows.append(row(f"{name} (step only)", step_only, "x CartPole"))
        for shape in SHAPES_64:
            slow = envs["routing_discrete_L1"][1] / envs[f"routing_discrete_{shape}64"][1]
            rows.append(row(f"routing step at 64 routers ({shape}) / step at L1, step only",
                            slow, "x", ("<=", STEP_64_GOAL)))
    if "reset" in only:
        for task, (env_id, kw, levels) in RESETS.items():
            for level, goal in levels.items():
                ms = benchkit.reset_ms(gym.make(env_id, level=level, **kw), n_reset,
                                       clock=clock, warmup=RESET_WARMUP)
                rows.append(row(f"reset {task} L{level}", ms, "ms", ("<=", goal)))
        for task, (env_id, kw, levels) in RESETS.items():
            for level in levels:
                ms = benchkit.first_reset_ms(env_id, {"level": level, **kw})
                rows.append(row(f"first reset in a fresh process, {task} L{level}", ms, "ms"))
    if "expert" in only:
        for task, env_id in EXPERTS.items():
            env = gym.make(env_id, level=1)
            figure = f"expert {task} L1 per decision"
            try:
                ms = benchkit.decision_ms(env, make_expert(env), n_expert, clock=clock)
            except NetArenaError as e:  # e.g. code mode without bubblewrap
                rows.append(skipped(figure, "ms", str(e)))
                continue
            rows.append(row(figure, ms, "ms", ("<=", EXPERT_GOAL_MS)))
    if "k8s_large" in only:
        rows.append(row(f"k8s large app ({LARGE_APP_SERVICES} services): evaluation per "
                        "changed policy", large_app_incremental_ms(n_expert * 10), "ms",
                        ("<=", LARGE_APP_GOAL_MS)))
    if "vector" in only:
        rows += vector_rows(vector_secs)
    return {"cartpole": cart, "table": rows}


def vector_rows(secs: float) -> list[dict]:
    """The vector-env rows: per ``VECTOR`` env (``info="lean"``),
    :func:`netarena_gym.vector.make_vec` (``VECTOR_ENVS`` envs over 2 workers: the goal)
    then Gymnasium's own ``AsyncVectorEnv`` (2 envs, one per worker), as ratios to one env,
    each with its CPU-time bound; CartPole-v1 last (Gymnasium's, the round-trip floor)."""
    rows = []
    what = f"{VECTOR_WORKERS} workers, shared memory (arrays)"
    labels = {"netarena": f"netarena_gym.vector.make_vec ({VECTOR_ENVS} envs)",
              "gymnasium": f"gym.make_vec async ({VECTOR_WORKERS} envs)"}
    for name in VECTOR:
        env_id, kw, _ = ENVS[name]
        for kind in ("netarena", "gymnasium"):
            ratio, main_us, bound = vector_speedup(env_id, {**kw, "info": "lean"},
                                                   secs * VECTOR_LONG.get(name, 1.0), kind)
            label = f"{name} info=lean {labels[kind]}, {what}"
            rows.append(row(f"{label} (wall clock)", ratio, "x one env",
                            (">=", VECTOR_GOAL) if kind == "netarena" else None))
            rows.append(row(f"{label}: CPU-time bound on 2 free cores", bound, "x one env"))
            if kind == "netarena":
                rows.append(row(f"{label}: main-process CPU per env step", main_us, "us"))
    ratio, main_us, bound = vector_speedup("CartPole-v1", {}, secs)
    rows.append(row(f"CartPole-v1 {labels['gymnasium']}, {what} (wall clock)", ratio,
                    "x one env"))
    rows.append(row(f"CartPole-v1 {labels['gymnasium']}: main-process CPU per env step",
                    main_us, "us"))
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["| figure | value | unit | goal | |", "|---|---|---|---|---|"]
    for r in rows:
        ok = "" if r["ok"] is None else ("ok" if r["ok"] else "missed")
        if r["value"] is None:
            lines.append(f"| {r['figure']} | skipped: {r['skipped'][:80]} | {r['unit']} | | |")
            continue
        v = r["value"]
        value = f"{v:.0f}" if r["unit"] == "steps/s" or abs(v) >= 1000 else f"{v:.3g}"
        lines.append(f"| {r['figure']} | {value} | {r['unit']} | {r['goal'] or ''} | {ok} |")
    return "\n".join(lines)


def write_readme(path: Path, table: str, note: str) -> None:
    text = path.read_text()
    pat = re.compile(re.escape(README_BEGIN) + ".*?" + re.escape(README_END), re.S)
    if not pat.search(text):
        raise SystemExit(f"{path}: no {README_BEGIN} ... {README_END} section to fill")
    block = f"{README_BEGIN}\n{note}\n\n{table}\n{README_END}"
    path.write_text(pat.sub(lambda _: block, text))


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per measurement")
    p.add_argument("--quick", action="store_true", help="short runs (0.5 s, fewer resets)")
    p.add_argument("--only", default=",".join(SECTIONS),
                   help=f"comma-separated sections to measure, of {', '.join(SECTIONS)}")
    p.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    p.add_argument("--readme", type=Path, help="write the Markdown table into this file's "
                   "bench_speed section")
    a = p.parse_args(argv)
    only = tuple(x.strip() for x in a.only.split(",") if x.strip())
    bad = sorted(set(only) - set(SECTIONS))
    if bad:
        p.error(f"--only: unknown section(s) {bad}; valid: {', '.join(SECTIONS)}")
    if a.readme and set(only) != set(SECTIONS):
        p.error("--readme writes the whole table: measure every section (no --only)")
    secs = 0.5 if a.quick else a.seconds
    n_reset, n_expert = (30, 10) if a.quick else (200, 60)
    res = measure(secs, n_reset, n_expert, vector_secs=1.0 if a.quick else 2.5, only=only)
    if a.markdown or a.readme:
        table = markdown(res["table"])
        if a.markdown:
            print(table)
        if a.readme:
            note = (f"Generated by `python benchmarks/bench_speed.py --readme README.md` "
                    f"({'--quick, ' if a.quick else ''}{secs:g} CPU s per throughput figure) on "
                    f"{platform.machine()} with {platform.python_implementation()} "
                    f"{platform.python_version()}, {time.strftime('%Y-%m-%d', time.gmtime())}.")
            write_readme(a.readme, table, note)
    print(json.dumps(res))
    return res


if __name__ == "__main__":
    main()
