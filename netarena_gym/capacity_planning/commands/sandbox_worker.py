"""The sandbox worker: runs agents' ``process_graph(graph)`` code in isolated processes.

This file is executed by path (``python -I sandbox_worker.py``) as a long-lived "zygote"
process, and imports nothing from netarena_gym: only the standard library and networkx.
The env talks to it over its stdin/stdout with length-prefixed JSON frames:

* ``{"op": "load", "key": K, "scheme": S, "nodes": [[key, attrs]...], "edges": [[a, z, t]...]}``
  builds and caches a base graph (the env sends each topology once);
* ``{"op": "run", "key": K, "code": C, "limits": {...}, "guard": true, "namespace": N}`` runs
  one submission (``N`` is ``"default"`` or ``"upstream"``).

Each submission runs in a child forked from the zygote, so it gets its own copy-on-write
copy of the cached graph and can mutate it freely. Before the agent's code runs, the child:

1. points fds 0-2 at /dev/null, keeps only its result pipe (fd 3), closes everything else;
2. moves to an empty scratch directory;
3. sets resource limits: CPU seconds, address space, no file writes (RLIMIT_FSIZE 0), no
   core dumps, no new processes (RLIMIT_NPROC 0), and RLIMIT_NOFILE 4, so no file, socket or
   pipe can ever be opened (the kernel enforces this, whatever the Python code does);
4. drops to uid/gid ``nobody`` when running as root (so it cannot raise its limits back or
   signal the env);
5. runs the code in the restricted runtime of :mod:`sandbox_runtime` (restricted builtins,
   an import allow-list, an AST check), in the namespace the request names: ``"default"``
   binds nothing, ``"upstream"`` (compat) binds upstream's ``nx``, ``json``, ``copy`` and
   ``G`` (see :mod:`sandbox_runtime`), with ``random`` seeded from the request's
   ``seed`` (the env derives it from the episode seed and the submission's number; the
   worker runs with a fixed hash seed, so string hashes and set orders repeat too).

6. installs a seccomp filter (libseccomp's Python bindings, Debian ``python3-seccomp``, when
   present) that fails with EPERM: sockets, exec, fork/clone, ptrace, mount, namespaces,
   links, device nodes, bpf, keyrings, perf and module loading.

Under bubblewrap (the normal case, see ``sandbox_bwrap``) all of this runs in namespaces
with no network but ``lo``, a read-only minimal file tree and its own PIDs; the guards of
step 5 are a second line only. Tracebacks show the agent's own frames only (``<agent>``)
and never a host, worker or project path (:func:`sandbox_runtime.agent_traceback`).

The zygote kills the child at the wall-clock limit. The child never sees the query's answer
or the grader: they exist only in the env process. It returns the result's type and data
(tagged JSON, so tuples and floats survive) and the updated graph as a net diff against the
base, with node identity taken from the ``type``/``name`` attributes; a diff of more items
than the base holds (:func:`max_changes`) is refused, since the env grades it on no clock.
In upstream's namespace a ``graph`` answer's ``data`` is never taken for a missing
``updated_graph``, and a ``data`` that is another graph comes back too (``graded``),
as upstream grades it.
"""
from __future__ import annotations

import ast
import gc
import io
import json
import math
import os
import random
import resource
import select
import signal
import struct
import sys
import tempfile
import time

try:
    from .sandbox_graph import Base, diff_against, encode
    from .sandbox_runtime import (ALLOWED_MODULES, SandboxViolation, agent_traceback,
                                  check_source, restricted_globals, upstream_namespace)
except ImportError:  # run by path (the normal case): its modules lie next to this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from sandbox_graph import Base, diff_against, encode
    from sandbox_runtime import (ALLOWED_MODULES, SandboxViolation, agent_traceback,
                                 check_source, restricted_globals, upstream_namespace)
    del sys.path[0]

SECCOMP_PATH = "/usr/lib/python3/dist-packages"  # Debian's python3-seccomp
DENIED_SYSCALLS = (
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto",
    "sendmsg", "sendmmsg", "execve", "execveat", "fork", "vfork", "clone", "clone3",
    "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root",
    "chroot", "unshare", "setns", "mknod", "mknodat", "symlink", "symlinkat", "link",
    "linkat", "bpf", "keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd",
    "io_uring_setup", "init_module", "finit_module", "delete_module", "kexec_load",
    "personality", "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
    "setgroups", "open_by_handle_at", "name_to_handle_at", "fanotify_init", "inotify_init",
    "inotify_init1", "memfd_create", "acct", "swapon", "swapoff", "reboot", "syslog")
_seccomp = None
MAX_FRAME = 64 << 20
# ------------------------------------------------------------------ framing
def read_frame(f) -> dict | None:
    head = f.read(4)
    if len(head) < 4:
        return None
    (n,) = struct.unpack(">I", head)
    if n > MAX_FRAME:
        raise ValueError("frame too large")
    body = f.read(n)
    return json.loads(body.decode("utf-8"))


def write_frame(f, obj) -> None:
    body = json.dumps(obj).encode("utf-8")
    f.write(struct.pack(">I", len(body)) + body)
    f.flush()


# ------------------------------------------------------------------- child
def install_seccomp() -> None:
    """Fail the syscalls in DENIED_SYSCALLS with EPERM from now on (no-op without libseccomp)."""
    if _seccomp is None:
        return
    f = _seccomp.SyscallFilter(defaction=_seccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            f.add_rule(_seccomp.ERRNO(1), name)
        except (RuntimeError, ValueError, OSError):
            pass  # not a syscall on this architecture
    f.load()


def cpu_limit(limits: dict) -> int:
    """The CPU-time limit in whole seconds, as RLIMIT_CPU takes it: the configured
    ``cpu_seconds`` rounded up, at least 1 (what the timeout message quotes)."""
    return max(1, math.ceil(float(limits.get("cpu_seconds", 2.0))))


def _vm_bytes() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def child_main(base: Base, req: dict, wfd: int, scratch: str) -> None:
    """Runs in the forked child; never returns."""
    code = 1
    try:
        limits = req.get("limits", {})
        w2 = os.dup(wfd)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.dup2(w2, 3)
        os.closerange(4, 1 << 16)
        os.chdir(scratch)
        mem = int(limits.get("memory_mb", 1024)) << 20
        cap = (_vm_bytes() or 1 << 30) + mem  # without /proc, assume a 1 GiB baseline
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        cpu = cpu_limit(limits)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
        resource.setrlimit(resource.RLIMIT_NOFILE, (4, 4))
        install_seccomp()
        sys.setrecursionlimit(3000)
        gc.disable()  # a short-lived process: no collector passes over the shared graph
        result = _run_agent(base, req)
        code = 0
    except BaseException as e:  # noqa: BLE001 - report anything, never raise in a child
        result = {"ok": False, "error": f"sandbox setup failed: {type(e).__name__}: {e}"}
    try:
        data = json.dumps(result).encode("utf-8")
    except BaseException as e:  # noqa: BLE001
        data = json.dumps({"ok": False, "error": f"result not serialisable: {e}"}).encode()
    try:
        view = memoryview(data)
        while view:
            n = os.write(3, view)
            view = view[n:]
    finally:
        os._exit(code)


def _run_agent(base: Base, req: dict) -> dict:
    stdout = io.StringIO()
    guard = req.get("guard", True)
    src = req.get("code", "")
    try:
        tree = ast.parse(src, "<agent>", "exec")
        if guard:
            check_source(tree)
        # the env's seed for this submission: ``random`` gives the same draws every time
        # (forked from the zygote, every child would share one state seeded from urandom)
        random.seed(req.get("seed", 0))
        g = restricted_globals(stdout) if guard else {"__name__": "__agent__"}
        if req.get("namespace") == "upstream":
            g.update(upstream_namespace(base.master, guard))
        exec(compile(tree, "<agent>", "exec"), g)
        fn = g.get("process_graph")
        if not callable(fn):
            return {"ok": False, "error": "the code defines no function process_graph(graph)",
                    "stdout": stdout.getvalue()[-2000:]}
        t0 = time.perf_counter()
        res = fn(base.graph)
        t1 = time.perf_counter()
        out = _package(base, res, stdout, upstream=req.get("namespace") == "upstream")
        ru = resource.getrusage(resource.RUSAGE_SELF)
        out["timings"] = {"agent": t1 - t0, "package": time.perf_counter() - t1,
                          "cpu": ru.ru_utime + ru.ru_stime}
        return out
    except SandboxViolation as e:
        return {"ok": False, "error": f"refused: {e}", "refused": True}
    except MemoryError:
        return {"ok": False, "error": "MemoryError: the memory limit was exceeded",
                "memory": True, "stdout": stdout.getvalue()[-2000:]}
    except RecursionError:
        return {"ok": False, "error": "RecursionError: maximum recursion depth exceeded",
                "stdout": stdout.getvalue()[-2000:]}
    except BaseException as e:  # noqa: BLE001 - the agent's exception, reported as text
        tb = agent_traceback(e, src)
        return {"ok": False, "error": tb[-4000:], "stdout": stdout.getvalue()[-2000:]}


def _package(base: Base, res, stdout, upstream: bool = False) -> dict:
    """The result for the env. ``upstream`` (compat) reads it as upstream's evaluator does:
    safety is judged on ``updated_graph`` alone (missing: no graph, a safety Fail), and a
    ``graph`` answer is graded on ``data`` when that is a graph itself (``graded``, the
    diff of ``data`` when it is another graph than ``updated_graph``)."""
    if isinstance(res, str):
        try:
            res = json.loads(res)
        except ValueError:
            return {"ok": False, "error": "process_graph returned a string that is not JSON"}
    if not isinstance(res, dict) or "type" not in res or "data" not in res:
        return {"ok": False, "error": "process_graph must return a dict with 'type', 'data' "
                                      "and 'updated_graph'"}
    rtype = res.get("type")
    data = res.get("data")
    updated = res.get("updated_graph")
    is_graph = hasattr(data, "nodes") and hasattr(data, "edges") and not isinstance(data, dict)
    if updated is None and rtype == "graph" and data is not None and not upstream:
        updated = data
    out = {"ok": True, "type": rtype if isinstance(rtype, str) else repr(rtype)[:40],
           "stdout": stdout.getvalue()[-2000:]}
    out["data"] = {"$graph": True} if is_graph or (rtype == "graph" and data is updated) else encode(data)
    if updated is None:
        out["diff"] = None
    else:
        try:
            diff = diff_against(base, updated)
        except (ValueError, TypeError, AttributeError) as e:
            return {"ok": False, "error": f"updated_graph could not be read: {e}"}
        # grading runs in the env, on no clock of the sandbox's: its cost follows the diff
        changed, most = len(diff["nodes"]) + len(diff["edges"]), max_changes(base)
        if changed > most:
            return {"ok": False, "error": f"updated_graph changes {changed} nodes and edges; "
                    f"a submission may change at most {most} (as many as the topology "
                    "holds)"}
        out["diff"] = diff
    if upstream and rtype == "graph" and is_graph and data is not updated:
        try:
            graded = diff_against(base, data)
        except (ValueError, TypeError, AttributeError) as e:
            return {"ok": False, "error": f"data could not be read as a graph: {e}"}
        changed = len(graded["nodes"]) + len(graded["edges"])
        if changed > max_changes(base):
            return {"ok": False, "error": f"data changes {changed} nodes and edges; a "
                    f"submission may change at most {max_changes(base)}"}
        out["graded"] = graded
    return out


def max_changes(base: Base) -> int:
    """The most nodes and edges a submission's updated graph may add, remove or change:
    as many as the base holds (removing everything is one such change per item)."""
    return max(1000, len(base.snap_nodes) + len(base.snap_edges))


# ------------------------------------------------------------------ zygote
def run_request(bases: dict, req: dict, scratch: str) -> dict:
    base = bases.get(req.get("key"))
    if base is None:
        return {"status": "unknown_topology"}
    limits = req.get("limits", {})
    wall = float(limits.get("wall_seconds", 5.0))
    max_out = int(limits.get("output_bytes", 16 << 20))
    r, w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        child_main(base, req, w, scratch)
    os.close(w)
    chunks, size, status = [], 0, None
    deadline = t0 + wall
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                status = "timeout"
                break
            ready, _, _ = select.select([r], [], [], left)
            if not ready:
                continue
            block = os.read(r, 1 << 16)
            if not block:
                break
            size += len(block)
            if size > max_out:
                status = "too_large"
                break
            chunks.append(block)
    finally:
        os.close(r)
    if status is not None:
        _kill(pid)
    else:
        status = _reap(pid, deadline)
    wall_used = time.monotonic() - t0
    if status in ("timeout", "cpu"):
        what = (f"CPU-time limit of {cpu_limit(limits)} s" if status == "cpu"
                else f"wall-clock limit of {wall:g} s")
        return {"status": "timeout", "error": f"{what} exceeded", "seconds": wall_used}
    if status == "too_large":
        return {"status": "error", "error": f"result larger than {max_out} bytes", "seconds": wall_used}
    raw = b"".join(chunks)
    try:
        result = json.loads(raw.decode("utf-8")) if raw else None
    except ValueError:
        result = None
    if result is None:
        return {"status": "crash", "error": status or "the child produced no result",
                "seconds": wall_used}
    return {"status": "ok", "result": result, "seconds": wall_used}


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _reap(pid: int, deadline: float) -> str | None:
    while True:
        try:
            done, st = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return None
        if done:
            if os.WIFSIGNALED(st):
                sig = os.WTERMSIG(st)
                if sig == signal.SIGXCPU:
                    return "cpu"
                return f"killed by signal {signal.Signals(sig).name}"
            return None
        if time.monotonic() > deadline:
            _kill(pid)
            return "timeout"
        time.sleep(0.0005)


def main() -> None:
    global _seccomp
    # networkx is bound alone into site/ beside this file (sandbox_bwrap.command)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site"))
    import networkx  # noqa: F401 - preloaded for every child
    sys.path.append(SECCOMP_PATH)
    try:
        import seccomp as _seccomp  # noqa: F811
    except ImportError:
        _seccomp = None
    finally:
        sys.path.remove(SECCOMP_PATH)
    for m in ALLOWED_MODULES:
        __import__(m)
    import networkx.readwrite.json_graph  # noqa: F401
    import collections.abc  # noqa: F401
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints must not corrupt the frame stream
    if len(sys.argv) > 1 and os.path.isdir(sys.argv[1]):
        scratch = sys.argv[1]  # made (and removed) by the env
    else:
        scratch = tempfile.mkdtemp(prefix="netarena-sandbox-")
        os.chmod(scratch, 0o755)
    bases: dict = {}
    order: list = []
    cache = int(os.environ.get("NETARENA_SANDBOX_CACHE", "8"))
    write_frame(stdout, {"status": "ready", "pid": os.getpid(), "seccomp": _seccomp is not None})
    while True:
        try:
            req = read_frame(stdin)
        except (ValueError, OSError):
            break
        if req is None:
            break
        try:
            if req.get("op") == "load":
                key = req["key"]
                if key not in bases:
                    bases[key] = Base(req["scheme"], req["nodes"], req["edges"])
                    order.append(key)
                    while len(order) > cache:
                        bases.pop(order.pop(0), None)
                    gc.collect()
                    gc.freeze()  # children neither scan nor copy the cached graphs
                reply = {"status": "loaded"}
            elif req.get("op") == "run":
                reply = run_request(bases, req, scratch)
            elif req.get("op") == "ping":
                reply = {"status": "pong"}
            else:
                reply = {"status": "error", "error": f"unknown op {req.get('op')!r}"}
        except Exception as e:  # noqa: BLE001 - the zygote must survive anything
            reply = {"status": "error", "error": f"sandbox worker: {type(e).__name__}: {e}"}
        write_frame(stdout, reply)
    try:
        os.rmdir(scratch)
    except OSError:
        pass


if __name__ == "__main__":
    main()
