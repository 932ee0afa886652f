"""Write-ahead run records and the ownership-checked clean-up of the Mininet backend.

The reaper tests create real links in the root network namespace (root and iproute2: marked
``mininet``), each with a name no run uses, and remove them afterwards."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from netarena_gym.routing.backends.mininet_lifecycle import (
    RunRecord, ended_on_exit, links, netns, new_run_id, process_identity, reap_leftovers,
    signals_held, teardown_handler)

from .conftest import MININET_HINT

root = pytest.mark.skipif(os.geteuid() != 0, reason=f"needs root: {MININET_HINT}")


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


@pytest.fixture
def made():
    """Names of the links a test made; each removed afterwards if still there."""
    names = []
    yield names
    for n in names:
        subprocess.run(["ip", "link", "del", "dev", n], capture_output=True)


def dead_record(tmp_path, run: str, **fields) -> RunRecord:
    rec = RunRecord(tmp_path, run)
    rec.data.update(owner=dead_pid(), owner_ident=[1, 0], **fields)
    rec.write()
    return rec


@pytest.mark.mininet
@root
def test_reaper_removes_only_what_is_provably_the_runs(tmp_path, made):
    """A dead run's bridge with its recorded address and that bridge's port go; a namesake
    bridge with another address, a port of the recorded name on that namesake, and a
    bridge of a similar name that the record does not list stay."""
    run = new_run_id(tmp_path)
    ours, namesake, similar = f"{run}s1", f"{run}s2", f"{run}s10"
    made += [ours, namesake, similar, f"{ours}-eth1", f"{namesake}-eth1"]
    ip("link", "add", "name", ours, "address", "0a:00:00:00:00:01", "type", "bridge")
    ip("link", "add", "name", namesake, "address", "0a:00:00:00:00:99", "type", "bridge")
    ip("link", "add", "name", similar, "address", "0a:00:00:00:00:03", "type", "bridge")
    ip("link", "add", f"{ours}-eth1", "type", "veth", "peer", "name", f"{run}p1")
    ip("link", "add", f"{namesake}-eth1", "type", "veth", "peer", "name", f"{run}p2")
    ip("link", "set", f"{ours}-eth1", "master", ours)
    ip("link", "set", f"{namesake}-eth1", "master", namesake)
    rec = dead_record(tmp_path, run, bridges={ours: "0a:00:00:00:00:01",
                                              namesake: "0a:00:00:00:00:02"},
                      ports=[f"{ours}-eth1", f"{namesake}-eth1"])
    assert reap_leftovers(tmp_path) == [run]
    now = links()
    assert ours not in now and f"{ours}-eth1" not in now and f"{run}p1" not in now
    assert now[namesake]["address"] == "0a:00:00:00:00:99"
    assert now[f"{namesake}-eth1"]["master"] == namesake and similar in now
    assert not rec.path.exists()


@pytest.mark.mininet
@root
def test_reaper_leaves_live_runs_and_other_namespaces(tmp_path, made):
    run = new_run_id(tmp_path)
    made.append(f"{run}s1")
    ip("link", "add", "name", f"{run}s1", "address", "0a:00:00:00:00:01", "type", "bridge")
    bridges = {f"{run}s1": "0a:00:00:00:00:01"}
    live = RunRecord(tmp_path, run)  # this process: alive
    live.plan(list(bridges), [])
    assert live.data["bridges"] != bridges  # addresses are drawn per run
    live.data["bridges"] = bridges
    live.write()
    assert reap_leftovers(tmp_path) == [] and f"{run}s1" in links()
    other = dead_record(tmp_path, run, bridges=bridges, netns="net:[1]")
    assert reap_leftovers(tmp_path) == [] and f"{run}s1" in links()
    other.data["netns"] = netns()
    other.write()
    assert reap_leftovers(tmp_path) == [run] and f"{run}s1" not in links()


def test_record_is_replaced_whole(tmp_path):
    rec = RunRecord(tmp_path, "nxtest")
    macs = rec.plan(["nxtests1", "nxtests2"], ["nxtests1-eth1"])
    assert len(set(macs.values())) == 2 and all(m.startswith("0a:") for m in macs.values())
    rec.add_process(os.getpid())
    data = json.loads(rec.path.read_text())
    assert data["bridges"] == macs and data["ports"] == ["nxtests1-eth1"]
    assert data["node_idents"] == [[os.getpid(), process_identity(os.getpid())]]
    assert [p.name for p in tmp_path.iterdir()] == ["nxtest.json"]  # no temporary file left


def test_teardown_handler_waits_for_the_step_then_chains():
    calls = []
    handler = teardown_handler(lambda: calls.append("close"),
                               lambda signum, frame: calls.append(signum))
    old = signal.signal(signal.SIGUSR1, handler)
    try:
        with signals_held():
            os.kill(os.getpid(), signal.SIGUSR1)
            for _ in range(1000):  # the handler has run (deferred) by now
                pass
            calls.append("step done")
        assert calls == ["step done", "close", signal.SIGUSR1]
    finally:
        signal.signal(signal.SIGUSR1, old)


@pytest.mark.mininet
@root
def test_a_record_without_addresses_leaves_its_bridges_and_stays(tmp_path, made):
    """An older version's record lists bridge names only: nothing proves them the run's."""
    run = new_run_id(tmp_path)
    made.append(f"{run}s1")
    ip("link", "add", "name", f"{run}s1", "type", "bridge")
    rec = dead_record(tmp_path, run, bridges=[f"{run}s1"])
    assert reap_leftovers(tmp_path) == [] and f"{run}s1" in links() and rec.path.exists()


def test_helper_processes_end_with_their_group_on_an_exception():
    with pytest.raises(RuntimeError), ended_on_exit() as procs:
        procs.append(subprocess.Popen(["sh", "-c", "sleep 30 & echo $!; wait"],
                                      stdout=subprocess.PIPE, text=True,
                                      start_new_session=True))
        grandchild = int(procs[0].stdout.readline())
        raise RuntimeError("interrupted")
    assert procs[0].returncode == -signal.SIGKILL

    def gone() -> bool:  # the sleep was in the group too: killed (reaped by its new parent)
        try:
            return Path(f"/proc/{grandchild}/stat").read_text().split(") ")[1][0] == "Z"
        except OSError:
            return True
    deadline = time.monotonic() + 5
    while not gone() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone()


TRACKER = """
import gc, os, signal, sys
from netarena_gym.routing.backends.mininet_lifecycle import track

closed = []

class Backend:  # what track() needs of a backend
    def __init__(self, i):
        self.i = i
    def close(self):
        closed.append(self.i)
        if isinstance(self.i, str):
            print("close", self.i, flush=True)

if sys.argv[1] == "python-handler":
    signal.signal(signal.SIGTERM, lambda s, f: print("previous handler", s, flush=True))
for i in range(2000):  # a trainer that re-creates its env, each closed and dropped
    b = Backend(i)
    track(b)
    if i == 0:
        first = signal.getsignal(signal.SIGTERM)
    b.close()
    del b
gc.collect()
assert signal.getsignal(signal.SIGTERM) is first
live = [Backend("a"), Backend("b")]
for b in live:
    track(b)
closed.clear()
os.kill(os.getpid(), signal.SIGTERM)
print("closed", sorted(closed), flush=True)
"""


@pytest.mark.parametrize("prev", ["default", "python-handler"])
def test_one_signal_handler_for_every_backend(prev):
    """2,000 backends made and dropped install one SIGTERM handler (one per backend, each
    chained to the one before, raised RecursionError after 1,500): it closes the live
    backends once, then does what the signal did before, once."""
    p = subprocess.run([sys.executable, "-c", TRACKER, prev], capture_output=True, text=True,
                       timeout=60, cwd=os.getcwd())
    assert "RecursionError" not in p.stderr, p.stderr[-2000:]
    lines = p.stdout.splitlines()
    assert sorted(lines[:2]) == ["close a", "close b"], (p.stdout, p.stderr[-2000:])
    if prev == "default":  # closed, then killed by the signal as before
        assert p.returncode == -signal.SIGTERM and lines[2:] == []
    else:
        assert p.returncode == 0, p.stderr[-2000:]
        assert lines[2:] == ["previous handler 15", "closed ['a', 'b']"]
