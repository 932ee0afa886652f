"""Ways to play a list of jobs: in this process, in N local processes, or on Ray.

Each yields records as episodes finish (in any order); records depend only on the job,
never on which worker played it, so the summary of a run is the same for any N.
"""
from __future__ import annotations

import multiprocessing as mp
import os
from typing import Any, Iterable, Iterator

import gymnasium as gym

from netarena_gym.agents.episode import play_episode
from netarena_gym.agents.factory import make_agent
from netarena_gym.errors import BackendUnavailable, require
from netarena_gym.eval.spec import EvalSpec, Job


class EpisodeWorker:
    """Owns one env (and one agent) per level and plays jobs of one :class:`EvalSpec`
    through :func:`~netarena_gym.agents.episode.play_episode`.

    The same class serves the sequential loop, each process of ``--workers`` and each Ray
    actor, so every path produces the same records."""

    def __init__(self, spec: EvalSpec | dict):
        self.spec = spec if isinstance(spec, EvalSpec) else EvalSpec.from_dict(spec)
        self._envs: dict[Any, Any] = {}
        self._agents: dict[Any, Any] = {}

    def _get(self, level):
        if level not in self._envs:
            env = gym.make(self.spec.env, **self.spec.env_kwargs(level))
            self._envs[level] = env
            self._agents[level] = make_agent(self.spec.agent, env, seed=self.spec.seed,
                                             options=self.spec.agent_options)
        return self._envs[level], self._agents[level]

    def run(self, job: Job | tuple | list) -> dict:
        if not isinstance(job, Job):
            job = Job(*job)
        env, agent = self._get(job.level)  # a setup error stops the run: nothing to record
        rec = play_episode(env, agent, seed=job.seed, record=True, key=job.key,
                           agent_name=self.spec.agent)
        rec.env, rec.level = job.env, job.level
        return rec.to_dict()

    def close(self) -> None:
        for level, env in self._envs.items():
            agent = self._agents.get(level)
            if hasattr(agent, "close"):
                try:
                    agent.close()
                except Exception:
                    pass
            env.close()
        self._envs.clear()
        self._agents.clear()


def run_sequential(spec: EvalSpec, jobs: Iterable[Job]) -> Iterator[dict]:
    worker = EpisodeWorker(spec)
    try:
        for job in jobs:
            yield worker.run(job)
    finally:
        worker.close()


# ---------------------------------------------------------------- processes
_WORKER: EpisodeWorker | None = None


def _init(spec_dict: dict) -> None:
    global _WORKER
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _WORKER = EpisodeWorker(spec_dict)


def _run(job: tuple) -> dict:
    return _WORKER.run(Job(*job))


def start_method() -> str:
    """``NETARENA_MP_START`` or ``forkserver`` where it exists (fast, and safe with the
    threads an LLM client or torch may have started), else ``spawn``."""
    want = os.environ.get("NETARENA_MP_START")
    methods = mp.get_all_start_methods()
    if want:
        return want
    return "forkserver" if "forkserver" in methods else "spawn"


def run_processes(spec: EvalSpec, jobs: Iterable[Job], workers: int) -> Iterator[dict]:
    """Each of ``workers`` processes owns its envs and agent and takes one job at a time.
    A worker that dies (or cannot start) fails the run with ``BrokenProcessPool`` instead
    of hanging it; the records already written are kept for a resume."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    jobs = [(j.env, j.level, j.seed) for j in jobs]
    if not jobs:
        return
    ctx = mp.get_context(start_method())
    if ctx.get_start_method() == "forkserver":
        ctx.set_forkserver_preload(["netarena_gym", "netarena_gym.agents.episode"])
    n = min(workers, len(jobs))
    pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_init,
                               initargs=(spec.to_dict(),))
    pending = iter(jobs)
    running = set()
    try:
        for job in pending:  # keep two jobs queued per worker, no more
            running.add(pool.submit(_run, job))
            if len(running) >= 2 * n:
                break
        while running:
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                yield fut.result()
                nxt = next(pending, None)
                if nxt is not None:
                    running.add(pool.submit(_run, nxt))
    finally:
        for fut in running:
            fut.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


# ---------------------------------------------------------------------- Ray
ROOT_RESOURCE = "netarena_root"


def backend_resources(spec: EvalSpec) -> dict[str, float]:
    """Custom Ray resources an episode of this spec needs. Emulator backends that need
    root (Mininet) ask for ``netarena_root``: start the nodes that may run them with
    ``ray start --resources='{"netarena_root": 4}'`` (the number caps concurrent envs).
    An env class may declare its own with ``backend_resources = {backend: {...}}``."""
    import gymnasium as gym

    entry = gym.spec(spec.env).entry_point
    declared = {}
    if isinstance(entry, str):
        import importlib

        mod, _, name = entry.partition(":")
        declared = getattr(getattr(importlib.import_module(mod), name), "backend_resources", {})
    if spec.backend in declared:
        return dict(declared[spec.backend])
    if spec.backend in ("mininet",):
        return {ROOT_RESOURCE: 1.0}
    return {}


def ray_capacity(resources: dict, spec: EvalSpec) -> int:
    """How many one-CPU episode actors a cluster with these total ``resources`` can run at
    once: its CPUs, and for a backend that needs a custom resource (Mininet's
    ``netarena_root``) no more than the units of it on offer."""
    n = int(resources.get("CPU", 1))
    for name, per_actor in backend_resources(spec).items():
        n = min(n, int(resources.get(name, 0) // per_actor))
    if n < 1:
        need = ", ".join(backend_resources(spec)) or "CPU"
        raise BackendUnavailable(f"the Ray cluster offers no {need} for {spec.backend} episodes "
                                 f"(a node offers {ROOT_RESOURCE} when started with "
                                 f"--resources '{{\"{ROOT_RESOURCE}\": 1}}')")
    return n


def run_ray(spec: EvalSpec, jobs: Iterable[Job], workers: int | None = None,
            address: str | None = None) -> Iterator[dict]:
    """Episodes as calls on Ray actors, each actor owning its envs and agent.

    ``address=None`` starts a local Ray; ``"auto"`` or ``"ray://host:10001"`` joins a
    cluster. Actors = ``workers`` (default: the cluster's CPUs), capped at what the cluster
    can place at once (:func:`ray_capacity`): an actor that can never start would hold its
    queued episodes forever."""
    ray = require("ray", "ray")
    from ray.util import ActorPool

    jobs = [(j.env, j.level, j.seed) for j in jobs]
    if not jobs:
        return
    started = False
    if not ray.is_initialized():
        kw = {"address": address} if address else {"num_cpus": workers or os.cpu_count()}
        # keep the package importable in workers started from a source checkout (the
        # nodes of a cluster on this machine too: they import the driver's copy)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        kw["runtime_env"] = {"env_vars": {"PYTHONPATH": root}}
        ray.init(include_dashboard=False, log_to_driver=False, **kw)
        started = True
    try:
        n = min(workers or len(jobs), ray_capacity(ray.cluster_resources(), spec), len(jobs))
        actor_cls = ray.remote(num_cpus=1, resources=backend_resources(spec) or None)(_RayWorker)
        actors = [actor_cls.remote(spec.to_dict()) for _ in range(n)]
        pool = ActorPool(actors)
        yield from pool.map_unordered(lambda a, job: a.run.remote(job), jobs)
    finally:
        if started:
            ray.shutdown()


class _RayWorker:
    def __init__(self, spec_dict: dict):
        self.worker = EpisodeWorker(spec_dict)

    def run(self, job) -> dict:
        import ray

        rec = self.worker.run(Job(*job))
        rec["node_id"] = ray.get_runtime_context().get_node_id()  # where it ran
        return rec
