"""The worker processes of ``netarena-gym eval``: each owns an
:class:`~netarena_gym.eval.executors.EpisodeWorker` and plays one job at a time.

Agents are untrusted, so the grader never waits on one without a limit:

* every call into the agent is timed (a shared clock per worker, set around each call);
  one that runs past ``agent_timeout`` seconds gets its worker stopped (SIGTERM, so the
  episode's env is closed where the agent lets it, then SIGKILL) and replaced, and the
  episode an ``AgentTimeout`` error record;
* a worker that dies (an agent calling ``os._exit``, a crash) gives the job it held a
  ``WorkerDied`` error record and is replaced; the run goes on, and a resume skips it;
* workers ignore SIGINT (Ctrl-C stops the grader, which then stops them), so a
  ``KeyboardInterrupt`` or ``SystemExit`` raised by an agent is that episode's error;
* a worker dies with the grader (``PR_SET_PDEATHSIG`` on Linux, and a thread that notices
  the grader is gone), so a killed grader leaves none behind;
* at the end each worker closes its agents and envs (within a bound) before it exits.
"""
from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections import deque
from multiprocessing.connection import wait
from typing import Iterable, Iterator

from netarena_gym.eval.executors import (EpisodeWorker, GraderFacts, close_timeout,
                                         failed_record, poll_interval, start_method,
                                         timeout_message)
from netarena_gym.eval.spec import EvalSpec, Job

#: seconds a stopped worker has to close its env before it is killed
GRACE = 5.0
_PR_SET_PDEATHSIG = 1
_stopping = False


# ------------------------------------------------------------------- worker side
def _die_with(grader_pid: int) -> None:
    """Exit when the grader does: the kernel's parent-death signal where there is one
    (the worker's parent is the forkserver, which exits with the grader), and a thread
    that checks the parent and the grader every half second."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
        except (OSError, AttributeError):
            pass
    parent = os.getppid()

    def watch():
        while os.getppid() == parent and alive(grader_pid):
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="netarena-grader-watch", daemon=True).start()


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def _on_sigterm(signum, frame):
    global _stopping
    _stopping = True
    raise KeyboardInterrupt("stopped by the grader")


def serve(spec_dict: dict, conn, clock, grader_pid: int, environ: dict) -> None:
    """A worker process: receives ``(env, level, seed)`` jobs (None to finish), says
    ``("start", facts)`` once each episode's env is reset (its scenario and step budget,
    for the record the grader writes if the worker never answers), and answers
    ``("ok", record)`` or ``("error", message)`` when the env or agent cannot be made.

    ``environ`` is the grader's environment when the worker was started: a forkserver
    child inherits the forkserver's, which is the grader's when the *first* pool started,
    so a variable set since (an agent's ``NETARENA_POLICY``) would be missing."""
    os.environ.clear()
    os.environ.update(environ)
    _die_with(grader_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_sigterm)
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    def mark(busy: bool) -> None:
        clock.value = time.monotonic() if busy else 0.0

    worker = EpisodeWorker(spec_dict, mark=mark, catch_interrupt=True,
                           on_start=lambda facts: conn.send(("start", facts)))
    try:
        conn.send(("ready", os.getpid()))
        while not _stopping:
            try:
                job = conn.recv()
            except (EOFError, OSError, KeyboardInterrupt):
                break
            if job is None:
                break
            try:
                reply = ("ok", worker.run(Job(*job)))
            except BaseException as e:
                reply = ("error", f"{type(e).__name__}: {e}")
            if _stopping:
                break
            try:
                conn.send(reply)
            except (OSError, KeyboardInterrupt):  # the grader is gone, or stopped it
                break
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the grader kills after a bound
        try:
            worker.close()
        except BaseException:
            pass


# ------------------------------------------------------------------- grader side
class _Worker:
    def __init__(self, ctx, spec_dict: dict):
        self.clock = ctx.RawValue("d", 0.0)
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=serve, name="netarena-eval-worker",
                                args=(spec_dict, child, self.clock, os.getpid(),
                                      dict(os.environ)))
        self.proc.start()
        child.close()
        self.job = None
        self.facts = None  # what the worker said when the job's episode started
        self.given = 0.0  # when it got the job (monotonic)
        self.reaped = False
        self.ready = False  # it started and said so: from then on a death is its job's

    def give(self, job) -> None:
        self.job, self.facts, self.given = job, None, time.monotonic()
        self.conn.send(job)

    def failed(self, spec: EvalSpec, known: GraderFacts, error_type: str, message: str,
               where: str = "worker") -> dict:
        """The record of its job, which it will not return: the episode's facts (from the
        worker, else as the grader finds them) and the time it ran (the agent call it was
        in, if any, and the whole episode)."""
        now, since = time.monotonic(), self.clock.value
        return failed_record(spec, self.job, error_type, message, where,
                             facts=self.facts or known(self.job),
                             agent_seconds=now - since if since > 0 else 0.0,
                             wall_seconds=now - self.given)

    def overran(self, limit: float | None) -> bool:
        since = self.clock.value
        return limit is not None and since > 0 and time.monotonic() - since > limit

    def stop(self) -> None:
        """Ask it to finish: an idle worker closes and exits, a busy one gets SIGTERM."""
        if self.reaped:
            return
        try:
            if self.job is None and self.proc.is_alive():
                self.conn.send(None)
            elif self.proc.is_alive():
                self.proc.terminate()
        except (OSError, ValueError):
            self.proc.kill()

    def reap(self, deadline: float) -> None:
        """Wait for it until ``deadline`` (monotonic), kill it if still there, release it."""
        if self.reaped:
            return
        self.reaped = True
        self.proc.join(max(0.0, deadline - time.monotonic()))
        if self.proc.exitcode is None:
            self.proc.kill()
            self.proc.join()
        self.conn.close()
        self.proc.close()


def _died(proc) -> str:
    proc.join(1.0)
    code = proc.exitcode
    how = (f"killed by signal {-code}" if code is not None and code < 0
           else f"exit status {code}")
    return f"the worker process playing this episode died ({how})"


def run_pool(spec: EvalSpec, jobs: Iterable[Job], workers: int, *,
             agent_timeout: float | None = None) -> Iterator[dict]:
    """Play ``jobs`` on ``workers`` processes (no more than there are jobs) and yield each
    record as it comes (see the module docstring). A worker that cannot make its env or
    agent raises RuntimeError with its message: that would fail every episode."""
    todo = deque((j.env, j.level, j.seed) for j in jobs)
    if not todo:
        return
    ctx = mp.get_context(start_method())
    if ctx.get_start_method() == "forkserver":
        # not netarena_gym itself: Python 3.11's forkserver imports with its own sys.path
        # (the working directory first), which may find another copy than the grader's
        # (an installed one beside a checkout); workers import it with the grader's path
        ctx.set_forkserver_preload(["numpy", "gymnasium"])
    spec_dict = spec.to_dict()
    poll = poll_interval(agent_timeout)
    known = GraderFacts(spec)
    pool: list[_Worker] = []
    try:
        for _ in range(min(workers, len(todo))):
            pool.append(_Worker(ctx, spec_dict))
        while True:
            for i, w in enumerate(pool):
                if w.job is None and todo:
                    if not w.proc.is_alive():  # died between jobs: nothing of it to record
                        w.reap(time.monotonic())
                        w = pool[i] = _Worker(ctx, spec_dict)
                    w.give(todo.popleft())
            busy = [w for w in pool if w.job is not None]
            if not busy:
                return
            ready = set(wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], poll))
            for i, w in enumerate(pool):
                if w.job is None:
                    continue
                if w.conn in ready or w.proc.sentinel in ready:
                    try:
                        kind, payload = w.conn.recv() if w.conn.poll() else (None, None)
                    except (EOFError, OSError):
                        kind = payload = None
                    if kind == "ready":
                        w.ready = True
                        continue
                    if kind == "start":
                        w.facts = payload
                        continue
                    if kind == "ok":
                        w.job = None
                        yield payload
                        continue
                    if kind == "error":
                        w.job = None  # it answered: idle, so it is asked to finish
                        raise RuntimeError(f"a worker could not set up: {payload}")
                    if not w.ready:  # it never started: every worker would fail alike
                        raise RuntimeError(f"a worker process could not start: "
                                           f"{_died(w.proc).split('(')[-1].rstrip(')')}")
                    rec = w.failed(spec, known, "WorkerDied", _died(w.proc))
                    w.reap(time.monotonic())
                elif w.overran(agent_timeout):
                    rec = w.failed(spec, known, "AgentTimeout",
                                   timeout_message(agent_timeout), where="agent")
                    w.stop()
                    w.reap(time.monotonic() + GRACE)
                else:
                    continue
                pool[i] = _Worker(ctx, spec_dict)
                yield rec
    finally:
        for w in pool:
            w.stop()
        deadline = time.monotonic() + close_timeout(agent_timeout)
        for w in pool:
            w.reap(deadline)
        known.close()
