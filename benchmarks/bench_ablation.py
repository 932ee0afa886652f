"""What a faster simulator could give: each task's throughput with its simulation made free.

    python benchmarks/bench_ablation.py [--steps 15000] [--rounds 3] [--only NAMES]

Issue 14's throughput goals are ratios to CartPole-v1, and the question they leave is
how much of a step a faster (compiled) simulator could remove. Profiles answer it badly:
cProfile's own cost falls on the many small calls of the Python code, not on C calls. This
benchmark measures it instead. For each row of :data:`ABLATIONS`, one deterministic run
of ``--steps`` random masked actions (the loop of ``bench_speed.throughput``, resets
included, fixed seeds) records every result of the simulator's function; a second,
untimed run replays them and must give the same trajectory (rewards, ends, action masks),
or the row fails: a replay is exact only for a function whose sole effect is its result.
Then full runs and replayed runs alternate for ``--rounds`` rounds (CPU time), each
followed by a slice of CartPole-v1.

Prints one JSON object: per row the env, what was made free and how often it was called,
the ratio to CartPole-v1 (resets included) as it is and with that part free, that part's
share of the env's time, and the ratios of ``step`` alone, as it is and with it free. The
ratio with the part free is the ceiling of any faster implementation of it: what is left is
the rest of the env (command parsing and execution, scenario generation, catalogue,
features, the core's bookkeeping).
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import gymnasium as gym

import netarena_gym  # noqa: F401
from netarena_gym.errors import NetArenaError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_speed import ENVS, Stepper  # noqa: E402  (the same loop)

clock = time.process_time

# row -> (bench_speed.ENVS entry, "module:attribute path" made free, what it is)
ABLATIONS = {
    "routing_discrete_L1": ("routing_discrete_L1",
                            "netarena_gym.routing.grader_oracle:ReachabilityOracle.matrix",
                            "the reachability matrix (every probe's packet walk, its caches)"),
    "routing_discrete_L3": ("routing_discrete_L3",
                            "netarena_gym.routing.grader_oracle:ReachabilityOracle.matrix",
                            "the reachability matrix (every probe's packet walk, its caches)"),
    "k8s_discrete_L1": ("k8s_discrete_L1", "netarena_gym.k8s.backends.sim:SimBackend.observe",
                        "the NetworkPolicy engine as the step reads it (the generator's own "
                        "check stays)"),
    "capacity_discrete_L1": ("capacity_discrete_L1",
                             "netarena_gym.capacity_planning.backends.sim:grade",
                             "grading the episode (the generator's own safety check stays)"),
}
CARTPOLE_SLICE = 0.5  # CPU seconds of CartPole-v1 after each run


def resolve(target: str) -> tuple[object, str]:
    """``"pkg.module:name"`` or ``"pkg.module:Class.method"`` (a plain function or method)
    -> (the module or class holding it, its name)."""
    modname, _, path = target.partition(":")
    owner: object = importlib.import_module(modname)
    *outer, attr = path.split(".")
    for name in outer:
        owner = getattr(owner, name)
    if not callable(getattr(owner, attr)) or isinstance(
            vars(owner).get(attr), (staticmethod, classmethod)):
        raise NetArenaError(f"{target} is not a plain function or method")
    return owner, attr


class Replay:
    """``target``'s results: :meth:`recording` patches it to keep them, :meth:`replaying`
    to serve them back in order instead of running it (:meth:`replayed_all` says whether
    every one was served)."""

    def __init__(self, target: str):
        self.target = target
        self.owner, self.attr = resolve(target)
        self.original = getattr(self.owner, self.attr)
        self.record: list = []
        self.served = 0

    @contextmanager
    def recording(self):
        orig, rec = self.original, self.record

        def fn(*a, **k):
            r = orig(*a, **k)
            rec.append(r)
            return r
        with mock.patch.object(self.owner, self.attr, fn):
            yield self

    @contextmanager
    def replaying(self):
        nxt = iter(self.record).__next__
        self.served = 0

        def fn(*a, **k):
            try:
                r = nxt()
            except StopIteration:
                raise NetArenaError(f"replay of {self.target}: more calls than recorded "
                                    "(the run diverged)") from None
            self.served += 1
            return r
        with mock.patch.object(self.owner, self.attr, fn):
            yield self

    def replayed_all(self) -> bool:
        return self.served == len(self.record)


def run(env, steps: int, trace: list | None = None) -> tuple[float, float]:
    """CPU seconds of ``steps`` random masked steps from seed 0, resets at episode ends
    included (episode ``k`` on seed ``k``), and of the ``step`` calls alone
    (``bench_speed.Stepper``, no warm-up); ``trace``: see ``Stepper.run``."""
    s = Stepper(env, seed=0, warmup=0)
    s.run(steps=steps, trace=trace)
    return s.total, s.in_step


def ablate(row: str, steps: int, rounds: int) -> dict:
    """One row of :data:`ABLATIONS` (see the module docstring)."""
    env_name, target, what = ABLATIONS[row]
    env_id, kw, _ = ENVS[env_name]

    def make():
        return gym.make(env_id, **kw)
    run(make(), min(steps, 2000))  # what a process builds once is not in the figures
    replay = Replay(target)
    full_trace: list = []
    with replay.recording():
        run(make(), steps, full_trace)
    calls = len(replay.record)
    if calls == 0:
        raise NetArenaError(f"{row}: {target} was never called")
    free_trace: list = []
    with replay.replaying():
        run(make(), steps, free_trace)
    if not replay.replayed_all() or free_trace != full_trace:
        raise NetArenaError(f"{row}: replaying {target} changed the trajectory (its calls "
                            "have effects beyond their results), so it cannot be made free "
                            "this way")
    full = free = full_step = free_step = 0.0
    cart = Stepper(gym.make("CartPole-v1"))
    for _ in range(rounds):
        with replay.replaying():
            t, t_step = run(make(), steps)
        free, free_step = free + t, free_step + t_step
        cart.run(CARTPOLE_SLICE)
        t, t_step = run(make(), steps)
        full, full_step = full + t, full_step + t_step
        cart.run(CARTPOLE_SLICE)
    ref = cart.rates()[0]
    n = steps * rounds
    return {"env": env_name, "free": target, "what": what, "calls_per_step": calls / steps,
            "cartpole": round(ref), "ratio": round(n / full / ref, 4),
            "ratio_free": round(n / free / ref, 4), "share": round(1 - free / full, 3),
            "step_only": round(n / full_step / ref, 4),
            "step_only_free": round(n / free_step / ref, 4)}


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=15000, help="steps per run")
    p.add_argument("--rounds", type=int, default=3, help="full and free runs, alternating")
    p.add_argument("--only", default=",".join(ABLATIONS),
                   help=f"comma-separated rows, of {', '.join(ABLATIONS)}")
    a = p.parse_args(argv)
    rows = [x.strip() for x in a.only.split(",") if x.strip()]
    bad = sorted(set(rows) - set(ABLATIONS))
    if bad:
        p.error(f"--only: unknown row(s) {bad}; valid: {', '.join(ABLATIONS)}")
    out = {"rows": [ablate(r, a.steps, a.rounds) for r in rows]}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
