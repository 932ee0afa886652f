"""Env side of the code sandbox: starts the worker (see :mod:`sandbox_worker`) as a
separate process with a minimal environment, inside bubblewrap (see :mod:`sandbox_bwrap`:
its own network, mount, PID, IPC and UTS namespaces, a read-only minimal file tree, an
unprivileged uid, and a seccomp filter per submission), sends it each topology once and each
submission as it comes, and turns its replies into :class:`SandboxResult` objects.

Every submission runs with CPU-time, memory and wall-clock limits; the client adds its own
deadline on top, and if the worker itself stops answering it is killed and restarted, so a
submission can never hang the env. Nothing about the query's answer is ever sent.

The code finds a namespace already bound (``namespace=``): ``"default"`` binds nothing but
the restricted builtins, ``"upstream"`` (compat) binds upstream NetArena's ``nx``, ``json``,
``copy`` and ``G`` (see :mod:`sandbox_runtime`); :func:`upstream_source` is upstream's code
extraction (rename, cut, import lines dropped). Tracebacks show the agent's own frames only.

Without a working ``bwrap`` the sandbox refuses to start (``DependencyNotInstalled``, naming
the Debian package ``bubblewrap``) unless it is built with ``unsafe=True`` (the env's
``unsafe_sandbox=True``), which runs the worker as a plain process: for trusted code only.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import weakref
from dataclasses import dataclass, field, fields
from typing import Any

from netarena_gym.capacity_planning.commands import sandbox_bwrap
from netarena_gym.capacity_planning.state import BaseGraph, Diff
from netarena_gym.errors import InvalidConfig

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "sandbox_worker.py")
WORKER_FILES = [WORKER, os.path.join(HERE, "sandbox_graph.py"),
                os.path.join(HERE, "sandbox_runtime.py")]  # all the worker runs
MAX_CODE_CHARS = 20000
NAMESPACES = ("default", "upstream")  # what agent code finds bound (see sandbox_runtime)
STARTUP_SECONDS = 60.0


#: the most each limit may be set to (an hour, a terabyte, a gigabyte of output)
LIMIT_CEILINGS = {"cpu_seconds": 3600, "wall_seconds": 3600, "memory_mb": 1 << 20,
                  "output_bytes": 1 << 30}


@dataclass(frozen=True, kw_only=True)
class Limits:
    cpu_seconds: float = 2.0
    wall_seconds: float = 5.0
    memory_mb: int = 1024
    output_bytes: int = 16 << 20

    def __post_init__(self):
        # a negative memory cap wrapped round to no cap in the worker's setrlimit
        for name in self.field_names():
            v = getattr(self, name)
            whole = name in ("memory_mb", "output_bytes")
            top = LIMIT_CEILINGS[name]
            if (isinstance(v, bool) or not isinstance(v, int if whole else (int, float))
                    or (isinstance(v, float) and not math.isfinite(v)) or not 0 < v <= top):
                raise InvalidConfig(f"limits {name} must be {'an integer' if whole else 'a number'}"
                                    f" in (0, {top}], got {v!r}")

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def from_dict(cls, d: dict) -> "Limits":
        bad = sorted(set(d) - set(cls.field_names()))
        if bad:
            raise InvalidConfig(f"unknown limits {bad}; known: {', '.join(cls.field_names())}")
        return cls(**d)

    def to_dict(self) -> dict:
        return {"cpu_seconds": self.cpu_seconds, "wall_seconds": self.wall_seconds,
                "memory_mb": self.memory_mb, "output_bytes": self.output_bytes}


@dataclass
class SandboxResult:
    status: str  # ok | error | refused | timeout | memory | crash
    message: str = ""
    declared_type: str | None = None
    data: Any = None
    diff: Diff | None = None        # None: no updated graph was returned
    duplicates: list = field(default_factory=list)
    #: compat: a ``graph`` answer whose ``data`` is another graph than ``updated_graph``;
    #: upstream grades correctness on it (``(diff, duplicates)``; None: grade ``diff``)
    graded: tuple[Diff, list] | None = None
    stdout: str = ""
    seconds: float = 0.0       # wall-clock, as the env saw it
    cpu_seconds: float = 0.0   # CPU time of the sandboxed process

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class Opaque:
    """An agent value that has no JSON form (kept as its repr; equal to nothing else)."""
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


GRAPH = Opaque("<graph>")


class MalformedResult(ValueError):
    pass


def decode(v, depth: int = 0):
    """Inverse of the worker's tagged encoding."""
    if depth > 60:
        raise MalformedResult("value nested too deeply")
    if isinstance(v, list):
        return [decode(x, depth + 1) for x in v]
    if isinstance(v, dict):
        if len(v) == 1:
            (tag, x), = v.items()
            if tag == "$tuple" and isinstance(x, list):
                return tuple(decode(y, depth + 1) for y in x)
            if tag == "$set" and isinstance(x, list):
                items = [decode(y, depth + 1) for y in x]
                try:
                    return frozenset(items)
                except TypeError:
                    return Opaque(repr(items))
            if tag == "$dict" and isinstance(x, list):
                out = {}
                for pair in x:
                    if not (isinstance(pair, list) and len(pair) == 2):
                        raise MalformedResult("bad $dict entry")
                    k = decode(pair[0], depth + 1)
                    try:
                        out[k] = decode(pair[1], depth + 1)
                    except TypeError:
                        out[Opaque(repr(k))] = decode(pair[1], depth + 1)
                return out
            if tag == "$int" and isinstance(x, str):
                return int(x)
            if tag == "$float" and isinstance(x, str):
                return float(x)
            if tag == "$graph":
                return GRAPH
        if "$repr" in v:
            return Opaque(str(v.get("$repr"))[:200])
        return {k: decode(x, depth + 1) for k, x in v.items()}
    return v


def _key(k, scheme: str):
    if scheme == "kind_name":
        if isinstance(k, list) and len(k) == 2 and all(isinstance(x, str) for x in k):
            return tuple(k)
        raise MalformedResult(f"bad node identity {k!r}")
    if isinstance(k, str):
        return k
    raise MalformedResult(f"bad node identity {k!r}")


def decode_diff(d, scheme: str) -> tuple[Diff, list]:
    if not isinstance(d, dict) or not isinstance(d.get("nodes"), list) \
            or not isinstance(d.get("edges"), list):
        raise MalformedResult("diff must hold node and edge lists")
    nodes = {}
    for item in d["nodes"]:
        if not (isinstance(item, list) and len(item) == 2):
            raise MalformedResult("bad node entry")
        attrs = None if item[1] is None else decode(item[1])
        if attrs is not None and not isinstance(attrs, dict):
            raise MalformedResult("node attributes must be a dict")
        nodes[_key(item[0], scheme)] = attrs
    edges = {}
    for item in d["edges"]:
        if not (isinstance(item, list) and len(item) == 3) or not (
                item[2] is None or isinstance(item[2], str)):
            raise MalformedResult("bad edge entry")
        edges[(_key(item[0], scheme), _key(item[1], scheme))] = item[2]
    dups = [_key(k, scheme) for k in d.get("duplicates", [])]
    return Diff(nodes, edges), dups


_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)(?:```|$)", re.S)
# a line's own blanks only: ``\s*`` at every line start ran on over the newlines that
# follow (a reply of 20,000 newlines took 2-4 s)
_DEF = re.compile(r"^[ \t]*def[ \t]+process_graph[ \t]*\(", re.M)


def extract_code(text: str) -> str | None:
    """The Python source holding ``def process_graph`` in an agent's reply (a bare
    function, or a fenced code block among prose); None if there is none."""
    if not isinstance(text, str) or "process_graph" not in text:
        return None
    for block in _FENCE.findall(text):
        if _DEF.search(block):
            return block
    if _DEF.search(text):
        return text
    return None


_UPSTREAM_DEF = re.compile(r"def\s+\w*process_graph\w*\s*\(")


def upstream_source(text: str) -> str | None:
    """Upstream NetArena's extraction of agent code (behavioural spec, section 3.2): a
    ``def`` whose name contains ``process_graph`` is renamed ``process_graph``, the code runs
    from there to the next triple backtick (or the end), and lines starting with ``import``
    are dropped (``from ... import`` lines stay). Dropped lines are left empty, so line
    numbers in tracebacks still match the submission. None when there is no such ``def``
    (upstream then runs "", a NameError)."""
    if not isinstance(text, str):
        return None
    m = _UPSTREAM_DEF.search(text)
    if m is None:
        return None
    body = "def process_graph(" + text[m.end():]
    body = body.split("```", 1)[0]
    return "\n".join("" if line.startswith("import") else line for line in body.split("\n"))


# the worker's interpreter flags: ``-I`` but for ``-E``, so that the one PYTHON* variable of
# the (wholly constructed) environment counts: a fixed hash seed, so ``hash(str)`` and the
# order of sets of strings are the same in every run (each worker drew its own before)
PYTHON_FLAGS = ("-s", "-P")


def _minimal_env() -> dict:
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    if "NETARENA_SANDBOX_CACHE" in os.environ:
        env["NETARENA_SANDBOX_CACHE"] = os.environ["NETARENA_SANDBOX_CACHE"]
    return env


class Sandbox:
    """A handle on one worker process (started on first use)."""

    def __init__(self, limits: Limits | None = None, python_guard: bool = True,
                 unsafe: bool = False, namespace: str = "default"):
        if namespace not in NAMESPACES:
            raise ValueError(f"namespace must be one of {NAMESPACES}, got {namespace!r}")
        self.limits = limits or Limits()
        self.python_guard = python_guard
        self.namespace = namespace
        self.unsafe = bool(unsafe)
        if not self.unsafe:
            sandbox_bwrap.require()
        self._proc: subprocess.Popen | None = None
        self._loaded: set[str] = set()
        self.restarts = 0
        self.seccomp: bool | None = None  # whether the worker has a seccomp filter (once started)
        self._finalizer = weakref.finalize(self, _stop, [None])

    # ------------------------------------------------------------ lifecycle
    def __getstate__(self) -> dict:
        """A copy (pickle, deepcopy, a vector env's worker) holds the settings, not the
        worker process: it starts its own on first use, and the original keeps its own."""
        return {k: v for k, v in self.__dict__.items()
                if k not in ("_proc", "_finalizer", "_loaded")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._proc = None
        self._loaded = set()
        self._finalizer = weakref.finalize(self, _stop, [None])

    def _start(self) -> None:
        self._finalizer()  # clean up a previous worker and its scratch directory
        if self.unsafe:
            scratch = tempfile.mkdtemp(prefix="netarena-sandbox-")
            os.chmod(scratch, 0o755)  # the code's working directory: empty, and not writable
            argv = [sys.executable, *PYTHON_FLAGS, WORKER, scratch]
        else:
            scratch = None  # a directory of the sandbox's own tmpfs root
            argv = sandbox_bwrap.command(WORKER_FILES) + [
                os.path.realpath(sys.executable), *PYTHON_FLAGS,
                sandbox_bwrap.SANDBOX_DIR + "/" + os.path.basename(WORKER),
                sandbox_bwrap.SCRATCH_IN_SANDBOX]
        self._proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_minimal_env(), cwd="/",
            close_fds=True, start_new_session=True)
        self._finalizer = weakref.finalize(self, _stop, [self._proc, scratch])
        self._loaded = set()
        reply = self._read(time.monotonic() + STARTUP_SECONDS)
        if reply is None or reply.get("status") != "ready":
            self.close()
            raise RuntimeError("the sandbox worker did not start")
        self.seccomp = bool(reply.get("seccomp"))

    def close(self) -> None:
        self._finalizer()
        self._proc = None
        self._loaded = set()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    # ------------------------------------------------------------- framing
    def _send(self, obj) -> None:
        body = json.dumps(obj).encode("utf-8")
        self._proc.stdin.write(struct.pack(">I", len(body)) + body)
        self._proc.stdin.flush()

    def _read_exact(self, n: int, deadline: float) -> bytes | None:
        fd = self._proc.stdout.fileno()
        buf = bytearray()
        while len(buf) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            block = os.read(fd, n - len(buf))
            if not block:
                return None
            buf += block
        return bytes(buf)

    def _read(self, deadline: float) -> dict | None:
        head = self._read_exact(4, deadline)
        if head is None:
            return None
        (n,) = struct.unpack(">I", head)
        body = self._read_exact(n, deadline)
        if body is None:
            return None
        try:
            return json.loads(body.decode("utf-8"))
        except (ValueError, RecursionError):
            return {"status": "error", "error": "the sandbox worker sent a malformed reply"}

    def _request(self, obj, seconds: float) -> dict | None:
        if self._proc is None or self._proc.poll() is not None:
            if self._proc is not None:
                self.restarts += 1
            self._start()
        try:
            self._send(obj)
        except (BrokenPipeError, OSError):
            self.close()
            return None
        reply = self._read(time.monotonic() + seconds)
        if reply is None:  # the worker hung or died: never let it block the env
            self.close()
        return reply

    # ----------------------------------------------------------------- API
    def prepare(self, base: BaseGraph) -> None:
        """Send ``base`` to the worker (done by :meth:`run` when needed)."""
        key, nodes, edges = _records(base)
        if key in self._loaded and self._proc is not None and self._proc.poll() is None:
            return
        reply = self._request({"op": "load", "key": key, "scheme": base.scheme,
                               "nodes": nodes, "edges": edges}, STARTUP_SECONDS)
        if reply is None or reply.get("status") != "loaded":
            raise RuntimeError(f"the sandbox worker could not load the topology: {reply}")
        self._loaded.add(key)

    def run(self, base: BaseGraph, code: str, namespace: str | None = None,
            seed: int = 0) -> SandboxResult:
        """Run ``code`` on ``base`` in ``namespace`` (default: the sandbox's own); the
        code's ``random`` starts from ``seed``."""
        namespace = self.namespace if namespace is None else namespace
        if namespace not in NAMESPACES:
            raise ValueError(f"namespace must be one of {NAMESPACES}, got {namespace!r}")
        if not isinstance(code, str) or len(code) > MAX_CODE_CHARS:
            return SandboxResult("error", f"code must be a string of at most {MAX_CODE_CHARS} characters")
        t0 = time.perf_counter()
        req = {"op": "run", "key": _records(base)[0], "code": code,
               "limits": self.limits.to_dict(), "guard": self.python_guard,
               "namespace": namespace, "seed": int(seed) % (1 << 63)}
        for _ in range(2):
            self.prepare(base)
            reply = self._request(req, self.limits.wall_seconds + 10.0)
            if reply is None:
                return SandboxResult("crash", "the sandbox worker stopped responding and was "
                                     "restarted", seconds=time.perf_counter() - t0)
            if reply.get("status") != "unknown_topology":
                break
            self._loaded.discard(req["key"])
        res = _result(reply, base.scheme)
        res.seconds = time.perf_counter() - t0
        return res


def _result(reply: dict, scheme: str) -> SandboxResult:
    status = reply.get("status")
    if status == "timeout":
        return SandboxResult("timeout", f"time limit exceeded ({reply.get('error', '')})")
    if status == "crash":
        return SandboxResult("crash", f"the code crashed the sandbox process: {reply.get('error')}")
    if status != "ok":
        return SandboxResult("error", str(reply.get("error", "sandbox error")))
    r = reply.get("result")
    if not isinstance(r, dict):
        return SandboxResult("error", "sandbox returned a malformed result")
    stdout = r.get("stdout") if isinstance(r.get("stdout"), str) else ""
    if not r.get("ok"):
        kind = "refused" if r.get("refused") else "memory" if r.get("memory") else "error"
        return SandboxResult(kind, str(r.get("error", "error"))[:4000], stdout=stdout)
    try:
        data = decode(r.get("data"))
        diff, dups = (None, []) if r.get("diff") is None else decode_diff(r["diff"], scheme)
        graded = None if r.get("graded") is None else decode_diff(r["graded"], scheme)
    except (MalformedResult, TypeError, ValueError) as e:
        return SandboxResult("error", f"sandbox returned a malformed result: {e}")
    dtype = r.get("type") if isinstance(r.get("type"), str) else None
    t = r.get("timings") if isinstance(r.get("timings"), dict) else {}
    cpu = t.get("cpu") if isinstance(t.get("cpu"), (int, float)) else 0.0
    return SandboxResult("ok", declared_type=dtype, data=data, diff=diff, duplicates=dups,
                         graded=graded, stdout=stdout, cpu_seconds=float(cpu))


def _records(base: BaseGraph) -> tuple[str, list, list]:
    rec = base.facts.get("sandbox_records")
    if rec is None:
        ident = repr(base.spec.key()) if base.spec is not None else f"id{id(base)}"
        key = hashlib.sha1(f"{base.scheme}|{ident}".encode()).hexdigest()[:16]
        nodes = [[list(k) if isinstance(k, tuple) else k, a] for k, a in base.nodes.items()]
        edges = [[list(a) if isinstance(a, tuple) else a, list(z) if isinstance(z, tuple) else z, t]
                 for a, kids in base.out.items() for z, t in kids.items()]
        rec = base.facts["sandbox_records"] = (key, nodes, edges)
    return rec


def _stop(box: list) -> None:
    proc = box[0]
    if len(box) > 1 and box[1] is not None:
        shutil.rmtree(box[1], ignore_errors=True)
    if proc is None:
        return
    try:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
        proc.wait(timeout=5)
    except Exception:  # noqa: BLE001 - best effort at shutdown
        pass
    for f in (proc.stdin, proc.stdout):
        try:
            f.close()
        except Exception:  # noqa: BLE001
            pass


