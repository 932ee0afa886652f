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


# ------------------------------------------------ stdout and stderr, as Mininet shows them
# (Linux 6.18 namespaces; the same lines on both backends: test_mininet_streams.py)
STREAMS = [  # (command on r0 of THREE, output)
    ("traceroute -n -q 1 -w 1 -m 2 192.168.1.100 >/dev/null", ""),  # its header is stdout
    ("traceroute -s 1.2.3.4 -n -q1 -w1 -m2 192.168.1.100 >/dev/null",
     "\nbind: Cannot assign requested address\n"),
    ("traceroute -s 1.2.3.4 -n -q1 -w1 -m2 192.168.1.100 | head -n 100",
     "\nbind: Cannot assign requested address\n"
     "traceroute to 192.168.1.100 (192.168.1.100), 2 hops max, 60 byte packets\n"),
    ("sysctl net.ipv4.ip_forward net.bogus 2>/dev/null", "net.ipv4.ip_forward = 1\n"),
    ("sysctl net.ipv4.ip_forward net.bogus >/dev/null",
     "sysctl: cannot stat /proc/sys/net/bogus: No such file or directory\n"),
    ("ping -c 1 -W 1 10.9.9.9 2>/dev/null", ""),
    ("ping -c 1 -W 1 10.9.9.9 | wc -l", "ping: connect: Network is unreachable\n0\n"),
    ("route -z 2>/dev/null | head -n 1",
     "Usage: route [-nNvee] [-FC] [<AF>]           List kernel routing tables\n"),
    ("tc qdisc help 2>/dev/null", ""),
    ("iptables -h 2>/dev/null | head -n 1", "iptables v1.8.9 (nf_tables)\n"),
    ("ip route show dev eth9 | grep -c .", 'Cannot find device "eth9"\n0\n'),
    ("ip addr show nosuch 2>&1 | wc -l", "1\n"),
    ("ip addr show nosuch 2>&1 >/dev/null | wc -l", "1\n"),
    ("ip addr show nosuch >/dev/null 2>&1", ""),
    ("nosuch 2>/dev/null", ""),
]


@pytest.mark.parametrize("command,output", STREAMS)
def test_stdout_and_stderr_go_where_bash_sends_them(command, output):
    from .conftest import THREE
    b = SimBackend()
    b.apply(scenario([], THREE))
    assert b.run({"machine": "r0", "command": command}).output == output


@pytest.mark.parametrize("command", ["ping", "ping -x", "route -z", "tc qdisc help",
                                     "ip link set r0-eth1 bogus", "sysctl -x", "cat -x"])
def test_the_kind_and_status_do_not_depend_on_the_redirections(command):
    from .conftest import THREE
    b = SimBackend()
    b.apply(scenario([], THREE))
    plain = b.run({"machine": "r0", "command": command})
    for suffix in (" 2>/dev/null", " >/dev/null", " | head -n 1", " 2>&1 | head -n 1"):
        r = b.run({"machine": "r0", "command": command + suffix})
        assert r.kind == plain.kind and plain.kind in ("invalid", "error")
        assert r.status == (plain.status if "|" not in suffix else 0)


def test_a_redirect_target_is_opened_first_and_a_failed_command_still_shows_its_error():
    from .conftest import THREE
    b = SimBackend()
    b.apply(scenario([], THREE))
    r = b.run({"machine": "r0", "command": "ip route show dev eth9 > /proc/sys/net/ipv4/ip_forward"})
    assert (r.output, r.status) == ('Cannot find device "eth9"\n', 1)
    assert b.run({"machine": "r0", "command": "cat /proc/sys/net/ipv4/ip_forward"}).output == "1\n"
    # bash cannot open the target: the command does not run
    r = b.run({"machine": "r0", "command": "ip link set r0-eth1 down > /proc/sys/net/ipv4/nope"})
    assert (r.output, r.status) == ("bash: /proc/sys/net/ipv4/nope: No such file or directory\n", 1)
    assert "state UP" in b.run({"machine": "r0", "command": "ip link show r0-eth1"}).output
