"""The Mininet backend: lifecycle, capabilities, and the simulator proven against it.

Needs root, Mininet (Debian's package for mnexec, the PyPI package for the Python API),
bridge-utils, iputils-ping, iproute2 and iptables. CI runs these as root."""
import json
import re
import os
import signal
import subprocess
import sys
import textwrap
import time

import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.agents.episode import play_episode
from netarena_gym.routing.expert import RoutingExpert
from netarena_gym.routing.faults import Fault
from netarena_gym.routing.backends.mininet import STATE_DIR, requirements_missing
from netarena_gym.routing.backends.mininet_lifecycle import (process_identity, reap_leftovers,
                                                             still_running)
from netarena_gym.routing.shapes import shape_spec
from netarena_gym.routing.backends.sim import SimBackend

from .conftest import MININET_HINT, scenario

pytestmark = [pytest.mark.mininet,
              pytest.mark.skipif(bool(requirements_missing()),
                                 reason=f"mininet backend needs {requirements_missing()}: {MININET_HINT}")]


def root_links() -> str:
    return subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def real():
    from netarena_gym.routing.backends.mininet import MininetBackend
    b = MininetBackend(probe_timeout=0.1)
    yield b
    b.close()


def test_names_are_prefixed_and_close_removes_everything():
    from netarena_gym.routing.backends.mininet import MininetBackend
    before = root_links()
    b = MininetBackend()
    b.apply(scenario([]))
    new = [ln for ln in root_links().splitlines() if ln not in before]
    ours = [ln for ln in new if f": {b.run_id}" in ln]
    # everything we created in the root namespace carries our prefix (other runs that
    # happen to be building at the same time carry theirs)
    assert ours and all(re.search(r": nx[0-9a-f]{4}", ln) for ln in new)
    assert (STATE_DIR / f"{b.run_id}.json").exists()
    assert b.observe().all()
    b.close()
    assert b.run_id not in root_links()
    assert not (STATE_DIR / f"{b.run_id}.json").exists()


def _child(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            text=True, cwd=os.getcwd())


def test_crashed_run_is_reaped_by_the_next_one():
    p = _child("""
        import os, sys
        from netarena_gym.routing.backends.mininet import MininetBackend
        from tests.routing.conftest import scenario
        b = MininetBackend(); b.apply(scenario([]))
        print(b.run_id, flush=True)
        os.kill(os.getpid(), 9)
    """)
    run_id = p.stdout.readline().strip()
    p.wait(timeout=60)
    assert run_id and run_id in root_links()  # the crash left its bridges behind
    from netarena_gym.routing.backends.mininet import MininetBackend
    b = MininetBackend()
    try:
        assert run_id not in root_links()
        assert not (STATE_DIR / f"{run_id}.json").exists()
    finally:
        b.close()


def test_sigterm_tears_down():
    p = _child("""
        import time
        from netarena_gym.routing.backends.mininet import MininetBackend
        from tests.routing.conftest import scenario
        b = MininetBackend(); b.apply(scenario([]))
        print(b.run_id, flush=True)
        time.sleep(60)
    """)
    run_id = p.stdout.readline().strip()
    assert run_id in root_links()
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
    assert run_id not in root_links()


def test_capabilities_shape_generation_and_info():
    env = gym.make("NetArena-Routing-v0", level=1, backend="mininet")
    try:
        _, info = env.reset(seed=0)
        caps = env.unwrapped.backend.capabilities
        assert info["backend"] == "mininet" and info["extra"]["capabilities"] == sorted(caps)
        if "netem" not in caps:
            for seed in range(60):
                sc = env.unwrapped.generator.generate(seed).scenario
                assert all("netem" not in c for f in sc.faults for c in Fault.from_dict(f).commands())
    finally:
        env.close()


def test_env_runs_unchanged_on_mininet():
    sim = gym.make("NetArena-Routing-v0", level=2)
    real = gym.make("NetArena-Routing-v0", level=2, backend="mininet")
    try:
        o1, i1 = real.reset(seed=3)
        caps = real.unwrapped.backend.capabilities
        sim2 = gym.make("NetArena-Routing-v0", level=2)
        sim2.unwrapped.generator.capabilities = caps
        o2, _ = sim2.reset(options={"scenario": i1["scenario"]})
        assert o1 == o2
        res = play_episode(real, RoutingExpert(), options={"scenario": i1["scenario"]})
        assert res.correct and res.safe
    finally:
        real.close()
        sim.close()


def test_reset_restores_without_rebuilding(real):
    spec = {"hosts": [[1, 2, 1]], "parents": []}
    f1 = Fault("disable_routing", 1, "r0", {})
    f2 = Fault("remove_ip", 1, "r0", {"interface": "r0-eth2"})
    builds = real.builds
    real.apply(scenario([f1], spec))
    real.apply(scenario([f2], spec))
    real.apply(scenario([f1], spec))
    assert real.builds - builds <= 1
    sim = SimBackend()
    sim.apply(scenario([f1], spec))
    assert np.array_equal(real.observe(), sim.observe())


@pytest.mark.parametrize("level", [1, 2, 3])
def test_expert_on_mininet(level):
    env = gym.make("NetArena-Routing-v0", level=level, backend="mininet")
    try:
        for seed in range(8):
            r = play_episode(env, RoutingExpert(), seed=seed)
            assert r.correct and r.safe, r.scenario
    finally:
        env.close()


def test_reset_restores_loopback_and_arp_flags(real):
    """What a random agent may change on lo or an interface's ARP flag is undone by reset
    (found by the grammar agent of the differential campaign)."""
    sc = scenario([])
    real.apply(sc)
    for cmd in ("ip addr add 10.243.0.1/24 dev lo", "ip link set r0-eth1 arp off",
                "ip link set lo mtu 1500"):
        assert real.run({"machine": "r0", "command": cmd}).status == 0
    real.apply(sc)
    lo = real.run({"machine": "r0", "command": "ip addr show dev lo"}).output
    assert "10.243.0.1" not in lo and "127.0.0.1/8" in lo and "mtu 65536" in lo
    assert "NOARP" not in real.run({"machine": "r0", "command": "ip link show r0-eth1"}).output


# ------------------------------------------------------------ interrupted builds (issue: leak)
# 16 routers with two one-host LANs each: 32 bridges, 48 node shells (the shape whose
# interrupted builds left bridges s17..s32 behind)
LARGE = shape_spec("tree", [(1, 1)] * 16).to_dict()
SHELLS = 16 + 32 + 32  # routers, hosts, bridges' shells


def netns_names() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def left_of(run_id: str, rec: dict, state_dir) -> list[str]:
    """What of run ``run_id`` is still on the host: links named with its prefix (bridges
    and ports), live recorded processes, bridges' shells, records."""
    left = [ln.split(":")[1].strip() for ln in root_links().splitlines()
            if f": {run_id}" in ln]
    left += [f"process {pid}" for pid, ident in rec.get("node_idents", [])
             if still_running(pid, ident)]
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    left += [ln for ln in ps.splitlines() if f"mininet:{run_id}" in ln]
    return left + [p.name for p in state_dir.glob("*.json")]


def wait_gone(run_id: str, rec: dict, state_dir, within: float = 15.0) -> list[str]:
    """``left_of`` once it is empty, or after ``within`` seconds (a namespace goes a moment
    after its last process, taking its veth pairs with it)."""
    deadline = time.monotonic() + within
    while (left := left_of(run_id, rec, state_dir)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def spy_processes(b, fail_after: int | None = None) -> dict:
    """Collect what ``b`` records of each node's shell as it is forked (a record shaped
    like the state file's); with ``fail_after``, the build fails (an exception in Mininet's
    node creation) once that many shells exist."""
    rec = {"node_idents": []}
    started = b._started

    def spy(node, popen):
        started(node, popen)
        rec["node_idents"].append([popen.pid, process_identity(popen.pid)])
        if fail_after is not None and len(rec["node_idents"]) >= fail_after:
            raise RuntimeError("injected: node creation failed")
    b._started = spy
    return rec


def test_build_stopped_by_an_exception_leaves_nothing_and_spares_a_namesake(tmp_path):
    """The build fails at bridge s5 because a bridge of that name already exists (not
    ours: another address): everything the build made goes, the namesake and a bridge of
    a similar name stay; the next apply builds the network."""
    from netarena_gym.errors import BackendUnavailable
    from netarena_gym.routing.backends.mininet import MininetBackend
    netns_before = netns_names()
    b = MininetBackend(state_dir=tmp_path)
    run = b.run_id
    decoys = [f"{run}s5", f"{run}s500"]
    try:
        for d in decoys:
            subprocess.run(["ip", "link", "add", d, "type", "bridge"], check=True)
        rec = spy_processes(b)
        with pytest.raises(BackendUnavailable, match="s5"):
            b.apply(scenario([], LARGE))
        assert len(rec["node_idents"]) == SHELLS
        assert sorted(wait_gone(run, rec, tmp_path)) == sorted(decoys)
        assert b.net is None and netns_names() == netns_before
        subprocess.run(["ip", "link", "del", decoys[0]], check=True)
        b.apply(scenario([], {"hosts": [[1]] * 5, "parents": [0, 0, 1, 1]}))
        assert b.observe().all()
    finally:
        for d in decoys:
            subprocess.run(["ip", "link", "del", d], capture_output=True)
        b.close()
    assert wait_gone(run, rec, tmp_path) == []


@pytest.mark.parametrize("fail_after", [1, 20, SHELLS - 1])
def test_exception_mid_build_leaves_nothing(tmp_path, fail_after):
    from netarena_gym.routing.backends.mininet import MininetBackend
    b = MininetBackend(state_dir=tmp_path)
    try:
        rec = spy_processes(b, fail_after)
        with pytest.raises(RuntimeError, match="injected"):
            b.apply(scenario([], LARGE))
        assert len(rec["node_idents"]) == fail_after
        assert wait_gone(b.run_id, rec, tmp_path) == []
    finally:
        b.close()


BUILDER = """
    import json, signal, sys, time
    from netarena_gym.routing.backends.mininet import MininetBackend
    from tests.routing.conftest import scenario
    if sys.argv[2] == "returning-handler":  # a program that goes on after SIGINT
        signal.signal(signal.SIGINT, lambda *a: print("handled", flush=True))
    if sys.argv[2] == "ignored-sigint":  # as a job started with & by a script
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    b = MininetBackend(state_dir=sys.argv[1])
    print(b.run_id, flush=True)
    try:
        b.apply(scenario([], json.loads(sys.argv[3])))
        print("built", b.observe().all(), flush=True)
    except Exception as e:
        print(type(e).__name__, e, flush=True)
    time.sleep(60)
"""


def start_builder(tmp_path, mode: str):
    p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(BUILDER), str(tmp_path), mode,
                          json.dumps(LARGE)], stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
    return p, p.stdout.readline().strip()


def first_bridge(p, run_id: str, tmp_path) -> dict:
    """The record as it stands when the first bridge of ``run_id`` exists (bridges are made
    last: the build is then in its final steps)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None:
        if f": {run_id}s" in subprocess.run(["ip", "-o", "link", "show", "type", "bridge"],
                                            capture_output=True, text=True).stdout:
            return json.loads((tmp_path / f"{run_id}.json").read_text())
        time.sleep(0.02)
    raise AssertionError("no bridge appeared")


@pytest.mark.parametrize("mode", ["returning-handler", "ignored-sigint", "sigterm", "sigkill"])
def test_signal_mid_build_leaves_nothing(tmp_path, mode):
    """A signal while the bridges are being made. Every root-namespace name was recorded
    before the first was made (write-ahead). SIGINT to a program whose handler returns (it
    goes on): the build stops with a clear error and nothing stays, while the program still
    runs. SIGINT ignored (a job started with ``&``; the runs that left s17..s32 behind were
    torn down by it mid-build and went on building): it stays ignored, the network is
    built whole, and SIGTERM then removes it. SIGTERM: torn down, then the process ends.
    SIGKILL: the record stays and the next run's reaper removes it all."""
    netns_before = netns_names()
    p, run = start_builder(tmp_path, mode)
    try:
        rec = first_bridge(p, run, tmp_path)
        assert sorted(rec["bridges"]) == sorted(f"{run}s{k}" for k in range(1, 33))
        assert len(rec["ports"]) == 64 and len(rec["node_idents"]) == SHELLS
        p.send_signal({"sigterm": signal.SIGTERM, "sigkill": signal.SIGKILL}.get(mode,
                                                                              signal.SIGINT))
        if mode == "returning-handler":
            assert p.stdout.readline() == "handled\n"
            assert "torn down while building" in p.stdout.readline()
            assert p.poll() is None
        elif mode == "ignored-sigint":
            assert p.stdout.readline() == "built True\n"
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=60)
        else:
            p.wait(timeout=60)
        if mode == "sigkill":
            assert (tmp_path / f"{run}.json").exists()
            from netarena_gym.routing.backends.mininet import MininetBackend
            MininetBackend(state_dir=tmp_path).close()
        assert wait_gone(run, rec, tmp_path) == []
        assert netns_names() == netns_before
    finally:
        p.kill()
        p.wait()
        reap_leftovers(tmp_path)  # a failed test leaves nothing either
