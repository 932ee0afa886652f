"""Attack suite of the routing task (issue #11): what an untrusted agent tried, on the
simulator (unmarked) and on Mininet (marked ``mininet``, run as root). Each attack asserts
the host's state afterwards; controls show that legitimate commands still work."""
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from netarena_gym.routing.backends.mininet import process_identity, reap_leftovers, \
    requirements_missing
from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.faults import Fault
from netarena_gym.shell.parser import OK, REFUSED

from .conftest import MININET_HINT, scenario

SHADOW_LINE = Path("/etc/shadow").read_text().splitlines()[0] if os.access("/etc/shadow",
                                                                           os.R_OK) else "root:"
SECRET = SHADOW_LINE.split(":")[0] + ":" + SHADOW_LINE.split(":")[1][:6]


def act(machine: str, command: str) -> dict:
    """A routing action as ``Backend.run`` takes it."""
    return {"machine": machine, "command": command}

# every spelling must be refused by the allow-list, identically on both backends
FILE_WRITES = [
    "echo x > /proc/sys/net/../../../tmp/{f}",
    "echo x > /proc/sys/net/./../../../tmp/{f}",
    "echo x > //tmp/{f}",
    "echo x > /proc/sys/net/ipv4/../../../../tmp/{f}",
    "echo x > /proc/self/root/tmp/{f}",
    "echo x >> /proc/sys/net/../../../tmp/{f}",
    "echo x > /tmp/{f}",
    "ip a 2> /tmp/{f}",
    "ip a | tee /tmp/{f}",
    "ip a | sort -o /tmp/{f}",
    "ip a | sort --output=/tmp/{f}",
    "ip a | sort -ro/tmp/{f}",
    "ip a | uniq - /tmp/{f}",
    "ip a | grep -c x > /tmp/{f}",
    "ip a &> /tmp/{f}",  # the spellings of both streams into a file
    "ip a &>> /proc/sys/net/../../../tmp/{f}",
    "ip a >& /tmp/{f}",
    "> /tmp/{f} ip a",  # before the command
    "ip a 1>&2 > /tmp/{f}",
    "ip a 2>/dev/null 1> /tmp/{f}",
    "ip a 3> /tmp/{f}",  # another file descriptor
    "ip a > /tmp/{f} > /dev/null",  # bash opens (creates) every target, not only the last
    "ip a > /tmp/{f} >&2",
]
READS = [
    "ip a | grep -h root /etc/shadow", "ip a | grep root - /etc/shadow",
    "ip a | grep -f /etc/shadow", "ip a | grep -r root /etc", "ip a | head -n 2 /etc/shadow",
    "ip a | tail /etc/shadow", "ip a | tail +1 /etc/shadow", "ip a | wc /etc/shadow",
    "ip a | sort /etc/shadow", "ip a | uniq /etc/shadow", "ip a | egrep . /etc/shadow",
    "cat /etc/shadow", "cat /proc/sys/net/../../../etc/shadow", "cat //etc/shadow",
    "cat /proc/net/../../etc/shadow", "cat /proc/self/root/etc/shadow",
    "grep root /etc/shadow", "iptables-restore < /etc/shadow", "ip -batch /etc/shadow",
    "ip -b /etc/shadow", "ip -ba /etc/shadow", "ip --batch /etc/shadow", "tc -batch /etc/shadow",
    "tc -b /etc/shadow", "tc -cf /etc/shadow qdisc show",
]
HOST_SYSCTL = "kernel.printk_ratelimit_burst"
SYSCTLS = [
    f"sysctl -w {HOST_SYSCTL}=77", f"sysctl {HOST_SYSCTL}=77", "sysctl -w kernel/printk_ratelimit_burst=77",
    f"sysctl -qw {HOST_SYSCTL}=77", "sysctl -p/etc/shadow", "sysctl -p /etc/shadow",
    "sysctl -pfile", "sysctl --load=/etc/shadow", "sysctl --lo=/etc/shadow", "sysctl --load",
    "sysctl -a -p", "sysctl -qp", "sysctl -f /etc/shadow", "sysctl --system", "sysctl --sys",
    "sysctl -a", "sysctl -A", "sysctl -N -X",
    "echo 77 > /proc/sys/kernel/printk_ratelimit_burst",
    "echo 77 > /proc/sys/net/../kernel/printk_ratelimit_burst",
    "echo 77 > /proc/sys/net/ipv4/../../kernel/printk_ratelimit_burst",
]
NAMESPACES = [
    "ip netns exec x sh", "ip -n x a", "ip -netns x a", "ip -all netns exec id",
    "nsenter -t 1 -n ip a", "unshare -n ip a", "tc -n x qdisc show", "tc -netns x qdisc show",
    "ip link set r0-eth1 netns 1", "sh -c id", "bash -c id", "/bin/sh -c id", "env sh",
    "xargs sh", "ip a; sh", "ip a && python3 -c 1", "kill -9 1", "killsnoop",
]
CONTROLS = [  # legitimate commands: not refused, same outcome as the real tools
    ("sysctl net.ipv4.ip_forward", "net.ipv4.ip_forward = 1\n"),
    ("sysctl -n net.ipv4.ip_forward", "1\n"),
    ("cat /proc/sys/net/ipv4/ip_forward", "1\n"),
    ("cat /proc/sys/net/./ipv4/ip_forward", "1\n"),
    ("ip -o link show lo | wc -l", "1\n"),
    ("ip -4 addr show dev lo | grep -c inet", "1\n"),
    ("ip -br link show lo | grep -o '^lo'", "lo\n"),
]


def assert_refused(res):
    assert res.kind == REFUSED and res.status == 126, res.output
    assert res.output.startswith("netarena: command refused: ")


def host_sysctl() -> str:
    return Path("/proc/sys/" + HOST_SYSCTL.replace(".", "/")).read_text()


# ------------------------------------------------------------------------------ simulator
@pytest.fixture
def sim():
    b = SimBackend()
    b.apply(scenario([]))
    return b


@pytest.mark.parametrize("line", FILE_WRITES)
def test_sim_refuses_file_writes(sim, line):
    name = f"netarena-attack-{uuid.uuid4().hex[:8]}"
    assert_refused(sim.run(act("r0", line.format(f=name))))
    assert not Path("/tmp", name).exists()


@pytest.mark.parametrize("line", READS + SYSCTLS + NAMESPACES)
def test_sim_refuses_reads_sysctls_and_escapes(sim, line):
    before = host_sysctl()
    res = sim.run(act("r0", line))
    assert_refused(res)
    assert SECRET not in res.output and host_sysctl() == before


@pytest.mark.parametrize("line, expected", CONTROLS)
def test_sim_controls(sim, line, expected):
    res = sim.run(act("r0", line))
    assert (res.output, res.kind) == (expected, OK)


def test_sim_redirect_into_proc_sys_net_still_works(sim):
    assert sim.run(act("r0", "echo 0 > /proc/sys/net/ipv4/./ip_forward")).kind == OK
    assert sim.run(act("r0", "sysctl -n net.ipv4.ip_forward")).output == "0\n"


@pytest.mark.parametrize("line", ["ip a | grep -E '(a+)+b'", "ip addr show | grep -E '(.+)+Z'",
                                  "ip -s link | grep -E '((x*)*)*y'"])
def test_sim_pathological_regex_is_fast(sim, line):
    t = time.process_time()
    res = sim.run(act("r0", line))
    assert time.process_time() - t < 0.5 and res.status in (0, 1)


# --------------------------------------------------------------------------- real reaper
def test_reaper_spares_a_reused_pid(tmp_path):
    """A dead owner's state file that lists a live PID with another start time: untouched."""
    victim = subprocess.Popen(["sleep", "30"])
    try:
        start, uid = process_identity(victim.pid)
        dead = subprocess.Popen(["true"])
        dead.wait()
        (tmp_path / "nxdead.json").write_text(
            '{"run": "nxdead", "owner": %d, "owner_ident": [1, 0], "node_pids": [%d], '
            '"node_idents": [[%d, [%d, %d]]], "bridges": [], "ports": []}'
            % (dead.pid, victim.pid, victim.pid, start + 1, uid))
        assert reap_leftovers(tmp_path) == ["nxdead"]
        assert victim.poll() is None  # same PID, different start time: spared
        (tmp_path / "nxdead2.json").write_text(
            '{"run": "nxdead2", "owner": %d, "node_pids": [%d], '
            '"node_idents": [[%d, [%d, %d]]], "bridges": [], "ports": []}'
            % (dead.pid, victim.pid, victim.pid, start, uid))
        assert reap_leftovers(tmp_path) == ["nxdead2"]
        assert victim.wait(timeout=5) == -9  # the recorded process itself: reaped
    finally:
        if victim.poll() is None:
            victim.kill()


# ------------------------------------------------------------------------------- mininet
@pytest.fixture(scope="module")
def real():
    from netarena_gym.routing.backends.mininet import MininetBackend
    b = MininetBackend(probe_timeout=0.1)
    b.apply(scenario([]))
    yield b
    b.close()


@pytest.mark.parametrize("line", FILE_WRITES)
@pytest.mark.mininet
@pytest.mark.skipif(bool(requirements_missing()), reason=f"mininet backend needs {requirements_missing()}: {MININET_HINT}")
def test_mininet_refuses_file_writes(real, line):
    name = f"netarena-attack-{uuid.uuid4().hex[:8]}"
    assert_refused(real.run(act("r0", line.format(f=name))))
    assert not Path("/tmp", name).exists()


@pytest.mark.parametrize("line", READS + SYSCTLS + NAMESPACES)
@pytest.mark.mininet
@pytest.mark.skipif(bool(requirements_missing()), reason=f"mininet backend needs {requirements_missing()}: {MININET_HINT}")
def test_mininet_refuses_reads_sysctls_and_escapes(real, line):
    before = host_sysctl()
    res = real.run(act("r0", line))
    assert_refused(res)
    assert SECRET not in res.output and host_sysctl() == before


@pytest.mark.parametrize("line, expected", CONTROLS)
@pytest.mark.mininet
@pytest.mark.skipif(bool(requirements_missing()), reason=f"mininet backend needs {requirements_missing()}: {MININET_HINT}")
def test_mininet_controls(real, line, expected):
    res = real.run(act("r0", line))
    assert (res.output, res.kind) == (expected, OK)


@pytest.mark.mininet
@pytest.mark.skipif(bool(requirements_missing()), reason=f"mininet backend needs {requirements_missing()}: {MININET_HINT}")
def test_mininet_sandbox_is_read_only_but_the_namespace_sysctls_are_not(real):
    """Below the allow-list: the node's processes see a read-only host."""
    from netarena_gym.routing.backends import nodeexec
    pid = real.node_pid("r0")
    name = f"netarena-attack-{uuid.uuid4().hex[:8]}"
    p = nodeexec.run_argv(pid, ["touch", f"/root/{name}"], 10)
    assert p.returncode != 0 and "Read-only file system" in p.stdout
    p = nodeexec.run_argv(pid, ["touch", f"/tmp/{name}"], 10)  # private tmpfs
    assert p.returncode == 0 and not Path("/tmp", name).exists()
    before = host_sysctl()
    p = nodeexec.run_argv(pid, ["sysctl", "-w", f"{HOST_SYSCTL}=77"], 10)
    assert p.returncode != 0 and host_sysctl() == before
    assert nodeexec.write_file(pid, "/proc/sys/kernel/printk_ratelimit_burst", "77\n",
                               False) is not None
    assert host_sysctl() == before
    host_fwd = Path("/proc/sys/net/ipv4/ip_forward").read_text()
    assert real.run(act("r0", "echo 0 > /proc/sys/net/ipv4/./ip_forward")).kind == OK
    assert real.run(act("r0", "sysctl -n net.ipv4.ip_forward")).output == "0\n"
    assert Path("/proc/sys/net/ipv4/ip_forward").read_text() == host_fwd  # the node's only
    assert real.run(act("r0", "echo 1 > /proc/sys/net/ipv4/ip_forward")).kind == OK


@pytest.mark.mininet
@pytest.mark.skipif(bool(requirements_missing()), reason=f"mininet backend needs {requirements_missing()}: {MININET_HINT}")
def test_mininet_redirect_errors_match_the_simulator(real, sim):
    for line in ("echo abc > /proc/sys/net/ipv4/ip_forward",
                 "echo 1 > /proc/sys/net/ipv4/nope", "echo 2 > /proc/sys/net/ipv4/icmp_echo_ignore_all"):
        r, s = real.run(act("r0", line)), sim.run(act("r0", line))
        assert (r.output, r.status, r.kind) == (s.output, s.status, s.kind), line
    real.apply(scenario([]))


@pytest.mark.mininet
@pytest.mark.skipif(bool(requirements_missing()), reason=f"mininet backend needs {requirements_missing()}: {MININET_HINT}")
def test_mininet_pathological_regex_is_fast(real):
    t = time.monotonic()
    res = real.run(act("r0", "ip addr show | grep -E '(.+)+Z'"))
    assert time.monotonic() - t < 2 and res.status == 1


@pytest.mark.mininet
@pytest.mark.skipif(bool(requirements_missing()), reason=f"mininet backend needs {requirements_missing()}: {MININET_HINT}")
def test_mininet_expert_fix_still_works(real):
    real.apply(scenario([Fault("disable_routing", 1, "r0", {})]))
    assert real.run(act("r0", "sysctl -w net.ipv4.ip_forward=1")).kind == OK
    assert real.observe().all()
