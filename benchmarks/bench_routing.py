"""Speed of NetArena-Routing-v0 on the simulator (one process, one core).

Targets (issue: foundation): discrete >= 20,000 steps/s and text >= 5,000 steps/s at L1;
reset <= 1 ms at L1 and <= 5 ms at L3; expert <= 1 ms per decision.

    python benchmarks/bench_routing.py [--seconds 3] [--json]

Times are process CPU time (``time.process_time``), so figures stay meaningful on a shared
machine; on an idle machine they equal wall time. Step throughput counts ``step`` calls only;
the resets between episodes are measured separately (``reset_ms``) and, for reference,
``*_with_resets`` includes them.
"""
from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np

import netarena_gym  # noqa: F401
from netarena_gym.core.benchkit import report
from netarena_gym.agents.episode import play_episode
from netarena_gym.routing.expert import RoutingExpert

ENV = "NetArena-Routing-v0"


clock = time.process_time


def steps_per_second(level, interface, seconds, seed=0):
    """Random valid catalogue actions (uniform over the mask); returns (step-only steps/s,
    steps/s including the resets between episodes)."""
    env = gym.make(ENV, level=level, interface=interface)
    base = env.unwrapped
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    steps, ep, in_step, total = 0, 0, 0.0, 0.0
    t_end = clock() + seconds
    while clock() < t_end:
        for _ in range(200):
            valid = np.flatnonzero(info["action_mask"])
            idx = int(valid[rng.integers(len(valid))])
            action = idx if interface == "discrete" else base.catalogue.entries[idx].action
            t0 = clock()
            obs, r, term, trunc, info = env.step(action)
            t1 = clock()
            in_step += t1 - t0
            steps += 1
            if term or trunc:
                ep += 1
                obs, info = env.reset(seed=seed + ep)
            total += clock() - t0
    return steps / in_step, steps / total


def reset_ms(level, n=300):
    env = gym.make(ENV, level=level)
    env.reset(seed=0)
    t0 = clock()
    for i in range(n):
        env.reset(seed=i + 1)
    return 1000 * (clock() - t0) / n


def expert_ms(level, episodes=100):
    env = gym.make(ENV, level=level)
    expert = RoutingExpert()
    secs = decisions = 0
    for i in range(episodes):
        r = play_episode(env, expert, seed=i)
        secs += r.agent_seconds
        decisions += r.steps
    return 1000 * secs / decisions


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    res = {}
    for level in (1, 3):
        for interface in ("discrete", "text"):
            only, with_resets = steps_per_second(level, interface, a.seconds)
            res[f"{interface}_steps_per_s_L{level}"] = only
            res[f"{interface}_steps_per_s_L{level}_with_resets"] = with_resets
    res.update({
        "reset_ms_L1": reset_ms(1),
        "reset_ms_L3": reset_ms(3, n=100),
        "expert_ms_per_decision_L1": expert_ms(1),
        "expert_ms_per_decision_L3": expert_ms(3, episodes=50),
    })
    targets = {"discrete_steps_per_s_L1": (">=", 20000), "text_steps_per_s_L1": (">=", 5000),
               "reset_ms_L1": ("<=", 1.0), "reset_ms_L3": ("<=", 5.0),
               "expert_ms_per_decision_L1": ("<=", 1.0), "expert_ms_per_decision_L3": ("<=", 1.0)}
    print(json.dumps(res) if a.json else report(res, targets, width=36))


if __name__ == "__main__":
    main()
