"""Ways to play a list of jobs: in this process, in N local processes, or on Ray.

Each yields records as episodes finish (in any order); records depend only on the job,
never on which worker played it, so the summary of a run is the same for any N.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections import deque
from typing import Any, Callable, Iterable, Iterator

import gymnasium as gym

from netarena_gym.agents.episode import EpisodeRecord, jsonable, play_episode
from netarena_gym.agents.factory import make_agent
from netarena_gym.errors import BackendUnavailable, require
from netarena_gym.eval.spec import EvalSpec, Job


class EpisodeWorker:
    """Owns one env (and one agent) per level and plays jobs of one :class:`EvalSpec`
    through :func:`~netarena_gym.agents.episode.play_episode`.

    The same class serves the sequential loop, each worker process and each Ray actor, so
    every path produces the same records. ``mark(True)`` / ``mark(False)`` are called around
    every call into the agent (its construction, ``set_episode_seed``, ``reset``, ``act``,
    ``episode_stats``, ``close``): the executors time them against ``--agent-timeout``.
    ``catch_interrupt`` records an agent's ``KeyboardInterrupt`` (a worker ignores SIGINT,
    so only the agent can raise one there)."""

    def __init__(self, spec: EvalSpec | dict, *, mark: Callable[[bool], None] | None = None,
                 catch_interrupt: bool = False,
                 on_start: Callable[[dict], None] | None = None):
        self.spec = spec if isinstance(spec, EvalSpec) else EvalSpec.from_dict(spec)
        self.mark = mark
        self.on_start = on_start  # gets episode_facts once each episode's env is reset
        self.catch_interrupt = catch_interrupt
        self._envs: dict[Any, Any] = {}
        self._agents: dict[Any, Any] = {}

    def _get(self, level):
        if level not in self._envs:
            env = gym.make(self.spec.env, **self.spec.env_kwargs(level))
            self._envs[level] = env
            with _marked(self.mark):
                agent = make_agent(self.spec.agent, env, seed=self.spec.seed,
                                   options=self.spec.agent_options)
            self._agents[level] = agent if self.mark is None else WatchedAgent(agent, self.mark)
        return self._envs[level], self._agents[level]

    def run(self, job: Job | tuple | list) -> dict:
        if not isinstance(job, Job):
            job = Job(*job)
        env, agent = self._get(job.level)  # a setup error stops the run: nothing to record
        started = None
        if self.on_start is not None:
            def started(r, tell=self.on_start):
                tell(episode_facts(r))
        # an unreachable backend would fail every episode: it stops the run, unrecorded
        rec = play_episode(env, agent, seed=job.seed, record=True, key=job.key,
                           agent_name=self.spec.agent, catch_interrupt=self.catch_interrupt,
                           on_reset=started, reset_raises=(BackendUnavailable,))
        rec.env, rec.level = job.env, job.level
        return rec.to_dict()

    def close(self) -> None:
        """Close every agent and env; an error in one does not skip the others."""
        for level, env in self._envs.items():
            agent = self._agents.get(level)
            for obj in (agent, env):
                if hasattr(obj, "close"):
                    try:
                        obj.close()
                    except BaseException as e:
                        if isinstance(e, KeyboardInterrupt) and not self.catch_interrupt:
                            raise
        self._envs.clear()
        self._agents.clear()


class _marked:
    """``mark(True)`` on entry, ``mark(False)`` on exit (nothing when ``mark`` is None)."""

    def __init__(self, mark):
        self.mark = mark

    def __enter__(self):
        if self.mark is not None:
            self.mark(True)

    def __exit__(self, *exc):
        if self.mark is not None:
            self.mark(False)


class WatchedAgent:
    """An agent whose calls are marked (see :class:`EpisodeWorker`); every other attribute
    (``last_call``, ...) is the agent's own, and ``hasattr`` answers as for the agent."""

    CALLS = frozenset({"set_episode_seed", "reset", "act", "episode_stats", "close"})

    def __init__(self, agent, mark: Callable[[bool], None]):
        self._agent, self._mark = agent, mark

    def __getattr__(self, name):
        if name in ("_agent", "_mark"):  # not set yet (unpickling)
            raise AttributeError(name)
        attr = getattr(self._agent, name)
        if name not in self.CALLS or not callable(attr):
            return attr

        def call(*args, **kwargs):
            with _marked(self._mark):
                return attr(*args, **kwargs)
        return call


def episode_facts(rec: EpisodeRecord) -> dict:
    """What a worker tells the grader once an episode's env is reset: what the episode's
    record needs if the worker never returns it."""
    return {"task": rec.task, "max_steps": rec.max_steps, "scenario": rec.scenario,
            "category": rec.category}


class GraderFacts:
    """:func:`episode_facts` as the grader finds them without the worker (one that died
    before it told, or a Ray actor): the env's step budget from its config and, on the
    simulator, the scenario of a reset with the job's seed (deterministic, the one the
    worker played). A real backend is never reset here; ``{}`` if the env cannot be made."""

    def __init__(self, spec: EvalSpec):
        self.spec = spec
        self._envs: dict[Any, Any] = {}

    def __call__(self, job: Job | tuple) -> dict:
        job = job if isinstance(job, Job) else Job(*job)
        try:
            env = self._envs.get(job.level)
            if env is None:
                env = self._envs[job.level] = gym.make(self.spec.env,
                                                       **self.spec.env_kwargs(job.level))
            base = env.unwrapped
            facts = {"task": getattr(base, "task", ""),
                     "max_steps": getattr(base, "max_steps", None)}
            if self.spec.backend == "sim":  # as play_episode reads them
                _, info = env.reset(seed=job.seed)
                scenario = jsonable(info.get("scenario") or {})
                facts["scenario"] = scenario
                facts["category"] = str((scenario.get("meta") or {}).get("category", "all"))
            return facts
        except Exception:
            return {}

    def close(self) -> None:
        for env in self._envs.values():
            try:
                env.close()
            except Exception:
                pass
        self._envs.clear()


def failed_record(spec: EvalSpec, job: Job | tuple, error_type: str, message: str,
                  where: str = "worker", *, facts: dict | None = None,
                  agent_seconds: float = 0.0, wall_seconds: float = 0.0) -> dict:
    """The record of an episode whose worker could not return one (it timed out and was
    stopped, or died): not correct, and not known to be safe. ``facts``
    (:func:`episode_facts`: the step budget, scenario and category the worker played)
    make it count like any other record (upstream's iterations: budget + 1; its
    category); ``agent_seconds`` and ``wall_seconds`` are the time it took."""
    if not isinstance(job, Job):
        job = Job(*job)
    facts = facts or {}
    err = {"where": where, "step": None, "type": error_type, "message": message,
           "traceback": ""}
    return EpisodeRecord(key=job.key, env=job.env, level=job.level, seed=job.seed,
                         agent=spec.agent, task=facts.get("task") or "",
                         interface=spec.interface, backend=spec.backend,
                         max_steps=facts.get("max_steps", spec.max_steps),
                         scenario=facts.get("scenario"), category=facts.get("category"),
                         errors=[err], correct=False, safe=False, safe_compat=False,
                         agent_seconds=float(agent_seconds),
                         wall_seconds=float(wall_seconds)).to_dict()


def timeout_message(seconds: float) -> str:
    return (f"timed out: an agent call took longer than --agent-timeout {seconds:g} s; "
            "its worker was stopped and replaced")


def run_sequential(spec: EvalSpec, jobs: Iterable[Job]) -> Iterator[dict]:
    """In this process: no isolation and no time limit (``evaluate`` with
    ``agent_timeout=None`` and one worker)."""
    worker = EpisodeWorker(spec)
    try:
        for job in jobs:
            yield worker.run(job)
    finally:
        worker.close()


def run_processes(spec: EvalSpec, jobs: Iterable[Job], workers: int,
                  agent_timeout: float | None = None) -> Iterator[dict]:
    """Each of ``workers`` processes owns its envs and agent and takes one job at a time
    (:func:`netarena_gym.eval.pool.run_pool`): a worker that dies or whose agent overruns
    ``agent_timeout`` gives that episode an error record and is replaced."""
    from netarena_gym.eval.pool import run_pool

    yield from run_pool(spec, jobs, workers, agent_timeout=agent_timeout)


def start_method() -> str:
    """``NETARENA_MP_START`` or ``forkserver`` where it exists (fast, and safe with the
    threads an LLM client or torch may have started), else ``spawn``."""
    want = os.environ.get("NETARENA_MP_START")
    methods = mp.get_all_start_methods()
    if want:
        return want
    return "forkserver" if "forkserver" in methods else "spawn"


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
            address: str | None = None, agent_timeout: float | None = None
            ) -> Iterator[dict]:
    """Episodes as calls on Ray actors, each actor owning its envs and agent.

    ``address=None`` starts a local Ray; ``"auto"`` or ``"ray://host:10001"`` joins a
    cluster. Actors = ``workers`` (default: the cluster's CPUs), capped at what the cluster
    can place at once (:func:`ray_capacity`): an actor that can never start would hold its
    queued episodes forever. An actor that dies, or whose agent call overruns
    ``agent_timeout`` seconds (the driver asks each busy actor how long its current agent
    call has run; one that stops answering counts after 5 s more, a new one that has not
    answered yet after :data:`ACTOR_START_SECONDS` more), gives that episode an error record
    and is replaced. Every actor left
    is closed (its agents and envs) before it is killed."""
    ray = require("ray", "ray")

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
        # two threads: one plays, the other answers ``age`` while it does
        actor_cls = ray.remote(num_cpus=1, max_concurrency=2,
                               resources=backend_resources(spec) or None)(RayWorker)
        yield from _play_on_actors(ray, actor_cls, spec, jobs, n, agent_timeout)
    finally:
        if started:
            ray.shutdown()


#: how long a new actor may take to start (a Ray worker process, imports, its envs and
#: agent) before its silence counts as an overrun agent; once it has answered, silence
#: counts after ``agent_timeout`` + 5 s
ACTOR_START_SECONDS = 60.0


class _Actor:
    def __init__(self, actor_cls, spec: EvalSpec):
        self.actor = actor_cls.remote(spec.to_dict())
        self.job = self.ref = self.probe = None
        self.alive = False  # it has answered once: it is up
        self.seen = 0.0  # when it last answered (or was given its job)
        self.given = 0.0  # when it was given its job
        self.age = 0.0  # how long its current agent call had run when it last answered


def _play_on_actors(ray, actor_cls, spec: EvalSpec, jobs: list, n: int,
                    agent_timeout: float | None) -> Iterator[dict]:
    todo = deque(jobs)
    slots = [_Actor(actor_cls, spec) for _ in range(n)]
    poll = poll_interval(agent_timeout)
    known = GraderFacts(spec)
    try:
        while True:
            for s in slots:
                if s.job is None and todo:
                    s.job = todo.popleft()
                    s.ref, s.probe = s.actor.run.remote(s.job), None
                    s.seen = s.given = time.monotonic()
                    s.age = 0.0
            busy = [s for s in slots if s.job is not None]
            if not busy:
                return
            ready, _ = ray.wait([s.ref for s in busy], num_returns=1, timeout=poll)
            ready = set(ready)
            for i, s in enumerate(slots):
                if s.job is None:
                    continue
                if s.ref in ready:
                    try:
                        kind, payload = ray.get(s.ref)
                    except ray.exceptions.RayActorError as e:
                        yield failed_record(spec, s.job, "WorkerDied", "the Ray actor playing "
                                            f"this episode died: {_first_line(e)}",
                                            facts=known(s.job),
                                            wall_seconds=time.monotonic() - s.given)
                        slots[i] = _replace(ray, s, actor_cls, spec)
                        continue
                    if kind != "ok":
                        raise RuntimeError(f"a Ray worker could not set up: {payload}")
                    s.job = None
                    yield payload
                elif agent_timeout is not None and _overran(ray, s, agent_timeout):
                    yield failed_record(spec, s.job, "AgentTimeout",
                                        timeout_message(agent_timeout), where="agent",
                                        facts=_started(ray, s) or known(s.job),
                                        agent_seconds=max(s.age, agent_timeout),
                                        wall_seconds=time.monotonic() - s.given)
                    slots[i] = _replace(ray, s, actor_cls, spec)
    finally:
        known.close()
        _close_actors(ray, slots, close_timeout(agent_timeout))


def _started(ray, s: _Actor) -> dict | None:
    """The facts the busy actor's episode started with (its other thread answers)."""
    try:
        return ray.get(s.actor.started.remote(), timeout=5.0)
    except Exception:
        return None


def _overran(ray, s: _Actor, agent_timeout: float) -> bool:
    """Whether the busy actor's current agent call has run past ``agent_timeout`` (or the
    actor has not answered for that long)."""
    now = time.monotonic()
    if s.probe is not None:
        got, _ = ray.wait([s.probe], timeout=0)
        if got:
            try:
                age = ray.get(s.probe)
                s.alive = True
            except ray.exceptions.RayError:
                age = None  # it died: its run's reference says so
            s.probe, s.seen = None, now
            s.age = age or 0.0
            if age is not None and age > agent_timeout:
                return True
        elif now - s.seen > agent_timeout + (5.0 if s.alive else ACTOR_START_SECONDS):
            return True
    if s.probe is None:
        s.probe = s.actor.age.remote()
    return False


def _replace(ray, s: _Actor, actor_cls, spec: EvalSpec) -> _Actor:
    ray.kill(s.actor, no_restart=True)
    return _Actor(actor_cls, spec)


def _close_actors(ray, slots: list, timeout: float) -> None:
    """Close the idle actors (their agents and envs) within ``timeout``, then kill all."""
    refs = [s.actor.close.remote() for s in slots if s.job is None]
    try:
        if refs:
            ray.wait(refs, num_returns=len(refs), timeout=timeout)
    except Exception:
        pass
    finally:
        for s in slots:
            try:
                ray.kill(s.actor, no_restart=True)
            except Exception:
                pass


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:300]


def poll_interval(agent_timeout: float | None) -> float:
    """How often the executors look for an agent call past its deadline."""
    return 1.0 if agent_timeout is None else min(1.0, max(0.02, agent_timeout / 10))


#: seconds a worker has to close its agents and envs at the end without --agent-timeout
CLOSE_TIMEOUT = 60.0


def close_timeout(agent_timeout: float | None) -> float:
    return CLOSE_TIMEOUT if agent_timeout is None else max(agent_timeout, 5.0)


class RayWorker:
    """The actor: an :class:`EpisodeWorker` whose agent calls are timed for ``age``."""

    def __init__(self, spec_dict: dict):
        self.since = 0.0
        self.facts = None
        self.worker = EpisodeWorker(spec_dict, mark=self._mark, catch_interrupt=True,
                                    on_start=self._started)

    def _started(self, facts: dict) -> None:
        self.facts = facts

    def started(self) -> dict | None:
        """The current episode's :func:`episode_facts` (None before its env is reset)."""
        return self.facts

    def _mark(self, busy: bool) -> None:
        self.since = time.monotonic() if busy else 0.0

    def age(self) -> float | None:
        """Seconds the current agent call has run; None between calls."""
        since = self.since
        return time.monotonic() - since if since else None

    def run(self, job) -> tuple[str, Any]:
        """``("ok", record)``, or ``("error", message)`` when the env or the agent could
        not be made (which stops the run)."""
        import ray

        self.facts = None
        try:
            rec = self.worker.run(Job(*job))
        except BaseException as e:
            return "error", f"{type(e).__name__}: {e}"
        rec["node_id"] = ray.get_runtime_context().get_node_id()  # where it ran
        return "ok", rec

    def close(self) -> None:
        self.worker.close()


_RayWorker = RayWorker  # the name earlier versions used
