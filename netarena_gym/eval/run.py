"""Run an evaluation: plan the jobs, skip the finished ones, play the rest on the chosen
executor, append each record as it arrives and write the summary."""
from __future__ import annotations

import time
from typing import Callable

import netarena_gym
from netarena_gym.eval.executors import run_processes, run_ray, run_sequential
from netarena_gym.eval.groups import BY, table
from netarena_gym.eval.progress import Progress
from netarena_gym.eval.spec import EvalSpec
from netarena_gym.eval.store import RunStore
from netarena_gym.agents.summary import summarize


def run_meta(spec: EvalSpec) -> dict:
    return {"env": spec.env,
            "level": spec.levels[0] if len(spec.levels) == 1 else list(spec.levels),
            "levels": list(spec.levels), "backend": spec.backend, "interface": spec.interface,
            "agent": spec.agent, "seed": spec.seed, "max_steps": spec.max_steps,
            "netarena_gym": netarena_gym.__version__,
            "model": spec.agent_options.get("model"),
            "prompt": spec.agent_options.get("prompt")}


def evaluate(spec: EvalSpec, *, out: str | None = None, workers: int | None = None,
             ray: bool = False, ray_address: str | None = None, overwrite: bool = False,
             progress: bool | None = None, progress_stream=None,
             on_record: Callable[[dict], None] | None = None,
             agent_timeout: float | None = None) -> dict:
    """Play every job of ``spec`` not already recorded under ``out`` and return the summary
    of all of them (resumed and new). ``progress=None`` shows it on a terminal only.

    ``workers``: local processes (default 1), or Ray actors (default: the cluster's CPUs).
    ``agent_timeout``: seconds any one call into the agent may take; past it the worker is
    stopped and the episode gets an error record. With a timeout, or more than one worker,
    episodes run in worker processes; with neither, in this process (no isolation, no
    limit)."""
    jobs = spec.jobs()
    wanted = {j.key for j in jobs}
    store = RunStore(out) if out else None
    done = store.open(spec, overwrite=overwrite) if store else {}
    done = {k: r for k, r in done.items() if k in wanted}
    todo = [j for j in jobs if j.key not in done]
    records = list(done.values())
    bar = Progress(len(jobs), done=len(done), correct=sum(bool(r["correct"]) for r in records),
                   safe=sum(bool(r["safe"]) for r in records), stream=progress_stream,
                   enabled=progress, label=f"{spec.env} {spec.agent} ")
    t0 = time.perf_counter()
    if ray or ray_address:
        executor = "ray"
    elif (workers or 1) > 1 or agent_timeout is not None:
        executor = "processes"
    else:
        executor = "local"
    try:
        if executor == "ray":
            it = run_ray(spec, todo, workers=workers, address=ray_address,
                         agent_timeout=agent_timeout)
        elif executor == "processes":
            it = run_processes(spec, todo, workers or 1, agent_timeout=agent_timeout)
        else:
            it = run_sequential(spec, todo)
        for rec in it:
            records.append(rec)
            if store:
                store.append(rec)
            bar.update(rec)
            if on_record:
                on_record(rec)
    finally:
        bar.close()
        if store:
            store.close()
    meta = run_meta(spec)
    summary = summarize(records, meta=meta)
    summary["episodes_per_level"] = spec.episodes
    summary["tables"] = {by: table(records, by) for by in BY}
    summary["episodes_resumed"] = len(done)
    summary["episodes_played"] = len(records) - len(done)
    summary["wall_seconds"] = time.perf_counter() - t0
    summary["workers"] = workers if workers is not None else (None if executor == "ray" else 1)
    summary["executor"] = executor
    summary["agent_timeout"] = agent_timeout
    if store:
        store.write_summary(summary)
    return summary
