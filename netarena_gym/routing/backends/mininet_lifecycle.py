"""Write-ahead run records of the Mininet backend, and the clean-up that reads them.

What a run creates on the host is recorded in ``<state dir>/<run>.json`` BEFORE it is
created, and removed afterwards by recorded name, only while it is still provably the run's:

* a **bridge** (one per subnet, in the root network namespace) is recorded with its name and
  a MAC address drawn for the run and given at creation (``ip link add name NAME address
  MAC type bridge``; a bridge keeps an address set this way whatever ports join it). It is
  deleted only while a link of that name has that address: a bridge someone else made with
  a similar, or even the same, name is never touched;
* a **bridge port** (the root-namespace end ``<bridge>-ethN`` of a node's veth pair) is
  recorded by name and deleted only while its master is one of the run's bridges; its peer
  lives in the node's namespace, so it also goes when that node's process goes;
* a **process** (each node's shell: routers and hosts, each in its own anonymous network
  namespace, which goes with it, and the bridges' shells) is recorded with its PID, start
  time (``/proc/PID/stat`` field 22) and uid right after the fork, before anything else
  runs, and signalled only while those still match (through a pidfd). A shell forked but
  not yet recorded reads end of file on its pseudo-terminal and exits when its owner dies.

The record is replaced atomically (temporary file and ``rename``) at every step, so a
reader never sees half of it. A record is removed only once nothing it lists is left;
otherwise it stays for the next run's reaper. Mirrors nothing of Mininet's own global
clean-up (``mininet.clean``, which removes every bridge, veth and process that looks like
Mininet's, whoever made it): that is never called (the network is made with
``cleanup=False``), and nothing is killed by name.
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import threading
import time
import weakref
from pathlib import Path

STATE_DIR = Path(os.environ.get("NETARENA_STATE_DIR", "/run/netarena-gym"))
IP_TIMEOUT = 60.0  # an `ip -batch` under a busy RTNL lock may take seconds


# ------------------------------------------------------------------------ processes
def process_identity(pid: int) -> list[int] | None:
    """[start time in clock ticks since boot, owner uid] of a live process, or None. The
    start time is field 22 of ``/proc/PID/stat``, counted after the parenthesised command
    name (which may itself hold spaces and parentheses)."""
    stat = _stat(pid)
    if stat is None:
        return None
    return [int(stat[0][19]), stat[1]]  # fields[0] is field 3 (state)


def _stat(pid: int) -> tuple[list[bytes], int] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
    return raw[raw.rindex(b")") + 2:].split(), uid


def still_running(pid: int, ident) -> bool:
    """Whether ``pid`` is still the process recorded as ``ident`` and not a zombie."""
    stat = _stat(pid)
    return (stat is not None and ident is not None and stat[0][0] != b"Z"
            and [int(stat[0][19]), stat[1]] == list(ident))


def kill_if_same(pid: int, ident) -> bool:
    """SIGKILL ``pid`` only while it is still the process recorded as ``ident`` (start
    time, uid), through a pidfd so that the check and the kill address one process."""
    if not ident:
        return False
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return False
    try:
        if process_identity(pid) != list(ident):
            return False
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def owner_alive(rec: dict) -> bool:
    """Whether the process that wrote ``rec`` still runs (same PID and start time)."""
    owner, ident = int(rec.get("owner", 0)), rec.get("owner_ident")
    if owner <= 0 or process_identity(owner) is None:
        return False
    return ident is None or process_identity(owner) == list(ident)


_held = 0  # nesting depth of signals_held() in the main thread
_pending: list = []  # handler calls deferred until the outermost block ends


@contextlib.contextmanager
def signals_held():
    """Defer the teardown handlers (:func:`teardown_handler`) to the end of the block, so
    that a teardown runs before or after one creation step (which is then recorded), never
    in its middle, whichever thread the kernel delivered the signal to. Python runs signal
    handlers in the main thread only: in another thread this is a no-op."""
    global _held
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        while not _held and _pending:
            _pending.pop(0)()


def teardown_handler(close, prev):
    """A signal handler that runs ``close()`` and then what ``prev`` (the handler it
    replaces) did: a Python handler is called, the default action is taken again (the
    process ends); deferred while the main thread is in :func:`signals_held`."""
    def handler(signum, frame):
        if _held:
            _pending.append(lambda: handler(signum, frame))
            return
        close()
        if callable(prev):
            prev(signum, frame)
        elif prev == signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
    return handler


# every live backend (weakly: garbage collection still tears one down) and the one handler
# per signal that closes them all: installed once, however many backends are made (one
# handler per backend, each chained to the previous, recursed 1,500 deep on SIGTERM)
_live: "weakref.WeakSet" = weakref.WeakSet()
_handlers: dict[int, object] = {}  # signal -> the handler installed for it


def close_live() -> None:
    """Close every live backend (the signal handlers' action); the first error is raised
    once all were tried."""
    errors = []
    for backend in list(_live):
        try:
            backend.close()
        except Exception as e:  # noqa: BLE001 - the others still close
            errors.append(e)
    if errors:
        raise errors[0]


def track(backend) -> None:
    """Close ``backend`` on SIGINT and SIGTERM (between two creation steps of a build), then
    do what the signal did before. One module-level handler per signal closes every live
    backend: it is installed by the first backend made in the main thread and chains to the
    handler it replaced; a later backend installs it again only if someone else replaced it
    since. A signal that was ignored stays ignored (the network stays up: the program goes
    on); off the main thread nothing is installed (atexit and garbage collection remain)."""
    _live.add(backend)
    for sig in (signal.SIGINT, signal.SIGTERM):
        prev = signal.getsignal(sig)
        if prev is _handlers.get(sig) or prev == signal.SIG_IGN:
            continue
        handler = teardown_handler(close_live, prev)
        try:
            signal.signal(sig, handler)
        except ValueError:  # not the main thread
            continue
        _handlers[sig] = handler


def netns() -> str:
    """This thread's network namespace (``net:[inode]``)."""
    return os.readlink("/proc/thread-self/ns/net")


# ---------------------------------------------------------------------------- links
def links() -> dict[str, dict] | None:
    """Every link of this network namespace: ``{name: {"address": MAC, "master": bridge
    or None}}``; None when ``ip`` failed (nothing may then be judged gone)."""
    try:
        r = subprocess.run(["ip", "-j", "link", "show"], capture_output=True, text=True,
                           timeout=IP_TIMEOUT)
        rows = json.loads(r.stdout) if r.returncode == 0 else None
    except (subprocess.TimeoutExpired, json.JSONDecodeError):
        rows = None
    if rows is None:
        return None
    return {row["ifname"]: {"address": row.get("address"), "master": row.get("master")}
            for row in rows}


def bridge_mac(token: str, index: int) -> str:
    """The address of the run's ``index``-th bridge: locally administered unicast (``0a``),
    the run's 3 random bytes, the index in 2 bytes."""
    t = bytes.fromhex(token)
    return "0a:" + ":".join(f"{b:02x}" for b in (*t, index >> 8 & 0xFF, index & 0xFF))


def new_run_id(state_dir: Path) -> str:
    """A run prefix ``nxXXXX`` that no record in ``state_dir`` and no link here uses."""
    existing = links() or {}
    while True:
        run = f"nx{secrets.token_hex(2)}"
        if not (state_dir / f"{run}.json").exists() and not any(
                name.startswith(run) for name in existing):
            return run


# ---------------------------------------------------------------------------- nodes
def node_classes() -> tuple[type, type]:
    """Mininet's ``Node`` and ``LinuxBridge`` with the run's hooks: a node's shell is
    handed to ``params["started"](node, popen)`` the moment it is forked (to be recorded);
    a bridge is created with its recorded address (``params["bridge_mac"]``), never after
    deleting a namesake, and never deleted by name by Mininet (the run's teardown removes
    it after checking that address). Imported late: Mininet is an optional dependency."""
    from mininet.node import Node
    from mininet.nodelib import LinuxBridge

    class Recorded:
        def _popen(self, cmd, **params):
            popen = Node._popen(self, cmd, **params)
            self.params["started"](self, popen)
            return popen

    class RecordedNode(Recorded, Node):
        pass

    class OwnedBridge(Recorded, LinuxBridge):
        def start(self, _controllers):
            ports = [i.name for i in self.intfList() if i.name.startswith(f"{self.name}-")]
            out = self.cmd(" && ".join(
                [f"ip link add name {self.name} address {self.params['bridge_mac']} "
                 "type bridge"]
                + [f"ip link set dev {p} master {self.name}" for p in ports]
                + [f"ip link set dev {self.name} up"]))
            if out.strip():
                from netarena_gym.errors import BackendUnavailable
                raise BackendUnavailable(f"bridge {self.name}: {out.strip()}")

        def stop(self, deleteIntfs=True):
            """Nothing: :func:`remove_run` removes the bridge once its address is checked."""

    return RecordedNode, OwnedBridge


@contextlib.contextmanager
def ended_on_exit():
    """A list to put helper processes in (each started with ``start_new_session``, e.g.
    ``mnexec -a PID ...`` joining a node's namespace): whichever is still running when the
    block ends, by an exception or a signal too, is killed with its process group, which is
    still ours (an unreaped child's PID cannot be reused). A process left in a node's
    namespace would keep it, and its veth pair, after the node is gone."""
    procs: list[subprocess.Popen] = []
    try:
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                with contextlib.suppress(OSError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def release_node(node, popen) -> None:
    """Reap a node's shell (our own child, so ``kill`` cannot reach a reused PID) and close
    its pseudo-terminal."""
    with contextlib.suppress(OSError):
        popen.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        popen.wait(timeout=5)
    stdin = getattr(node, "stdin", None)
    master, slave = getattr(node, "master", None), getattr(node, "slave", None)
    with contextlib.suppress(OSError, ValueError):
        if stdin is not None:
            type(node).outToNode.pop(stdin.fileno(), None)
            type(node).inToNode.pop(stdin.fileno(), None)
            stdin.close()
        elif master is not None:
            os.close(master)
    with contextlib.suppress(OSError, TypeError):
        if slave is not None:
            os.close(slave)
    node.shell = None


# --------------------------------------------------------------------------- record
class RunRecord:
    """The write-ahead record of one build: written before each creation step."""

    def __init__(self, state_dir: Path, run: str):
        self.path = Path(state_dir) / f"{run}.json"
        self.token = secrets.token_hex(3)
        self.data = {"run": run, "owner": os.getpid(),
                     "owner_ident": process_identity(os.getpid()), "netns": netns(),
                     "bridges": {}, "ports": [], "node_idents": []}

    def plan(self, bridges: list[str], ports: list[str]) -> dict[str, str]:
        """Record the bridges (each with its address) and ports about to be created;
        returns ``{bridge: MAC}``."""
        macs = {b: bridge_mac(self.token, i) for i, b in enumerate(bridges, start=1)}
        self.data["bridges"] = macs
        self.data["ports"] = list(ports)
        self.write()
        return macs

    def add_process(self, pid: int) -> None:
        self.data["node_idents"].append([pid, process_identity(pid)])
        self.write()

    def write(self) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.data))
        os.replace(tmp, self.path)

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)


def remove_run(rec: dict, settle: float = 5.0) -> list[str]:
    """Remove what ``rec`` lists and is still the run's: processes (start time and uid
    checked), ports (while their master is the run's bridge), bridges (while they have the
    recorded address). Returns what of the run's is still there after up to ``settle``
    seconds (empty: all gone)."""
    procs = [(int(pid), ident) for pid, ident in rec.get("node_idents", [])]
    for pid, ident in procs:
        kill_if_same(pid, ident)
    bridges = rec.get("bridges", {})
    legacy = [] if isinstance(bridges, dict) else list(bridges)
    if not isinstance(bridges, dict):  # an older version's record: names without addresses
        bridges = {}  # (no proof of ownership: such bridges are left, and so is the record)
    # links are judged only from the namespace they were made in (a thread may be in a
    # node's namespace for a moment, nsprobe): elsewhere they are left, and so is the record
    home = rec.get("netns") in (None, netns())
    snap = links() if home else None
    if snap is not None:
        ours = {b for b, mac in bridges.items() if snap.get(b, {}).get("address") == mac}
        ports = [p for p in rec.get("ports", []) if snap.get(p, {}).get("master") in ours]
        lines = [f"link del dev {n}" for n in [*ports, *sorted(ours)]]
        if lines:
            try:
                subprocess.run(["ip", "-force", "-batch", "-"], input="\n".join(lines) + "\n",
                               capture_output=True, text=True, timeout=IP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
    deadline = time.monotonic() + settle
    while True:
        left = [f"process {pid}" for pid, ident in procs if still_running(pid, ident)]
        snap = links() if home else None
        if snap is None:
            left.append("links unknown (ip failed)")
        else:
            left += [f"bridge {b}" for b, mac in bridges.items()
                     if snap.get(b, {}).get("address") == mac]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    # names recorded without addresses are not waited for: nothing here removes them
    return left + [f"bridge {b} (recorded without its address: left alone)"
                   for b in legacy if b in (snap or {})]


def teardown(state: dict) -> None:
    """Remove a backend's network (``state``: its ``__dict__``) by its record (idempotent):
    the recorded processes (which takes their namespaces and veth pairs with them), ports
    and bridges, each only while it is still ours (:func:`remove_run`). The record is
    removed once nothing it lists is left; otherwise it stays for a later teardown or the
    next run's reaper. A build in progress stops at its next step (``_gen`` changed)."""
    state["_gen"] = state.get("_gen", 0) + 1
    state["net"] = None
    prober, state["_prober"] = state.get("_prober"), None
    if prober is not None:
        prober.close()
    rec, state["_rec"] = state.get("_rec"), None
    nodes, state["_nodes"] = state.get("_nodes") or [], []
    state["_pids"], state["_shells"] = {}, {}
    stale = state.setdefault("_stale", [])
    if rec is not None:
        stale.append(rec)
    left = {id(r): remove_run(r.data) for r in stale}
    for node, popen in nodes:
        release_node(node, popen)
    for r in list(stale):
        if left[id(r)]:
            r.write()  # still ours and still there: keep it for the reaper
        else:
            r.discard()
            stale.remove(r)


def reap_leftovers(state_dir: Path = STATE_DIR) -> list[str]:
    """Remove what crashed runs recorded and left behind (:func:`remove_run`). Returns
    the run ids cleaned. A run whose owner is still the recorded live process is left
    alone; a record stays until nothing it lists is left."""
    cleaned = []
    if not Path(state_dir).is_dir():
        return cleaned
    for f in sorted(Path(state_dir).glob("*.json")):
        try:
            rec = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if owner_alive(rec) or rec.get("netns", netns()) != netns():
            continue  # a live run, or one of another network namespace
        if remove_run(rec, settle=2.0):
            continue  # something of the run is still there: retried by the next reaper
        f.unlink(missing_ok=True)
        cleaned.append(rec.get("run", f.stem))
    return cleaned
