"""ICMP errors routers send, the router's own ``ping``/``traceroute`` errors and ``ping``'s
command line: the simulator against Mininet for each case a review found diverging
(Linux 6.18, iputils 20221126, traceroute 2.1.2, iptables 1.8.9 nf_tables). The sim-only
pins of the same outputs are in test_ping.py, test_ping_args.py and test_grader.py.

Real routers rate-limit the ICMP errors they send (``icmp_send``: per destination,
``net.ipv4.icmp_ratelimit``, per namespace; route errors in ``ip_error``: also
``net.ipv4.route.error_cost``, host-wide), which the simulator does not model, so these
comparisons are not part of the differential campaign. Here every node's namespace gets
``icmp_ratelimit=0``, and the cases rely on no ``ip_error`` error arriving (they expect
silence where the limiter may let one through). Needs root and Mininet (CI runs it as root)."""
import subprocess
import time

import pytest

from netarena_gym.core.observation import last_output
from netarena_gym.routing.backends.mininet import requirements_missing
from netarena_gym.routing.differential import EnvPair, normalise
from netarena_gym.routing.faults import Fault

from .conftest import DI3, DR3, DT1, LAN3_DOWN, MININET_HINT, THREE, TWO, scenario

pytestmark = [pytest.mark.mininet,
              pytest.mark.skipif(bool(requirements_missing()),
                                 reason=f"mininet backend needs {requirements_missing()}: {MININET_HINT}")]



@pytest.fixture(scope="module")
def real():
    from netarena_gym.routing.backends.mininet import MininetBackend
    b = MininetBackend(probe_timeout=0.1)  # its own network: icmp_ratelimit goes with it
    yield b
    b.close()


def compare(real, topology, faults, commands, head: int | None = None,
            settle: float = 0.0) -> list[str]:
    """Run ``commands`` on both backends after ``faults``; the disagreements (status,
    kind, normalised output; with ``head``, its first lines only). ``settle``: seconds to
    wait first, for ``ip_error``'s limiter to refill its burst (5 s at 1 s per error)."""
    pair = EnvPair(1, real)
    try:
        sc = scenario(list(faults), topology)
        pair.sim.reset(options={"scenario": sc})
        pair.real.reset(options={"scenario": sc})
        for name in real.names:
            subprocess.run(["mnexec", "-a", str(real.node_pid(name)), "sysctl", "-q", "-w",
                            "net.ipv4.icmp_ratelimit=0"], check=True)
        time.sleep(settle)
        bad = []
        for machine, line in commands:
            act = {"machine": machine, "command": line}
            oa, *_, ia = pair.sim.step(act)
            ob, *_, ib = pair.real.step(act)
            a, b = normalise(last_output(oa)), normalise(last_output(ob))
            if head is not None:
                a, b = a.splitlines()[:head], b.splitlines()[:head]
            ka = (ia["command_status"], ia["command_kind"])
            kb = (ib["command_status"], ib["command_kind"])
            if (ka, a) != (kb, b):
                bad.append(f"[{machine}] {line}: sim {ka} {a!r} != real {kb} {b!r}")
        return bad
    finally:
        pair.close()


def test_a_router_under_a_prohibit_rule_sends_no_errors(real):
    assert not compare(real, TWO, [DR3], [
        ("h1", "ping -c 1 -W 1 192.168.2.100"), ("h1", "traceroute -n -w 1 192.168.2.100")])


def test_a_routers_own_ping_and_traceroute_errors(real):
    assert not compare(real, TWO, [DR3], [
        ("r0", "ping -c 1 -W 1 192.168.2.100"), ("r0", "traceroute -n 192.168.2.100")])
    assert not compare(real, THREE, [LAN3_DOWN], [
        ("r0", "ip route add unreachable 10.1.0.0/16"), ("r0", "ping -c 1 -W 1 10.1.0.1"),
        ("r0", "traceroute -n 10.1.0.1"), ("r0", "ip route add prohibit 10.3.0.0/16"),
        ("r0", "traceroute -n 10.3.0.1"), ("r0", "ping -c 1 -W 1 10.3.0.1"),
        ("r0", "ip rule add unreachable to 10.5.0.0/16 pref 5"), ("r0", "ping -c 1 -W 1 10.5.0.1")])


def test_errors_go_through_the_routers_output_chain(real):
    assert not compare(real, THREE, [DT1, LAN3_DOWN], [
        ("h1", "traceroute -n -w 1 -m 2 192.168.2.100"), ("h1", "ping -c 1 -W 1 -t 1 192.168.2.100"),
        ("h1", "ping -c 1 -W 1 192.168.3.100"), ("h2", "ping -c 1 -W 1 -t 1 192.168.1.100"),
        ("r0", "iptables -A FORWARD -d 192.168.2.0/24 -j REJECT"),
        ("h1", "ping -c 1 -W 1 192.168.2.100"), ("h3", "ping -c 1 -W 1 192.168.2.100")])


def test_ping_ttl_and_ttl_before_the_forward_chain(real):
    assert not compare(real, THREE, [LAN3_DOWN], [
        ("h1", "ping -c 1 -W 1 -t 1 192.168.2.100"), ("h1", "ping -c 1 -W 1 -t 2 192.168.2.100"),
        ("r0", "iptables -A FORWARD -d 192.168.2.0/24 -j REJECT"),
        ("h1", "ping -c 1 -W 1 192.168.2.100"),
        ("r0", "iptables -A OUTPUT -p icmp --icmp-type destination-unreachable -j DROP"),
        ("h1", "ping -c 1 -W 1 192.168.2.100"), ("h1", "traceroute -n -w 1 -m 2 192.168.2.100")])


def test_traceroute_goes_on_when_the_destinations_answer_is_lost(real):
    # both are killed at the command timeout; the hop they had reached then is timing
    assert not compare(real, THREE, [DI3], [("h1", "traceroute -n 192.168.2.100")], head=5)


def test_iptables_delete_on_an_empty_chain_and_line_numbers(real):
    assert not compare(real, THREE, [LAN3_DOWN], [
        ("r0", "iptables -D FORWARD 1"), ("r0", "iptables -A FORWARD -d 192.168.12.0/24 -j DROP"),
        ("h1", "ping -c 1 -W 1 192.168.2.100"), ("r0", "iptables -L -n -v --line-numbers")])


def test_route_errors_by_errno_and_none_when_not_forwarding(real):
    # the fault keeps the episode open and draws no route error toward h1 or h2; after
    # settling, ip_error's limiter (host-wide, left on) has its burst for these
    lan3_filtered = Fault("drop_traffic_to_from_subnet", 1, "r0", {"subnet": "192.168.3.0/24"})
    assert not compare(real, THREE, [lan3_filtered], [
        ("r0", "ip route add unreachable 10.1.0.0/16"), ("h1", "ping -c 1 -W 1 10.1.0.1"),
        ("h2", "ping -c 1 -W 1 10.9.9.9"), ("r0", "ip route add prohibit 10.3.0.0/16"),
        ("h2", "ping -c 1 -W 1 10.3.0.1"), ("r0", "sysctl -w net.ipv4.ip_forward=0"),
        ("h1", "ping -c 1 -W 1 192.168.2.100"), ("h1", "traceroute -n -w 1 -m 2 192.168.2.100")],
        settle=6.0)


def test_pings_command_line_numbers_and_socket_errors(real):
    # iputils 20221126's parsers (ping_args.py), sizes past a datagram, local errors
    assert not compare(real, THREE, [LAN3_DOWN], [("h1", line) for line in (
        "ping -c 1 -W 1 -t 0 192.168.2.100", "ping -c 1 -W 1 -t 256 192.168.2.100",
        "ping -c 1 -W abc 192.168.2.100", "ping -c 1 -W -1 192.168.2.100",
        "ping -c 1 -W 0 192.168.2.100", "ping -c 1 -w 1.5 192.168.2.100",
        "ping -c 1 -W 1 -c 010 -c 1 192.168.2.100", "ping -c 9223372036854775808 192.168.2.100",
        "ping -c 1 -W 1 -s 65508 192.168.2.100", "ping -c 1 -W 1 -s 65528 192.168.2.100",
        "ping -c 1 -W 1 -s 65508 192.168.1.100", "ping -c 1 -W 1 -s 8 192.168.2.100",
        "ping -c 2 -i 0.2 -W 1 -M do -s 2000 192.168.2.100",
        "ping -q -c 2 -i 0.2 -W 1 -M do -s 2000 192.168.2.100",
        "ping -c 1 -W 1 -x 192.168.2.100", "ping", "ping -c1 -W1 -I 1.2.3.4 192.168.2.100",
        "ping -c 1 -W 1 192.168.2.100 192.168.3.100",
        "ping -c 1 -W 1 -t 0 192.168.2.100 192.168.3.100")])


def test_traceroutes_command_line_first_hop_and_packet_length(real):
    assert not compare(real, THREE, [LAN3_DOWN], [("h1", line) for line in (
        "traceroute -n -w 1 -m 0 192.168.2.100", "traceroute -n -w 1 -q 0 192.168.2.100",
        "traceroute -n -w 0 -m 2 192.168.2.100", "traceroute",
        "traceroute -n -w 1 -m 2.5 192.168.2.100",
        "traceroute -n -w1 -m3 192.168.2.100", "traceroute -nw 1 -m 2 192.168.2.100",
        "traceroute -n -w 1 -m 2 nohost", "traceroute -n -w 1 -m 2 192.168.2.100 60 70",
        "traceroute -n -w 1,2,3 -m 2 192.168.2.100", "traceroute -n -w 1 -f 2 -m 3 192.168.2.100",
        "traceroute -n -w 1 -q 010 -m 0x2 192.168.2.100",
        "traceroute -n -w 1 -m 2 192.168.2.100 27",
        "traceroute -n -w 1 -m 2 192.168.2.100 1400", "traceroute -n --max-hops 2 192.168.2.100",
        "traceroute -n -m 2 -w 1 --icmp 192.168.2.100 100")])


def test_traceroute_to_an_own_address_and_past_an_own_arp_failure(real):
    # an own address answers from itself (its source is that address, not one an OUTPUT
    # rule drops); the sender's own ARP failure shows (!H, ~3 s) only with a wait of 3 s
    assert not compare(real, THREE, [DT1, LAN3_DOWN], [
        ("r0", "traceroute -n -w 1 -m 3 192.168.2.1"),
        ("r0", "traceroute -I -n -w 1 -m 2 192.168.2.1"),
        ("h3", "traceroute -n -w 1 -m 2 192.168.2.100"),
        ("h3", "traceroute -n -q 1 -m 2 192.168.2.100")])


def test_the_senders_own_output_reject(real):
    """A REJECT in the sender's OUTPUT chain: send() fails with EPERM, which traceroute
    reports whatever its probes; ping first reads the REJECT's ICMP error, if its own
    OUTPUT and INPUT chains let it through, then says sendmsg failed; else silent loss."""
    assert not compare(real, THREE, [], [
        ("r0", "iptables -A OUTPUT -p icmp --icmp-type echo-request -j REJECT"),
        ("r0", "ping -c 2 -i 0.2 -W 1 192.168.1.100"), ("r0", "ping -c 1 -W 1 192.168.2.1"),
        ("r0", "ping -q -c 1 -W 1 192.168.1.100"),
        ("r0", "traceroute -n -I -w 1 -q 1 -m 2 192.168.1.100"),
        ("r0", "traceroute -n -w 1 -q 1 -m 2 192.168.1.100"),
        ("r0", "iptables -I OUTPUT -j REJECT"), ("r0", "ping -c 1 -W 1 192.168.1.100"),
        ("r0", "traceroute -n -w 1 -q 1 -m 2 192.168.1.100"),
        ("h1", "iptables -A OUTPUT -d 192.168.3.100 -j REJECT --reject-with icmp-admin-prohibited"),
        ("h1", "ping -c 1 -W 1 192.168.3.100"),
        ("h1", "iptables -A INPUT -p icmp --icmp-type destination-unreachable -j DROP"),
        ("h1", "ping -c 1 -W 1 192.168.3.100"),
        ("h2", "iptables -A OUTPUT -j DROP"), ("h2", "traceroute -n -I -w 1 -q 1 -m 2 192.168.3.100")])


def test_ping_bound_to_a_device(real):
    """``ping -I <interface>``: only routes out of it count (a destination none takes is
    on its link), a device that is down is unreachable, the source is the route's (a
    warning when it is not the device's own) and the header names both."""
    assert not compare(real, THREE, [LAN3_DOWN], [
        ("r0", "ping -c 1 -W 1 -I r0-eth2 192.168.2.100"),
        ("r0", "ping -c 1 -W 1 -I 192.168.2.1 192.168.2.100"),
        ("r0", "ping -c 1 -W 1 -I r0-eth1 192.168.2.100"),
        ("r0", "ping -c 1 -W 1 -I r0-eth1 10.9.9.9"), ("r0", "ping -c 1 -W 1 -I lo 192.168.2.100"),
        ("r0", "ping -c 1 -W 1 -I lo 127.0.0.1"), ("r0", "ping -c 1 -W 1 -I r0-eth3 192.168.3.100"),
        ("r0", "ip addr flush dev r0-eth2"), ("r0", "ping -c 1 -W 1 -I r0-eth2 192.168.2.100"),
        ("h1", "ip addr flush dev h1-eth0"), ("h1", "ping -c 1 -W 1 -I h1-eth0 192.168.1.1")])


def test_traceroute_bound_to_a_device_or_a_source(real):
    """traceroute's ``-i device`` (SO_BINDTODEVICE, as ``ping -I``) and ``-s src_addr``
    (bind()): their errors after the header, and the probes they send."""
    assert not compare(real, THREE, [LAN3_DOWN], [
        ("r0", "traceroute -n -w1 -q1 -m2 -i r0-eth2 192.168.2.100"),
        ("r0", "traceroute -n -w1 -q1 -m2 -i r0-eth1 192.168.2.100"),
        ("r0", "traceroute -n -w1 -q1 -m2 -i r0-eth9 192.168.2.100"),
        ("r0", "traceroute -n -w1 -q1 -m2 -i r0-eth3 192.168.3.100"),
        ("r0", "traceroute -n -w1 -q1 -m2 --source=192.168.1.1 192.168.2.100"),
        ("r0", "traceroute -n -w1 -q1 -m2 -s 10.9.9.9 192.168.2.100"),
        ("r0", "traceroute -n -w1 -q1 -m2 -s bogus 192.168.2.100"),
        ("r0", "traceroute -n -w1 -q1 -m2 -i"),
        ("r0", "traceroute -n -w1 -q1 -m2 -s 192.168.2.1 -ir0-eth1 192.168.2.100"),
        ("h1", "traceroute -n -w1 -q1 -m3 -s 192.168.1.100 192.168.2.100"),
        ("h1", "traceroute -n -I -w1 -q1 -m3 --interface=lo 192.168.2.100"),
        ("h1", "traceroute -n -w1 -q1 -m2 -i lo 127.0.0.1"),
        # the ICMP method makes its one socket before printing the header
        ("r0", "traceroute -n -I -w1 -q1 -m2 -i r0-eth9 192.168.2.100"),
        ("r0", "traceroute -n -I -w1 -q1 -m2 -s 10.9.9.9 192.168.2.100"),
        ("r0", "traceroute -n -I -w1 -q1 -m2 -i r0-eth3 192.168.3.100"),
        ("r0", "traceroute -n -I -w1 -q1 -m2 10.9.9.9"),
        ("r0", "ip route add prohibit 10.3.0.0/16"), ("r0", "traceroute -n -I -w1 -q1 -m2 10.3.0.1"),
        ("r0", "traceroute -n -w1 -q1 -m2 10.3.0.1")])
