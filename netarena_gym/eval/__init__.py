"""Benchmarking agents on NetArena envs: runs, records, summaries, reports, datasets.

    from netarena_gym.eval import EvalSpec, evaluate
    summary = evaluate(EvalSpec("NetArena-Routing-v0", levels=(1, 2), episodes=50),
                       out="runs/expert", workers=2)
"""
from netarena_gym.eval.run import evaluate
from netarena_gym.eval.spec import EvalSpec, Job, job_key
from netarena_gym.eval.store import RunStore, iter_records, load_run
from netarena_gym.agents.summary import summarize

__all__ = ["EvalSpec", "Job", "RunStore", "evaluate", "iter_records", "job_key", "load_run",
           "summarize"]
