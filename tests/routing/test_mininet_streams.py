"""Standard output and standard error on both routing backends: each command runs plain,
with ``2>/dev/null`` (stdout alone), ``>/dev/null`` (stderr alone), into a pipe (stderr
first, past the filter), with ``2>&1`` into a pipe, with ``2>&1 >/dev/null`` (stderr
alone, through the pipe), with ``>&2`` into a pipe (both past it) and with ``&>/dev/null``. The simulator must print what the real tools print on Mininet
(Linux 6.18, iproute2 6.1.0, iptables 1.8.9, net-tools 2.10, procps-ng 4.0.2, iputils
20221126, traceroute 2.1.2), with the same status and kind. Needs root and Mininet (CI
runs it as root); the simulator's own pins of these outputs are in test_executor.py.
Every node gets ``icmp_ratelimit=0``: the simulator does not model the kernel's ICMP rate
limit (see test_mininet_icmp.py), and traceroute runs six times here."""
import subprocess

import pytest

from netarena_gym.core.observation import last_output
from netarena_gym.routing.backends.mininet import requirements_missing
from netarena_gym.routing.differential import EnvPair, normalise

from .conftest import LAN3_DOWN, MININET_HINT, THREE, scenario

pytestmark = [pytest.mark.mininet,
              pytest.mark.skipif(bool(requirements_missing()),
                                 reason=f"mininet backend needs {requirements_missing()}: {MININET_HINT}")]

COMMANDS = [  # (machine, command): failures, mixed streams and usage texts of every tool
    ("r0", "ip route show dev eth9"), ("r0", "ip addr add 192.168.1.1/24 dev r0-eth1"),
    ("r0", "ip addr del 10.9.9.1/24 dev r0-eth1"), ("r0", "ip link set r0-eth1 bogus"),
    ("r0", "iptables -L NOCHAIN"), ("r0", "iptables -h"), ("r0", "iptables --bogus"),
    ("r0", "tc qdisc help"), ("r0", "tc qdisc show dev eth9"), ("r0", "ifconfig eth9"),
    ("r0", "route -z"), ("r0", "route del -net 10.99.0.0 netmask 255.255.0.0"),
    ("r0", "arp -d 10.9.9.9"), ("r0", "arp -x"),
    ("r0", "sysctl net.ipv4.ip_forward net.bogus net.ipv4.conf.all.forwarding"),
    ("r0", "sysctl -w net.ipv4.icmp_echo_ignore_all=5"), ("r0", "sysctl"),
    ("r0", "cat /proc/sys/net/ipv4/ip_forward /proc/sys/net/ipv4/nope"),
    ("r0", "cat -x"), ("r0", "ping"), ("r0", "ping -c 1 -W 1 10.9.9.9"),
    ("r0", "ping -c 1 -I 1.2.3.4 192.168.1.100"), ("h1", "ping -c 1 -W 1 192.168.2.100"),
    ("r0", "traceroute -n -q 1 -w 1 -m 2 192.168.1.100"),
    ("r0", "traceroute -s 1.2.3.4 -n -q 1 -w 1 -m 2 192.168.1.100"),
    ("r0", "traceroute -I -n -q 1 -w 1 -m 2 10.9.9.9"), ("r0", "traceroute"),
    ("r0", "nosuchprog"),
]
SUFFIXES = ("", " 2>/dev/null", " >/dev/null", " | head -n 100", " 2>&1 | head -n 100",
            " 2>&1 >/dev/null | head -n 100", " >&2 | head -n 100", " &>/dev/null")


@pytest.fixture(scope="module")
def pair():
    from netarena_gym.routing.backends.mininet import MininetBackend
    real = MininetBackend(probe_timeout=0.1)
    p = EnvPair(1, real, max_steps=len(COMMANDS) * len(SUFFIXES) + 5)
    yield p
    p.close()
    real.close()


def test_each_stream_goes_where_it_goes_on_mininet(pair):
    sc = scenario([LAN3_DOWN], THREE)  # unsolved all along: the commands leave r0-eth3 down
    pair.sim.reset(options={"scenario": sc})
    pair.real.reset(options={"scenario": sc})
    real = pair.real.backend
    for name in real.names:
        subprocess.run(["mnexec", "-a", str(real.node_pid(name)), "sysctl", "-q", "-w",
                        "net.ipv4.icmp_ratelimit=0"], check=True)
    bad = []
    for machine, command in COMMANDS:
        for suffix in SUFFIXES:
            act = {"machine": machine, "command": command + suffix}
            oa, *_, ia = pair.sim.step(act)
            ob, *_, ib = pair.real.step(act)
            a = (ia["command_status"], ia["command_kind"], normalise(last_output(oa)))
            b = (ib["command_status"], ib["command_kind"], normalise(last_output(ob)))
            if a != b:
                bad.append(f"{machine}: {act['command']}\n  sim:  {a}\n  real: {b}")
    assert not bad, "\n".join(bad)
