"""Speed of NetArena-Routing-v0 on the simulator (one process, one core).

Targets (issue: foundation): discrete >= 20,000 steps/s and text >= 5,000 steps/s at L1;
reset <= 1 ms at L1 and <= 5 ms at L3; expert <= 1 ms per decision.

    python benchmarks/bench_routing.py [--seconds 3] [--json]
"""
from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np

import netarena_gym  # noqa: F401
from netarena_gym.core.runner import run_episode
from netarena_gym.routing.expert import RoutingExpert

ENV = "NetArena-Routing-v0"


def steps_per_second(level, interface, seconds, seed=0):
    env = gym.make(ENV, level=level, interface=interface, max_steps=50)
    base = env.unwrapped
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    # pre-draw actions so the agent's cost is not measured
    steps, t_end = 0, time.perf_counter() + seconds
    t0 = time.perf_counter()
    ep = 0
    while time.perf_counter() < t_end:
        for _ in range(200):
            valid = np.flatnonzero(info["action_mask"])
            idx = int(valid[rng.integers(len(valid))])
            action = idx if interface == "discrete" else base.catalogue.entries[idx].action
            obs, r, term, trunc, info = env.step(action)
            steps += 1
            if term or trunc:
                ep += 1
                obs, info = env.reset(seed=seed + ep)
    el = time.perf_counter() - t0
    return steps / el


def reset_ms(level, n=300):
    env = gym.make(ENV, level=level)
    env.reset(seed=0)
    t0 = time.perf_counter()
    for i in range(n):
        env.reset(seed=i + 1)
    return 1000 * (time.perf_counter() - t0) / n


def expert_ms(level, episodes=100):
    env = gym.make(ENV, level=level)
    expert = RoutingExpert()
    secs = decisions = 0
    for i in range(episodes):
        r = run_episode(env, expert, seed=i)
        secs += r.agent_seconds
        decisions += r.steps
    return 1000 * secs / decisions


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    res = {
        "discrete_steps_per_s_L1": steps_per_second(1, "discrete", a.seconds),
        "text_steps_per_s_L1": steps_per_second(1, "text", a.seconds),
        "discrete_steps_per_s_L3": steps_per_second(3, "discrete", a.seconds),
        "text_steps_per_s_L3": steps_per_second(3, "text", a.seconds),
        "reset_ms_L1": reset_ms(1),
        "reset_ms_L3": reset_ms(3, n=100),
        "expert_ms_per_decision_L1": expert_ms(1),
        "expert_ms_per_decision_L3": expert_ms(3, episodes=50),
    }
    targets = {"discrete_steps_per_s_L1": (">=", 20000), "text_steps_per_s_L1": (">=", 5000),
               "reset_ms_L1": ("<=", 1.0), "reset_ms_L3": ("<=", 5.0),
               "expert_ms_per_decision_L1": ("<=", 1.0), "expert_ms_per_decision_L3": ("<=", 1.0)}
    if a.json:
        print(json.dumps(res))
        return
    for k, v in res.items():
        t = targets.get(k)
        mark = ""
        if t:
            ok = v >= t[1] if t[0] == ">=" else v <= t[1]
            mark = f"  target {t[0]} {t[1]}  {'ok' if ok else 'MISSED'}  ratio {v / t[1]:.2f}"
        print(f"{k:28s} {v:12.3f}{mark}")


if __name__ == "__main__":
    main()
