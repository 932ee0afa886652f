"""Speed of every env as a ratio to CartPole-v1 measured in the same process (issue #14).

    python benchmarks/bench_speed.py [--seconds 2] [--quick]

Prints one JSON object (last line): per env, steps/s with random masked actions *including
the resets between episodes*, steps/s of ``step`` alone, and the ratio of each to CartPole-v1
(random actions, same loop); reset and expert times in ms; FrozenLake-v1 beside CartPole,
and NASim (Tiny, Small) where it is installed; and each goal of the issue with ``ok``.

Times are process CPU time (``time.process_time``), so figures stay comparable on a shared
machine. CartPole is measured before and after the NetArena envs and the mean is used, so a
change of load during the run moves both sides of every ratio alike.
"""
from __future__ import annotations

import argparse
import json
import time

import gymnasium as gym
import numpy as np

import netarena_gym  # noqa: F401
from netarena_gym.agents.experts import make_expert
from netarena_gym.core import benchkit

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
    "k8s_discrete_L1": ("NetArena-K8sPolicy-v0", {"level": 1, "interface": "discrete"}, 0.20),
    "k8s_text_L1": ("NetArena-K8sPolicy-v0", {"level": 1, "interface": "text"}, None),
    "capacity_discrete_L1": ("NetArena-CapacityPlanning-v0", {"level": 1, "interface": "discrete"}, 0.30),
}
# name -> (env id, kwargs, levels, goal ms per reset)
RESETS = {
    "routing": ("NetArena-Routing-v0", {}, {1: 1.0, 3: 3.0}),
    "routing_tree64": ("NetArena-Routing-v0", {"topology": ROUTING_64}, {3: 100.0}),
    "k8s": ("NetArena-K8sPolicy-v0", {}, {1: 1.0, 2: 1.0}),
    "capacity": ("NetArena-CapacityPlanning-v0", {"interface": "text"}, {1: 2.0, 2: 2.0, 3: 2.0, 4: 2.0}),
}
EXPERT_GOAL_MS = 1.0


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


def throughput(env, seconds: float, seed: int = 0) -> tuple[float, float]:
    """(steps/s including resets, steps/s of ``step`` alone) with random valid actions."""
    rng = np.random.default_rng(seed)
    env.action_space.seed(seed)
    obs, info = env.reset(seed=seed)
    steps = episodes = 0
    in_step = 0.0
    t_start = clock()
    t_end = t_start + seconds
    while clock() < t_end:
        for _ in range(100):
            a = _random_action(env, info, rng)
            t0 = clock()
            obs, r, term, trunc, info = env.step(a)
            in_step += clock() - t0
            steps += 1
            if term or trunc:
                episodes += 1
                obs, info = env.reset(seed=seed + episodes)
    total = clock() - t_start
    return steps / total, steps / in_step


def nasim(seconds: float) -> dict:
    try:
        import nasim as ns  # noqa: F401
    except ImportError:
        return {"nasim": "not installed (pip install nasim)"}
    out = {}
    for name, scen in (("nasim_tiny", "tiny"), ("nasim_small", "small")):
        env = ns.make_benchmark(scen, seed=0, fully_obs=False, flat_actions=True, flat_obs=True)
        out[name] = throughput(_GymnasiumShim(env), seconds)[0]
    return out


class _GymnasiumShim:
    """NASim's env through the loop above (it has no ``unwrapped`` catalogue)."""

    def __init__(self, env):
        self.env, self.action_space, self.unwrapped = env, env.action_space, env

    def reset(self, seed=None):
        return self.env.reset(seed=seed)

    def step(self, a):
        return self.env.step(a)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per measurement")
    p.add_argument("--quick", action="store_true", help="short runs (0.5 s, fewer resets)")
    a = p.parse_args(argv)
    secs = 0.5 if a.quick else a.seconds
    n_reset, n_expert = (30, 10) if a.quick else (200, 60)

    cart0 = throughput(gym.make("CartPole-v1"), secs)[0]
    res: dict = {"frozenlake": throughput(gym.make("FrozenLake-v1"), secs)[0]}
    envs = {}
    for name, (env_id, kw, goal) in ENVS.items():
        with_resets, only = throughput(gym.make(env_id, **kw), secs)
        envs[name] = {"steps_per_s": with_resets, "step_only_per_s": only, "goal": goal}
    res.update(nasim(secs))
    cart1 = throughput(gym.make("CartPole-v1"), secs)[0]
    cart = (cart0 + cart1) / 2
    res["cartpole"] = cart
    goals = {}
    for name, e in envs.items():
        e["ratio"] = e["steps_per_s"] / cart
        e["ratio_step_only"] = e["step_only_per_s"] / cart
        if e["goal"] is not None:
            goals[f"{name} >= {e['goal']}x"] = e["ratio"] >= e["goal"]
    slow = envs["routing_discrete_L1"]["step_only_per_s"] / envs["routing_discrete_tree64"]["step_only_per_s"]
    goals["routing step at 64 routers <= 10x L1"] = slow <= 10
    for k in ("frozenlake", "nasim_tiny", "nasim_small"):
        if isinstance(res.get(k), float):
            res[k + "_ratio"] = res[k] / cart
    res["envs"] = envs
    resets = {}
    for task, (env_id, kw, levels) in RESETS.items():
        for level, goal in levels.items():
            ms = benchkit.reset_ms(gym.make(env_id, level=level, **kw), n_reset, clock=clock)
            resets[f"{task}_L{level}"] = ms
            goals[f"reset {task} L{level} <= {goal} ms"] = ms <= goal
    res["reset_ms"] = resets
    experts = {}
    for task, env_id in (("routing", "NetArena-Routing-v0"), ("k8s", "NetArena-K8sPolicy-v0"),
                         ("capacity", "NetArena-CapacityPlanning-v0")):
        env = gym.make(env_id, level=1)
        ms = benchkit.decision_ms(env, make_expert(env), n_expert)
        experts[task] = ms
        goals[f"expert {task} <= {EXPERT_GOAL_MS} ms"] = ms <= EXPERT_GOAL_MS
    res["expert_ms_per_decision"] = experts
    res["goals"] = goals
    print(json.dumps(res, sort_keys=True))
    return res


if __name__ == "__main__":
    main()
