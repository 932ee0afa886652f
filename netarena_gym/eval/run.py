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


def evaluate(spec: EvalSpec, *, out: str | None = None, workers: int = 1,
             ray: bool = False, ray_address: str | None = None, overwrite: bool = False,
             progress: bool | None = None, progress_stream=None,
             on_record: Callable[[dict], None] | None = None) -> dict:
    """Play every job of ``spec`` not already recorded under ``out`` and return the summary
    of all of them (resumed and new). ``progress=None`` shows it on a terminal only."""
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
    try:
        if ray or ray_address:
            it = run_ray(spec, todo, workers=workers if workers > 1 else None,
                         address=ray_address)
        elif workers > 1 and len(todo) > 1:
            it = run_processes(spec, todo, workers)
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
    summary["workers"] = workers
    summary["executor"] = "ray" if (ray or ray_address) else ("processes" if workers > 1 else "local")
    if store:
        store.write_summary(summary)
    return summary
