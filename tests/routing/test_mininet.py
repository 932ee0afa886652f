"""The Mininet backend: lifecycle, capabilities, and the simulator proven against it.

Needs root, Mininet (Debian's package for mnexec, the PyPI package for the Python API),
bridge-utils, iputils-ping, iproute2 and iptables. CI runs these as root."""
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
