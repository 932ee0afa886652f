"""The one classification of tool results (``executor.classify``) that every routing
backend applies. Outputs and exit statuses are pinned verbatim from the real tools run in
a network namespace (iproute2 6.1.0, iptables 1.8.9 (nf_tables), net-tools 2.10,
procps-ng 4.0.2, iputils 20221126)."""
import gymnasium as gym
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.commands import executor
from netarena_gym.routing.faults import Fault

from .conftest import scenario

REAL = [  # (program, exit status, output, kind)
    ("ip", 2, "Error: Invalid prefsrc address.\n", "error"),  # issue 12 item 11
    ("ip", 2, "Error: Nexthop has invalid gateway.\n", "error"),
    ("ip", 2, "Error: mtu greater than device maximum.\n", "error"),
    ("ip", 2, "Error: ipv4: Address already assigned.\n", "error"),
    ("ip", 2, "RTNETLINK answers: No such process\n", "error"),
    ("ip", 1, 'Cannot find device "eth9"\n', "error"),
    ("ip", 1, 'Object "foo" is unknown, try "ip help".\n', "invalid"),
    ("ip", 1, '"ip route flush" requires arguments.\n', "invalid"),
    ("ip", 255, 'Not enough information: "dev" argument is required.\n', "invalid"),
    ("ip", 1, 'Error: any valid prefix is expected rather than "192.168.300.0/24".\n', "invalid"),
    ("ip", 255, "Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\n", "invalid"),
    ("tc", 2, "Error: Cannot delete qdisc with handle of zero.\n", "error"),
    ("tc", 0, "Usage: tc qdisc [ add | del | replace | change | show ] dev STRING\n", "invalid"),
    ("iptables", 1, "iptables: Bad rule (does a matching rule exist in that chain?).\n", "error"),
    ("iptables", 1, "iptables: No chain/target/match by that name.\n", "error"),
    ("iptables", 2, "iptables v1.8.9 (nf_tables): unknown option \"--bogus\"\n"
                    "Try `iptables -h' or 'iptables --help' for more information.\n", "invalid"),
    ("iptables", 2, "iptables v1.8.9 (nf_tables): Chain 'BOGUS' does not exist\n"
                    "Try `iptables -h' or 'iptables --help' for more information.\n", "invalid"),
    ("sysctl", 1, "sysctl: cannot stat /proc/sys/net/bogus: No such file or directory\n", "error"),
    ("sysctl", 1, "\nUsage:\n sysctl [options] [variable[=value] ...]\n", "invalid"),
    ("ifconfig", 1, "eth9: error fetching interface information: Device not found\n", "error"),
    ("ifconfig", 1, "bogus: Host name lookup failure\nifconfig: `--help' gives usage information.\n",
     "invalid"),
    ("route", 0, "route: invalid option -- 'z'\n    inet (DARPA Internet) inet6 (IPv6)\n", "invalid"),
    ("arp", 3, "arp: invalid option -- 'x'\nUsage:\n", "invalid"),
    ("ping", 1, "PING 192.168.2.7 (192.168.2.7) 56(84) bytes of data.\n\n"
                "--- 192.168.2.7 ping statistics ---\n"
                "1 packets transmitted, 0 received, 100% packet loss, time 0ms\n\n", "ok"),
    ("ping", 1, "ping: sendmsg: Operation not permitted\n", "error"),
    ("ping", 2, "ping: connect: Network is unreachable\n", "error"),
    ("iptables", 127, "bash: iptables: command not found\n", "invalid"),
    ("ip", 0, "default via 192.168.1.1 dev h1-eth0\n", "ok"),
]


@pytest.mark.parametrize("prog,status,output,kind", REAL)
def test_classify_real_tool_results(prog, status, output, kind):
    assert executor.classify(prog, status, output) == kind


def test_every_backend_uses_the_one_function():
    mininet = pytest.importorskip("netarena_gym.routing.backends.mininet")
    assert mininet.classify is executor.classify


def test_issue_example_is_an_error_charged_the_step_cost_only():
    """Seed 778's step: a kernel refusal, not a typo (was invalid on Mininet)."""
    env = gym.make("NetArena-Routing-v0", level=1)
    flushed = Fault("remove_ip", 1, "r0", {"interface": "r0-eth2"})
    env.reset(options={"scenario": scenario([flushed], {"hosts": [[1, 1]], "parents": []})})
    _, reward, _, _, info = env.step({"machine": "r0", "command":
        "ip route replace 192.168.2.0/24 dev r0-eth2 proto kernel scope link src 192.168.2.1"})
    assert (info["command_status"], info["command_kind"]) == (2, "error")
    assert info["reward_components"]["invalid"] == 0 and reward == pytest.approx(-0.01)


def test_missing_program_is_bash_not_found():
    b = SimBackend(missing_programs=frozenset({"iptables"}))
    b.apply(scenario([]))
    r = b.run({"machine": "r0", "command": "iptables -S"})
    assert (r.output, r.status, r.kind) == ("bash: iptables: command not found\n", 127, "invalid")
    assert b.run({"machine": "r0", "command": "ip rule show"}).kind == "ok"


def test_both_lines_of_a_two_line_command_run():
    # the shell parser ends a command at a newline (tests/shell/test_parser.py)
    from netarena_gym.routing.backends.sim import SimBackend
    from .conftest import LAN3_DOWN, THREE, scenario
    b = SimBackend()
    b.apply(scenario([LAN3_DOWN], THREE))
    res = b.run({"machine": "r0", "command": "ip -br addr show r0-eth1\nip link set r0-eth3 up"})
    assert (res.status, res.output) == (0, "r0-eth1@if100    UP             192.168.1.1/24 \n")
    assert "UP" in b.run({"machine": "r0", "command": "ip -br link show r0-eth3"}).output
