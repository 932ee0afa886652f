"""``ping`` and ``traceroute`` (pinned from iputils 20221126 and traceroute 2.1.2 on Mininet,
Linux 6.18): a neighbour that never answers ARP (the kernel reports it only once its ARP
gives up, 3 solicitations 1 s apart), OUTPUT drops, the ICMP errors routers send and the
router's own connect() errors."""
import pytest

from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.shell.parser import ERROR, OK, TIMEOUT

from .conftest import DI3, DR3, DT1, LAN3_DOWN, SMALL, THREE, TWO, scenario

SHORT = ("PING 192.168.1.77 (192.168.1.77) 56(84) bytes of data.\n\n"
         "--- 192.168.1.77 ping statistics ---\n"
         "1 packets transmitted, 0 received, 100% packet loss, time 0ms\n\n")


def run(line):
    b = SimBackend()
    b.apply(scenario([], SMALL))
    return b.run({"machine": "r0", "command": line})


def test_short_wait_sees_no_error():
    res = run("ping -c1 -W1 192.168.1.77")
    assert (res.output, res.status) == (SHORT, 1)


def test_long_wait_sees_the_local_arp_failure():
    res = run("ping -c1 192.168.1.77")
    assert (res.output, res.status) == (
        "PING 192.168.1.77 (192.168.1.77) 56(84) bytes of data.\n"
        "From 192.168.1.1 icmp_seq=1 Destination Host Unreachable\n\n"
        "--- 192.168.1.77 ping statistics ---\n"
        "1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms\n\n", 1)


def lost(ip: str) -> str:
    return (f"PING {ip} ({ip}) 56(84) bytes of data.\n\n--- {ip} ping statistics ---\n"
            "1 packets transmitted, 0 received, 100% packet loss, time 0ms\n\n")


def test_output_drop_is_silent_loss_not_a_sendmsg_error():
    # real (Mininet, Linux 6.18, iputils, raw socket: ping_group_range "1 0"): with
    # "iptables -A OUTPUT -p icmp -d 192.168.2.0/24 -j DROP" (drop_traffic method 3), or
    # "-P OUTPUT DROP", ping of a remote host or of the router's own address prints the
    # 100% loss summary, exit 1, and no "ping: sendmsg: Operation not permitted"
    from netarena_gym.shell.parser import OK
    b = SimBackend()
    b.apply(scenario([], SMALL))
    assert b.run({"machine": "r0", "command": "iptables -A OUTPUT -p icmp -d 192.168.2.0/24 -j DROP"}).status == 0
    for ip in ("192.168.2.1", "192.168.2.100"):
        res = b.run({"machine": "r0", "command": f"ping -c 1 -W 1 {ip}"})
        assert (res.output, res.status, res.kind) == (lost(ip), 1, OK)
    assert b.run({"machine": "r0", "command": "iptables -P OUTPUT DROP"}).status == 0
    for ip in ("192.168.1.1", "192.168.1.100"):
        res = b.run({"machine": "r0", "command": f"ping -c 1 -W 1 {ip}"})
        assert (res.output, res.status, res.kind) == (lost(ip), 1, OK)


def test_traceroute_udp_gets_eperm_from_an_output_drop():
    # real (Mininet, Linux 6.18): UDP probes, send() fails with EPERM, after the header
    from netarena_gym.shell.parser import ERROR
    b = SimBackend()
    b.apply(scenario([], SMALL))
    assert b.run({"machine": "r0", "command": "iptables -A OUTPUT -d 192.168.3.100 -j DROP"}).status == 0
    res = b.run({"machine": "r0", "command": "traceroute -n -w 1 -q 1 -m 2 192.168.3.100"})
    assert (res.output, res.status, res.kind) == (
        "traceroute to 192.168.3.100 (192.168.3.100), 2 hops max, 60 byte packets\n"
        "send: Operation not permitted\n", 1, ERROR)


def test_an_output_reject_shows_its_own_error_then_the_failed_send():
    # real (Mininet, Linux 6.18, iputils 20221126): the REJECT's port unreachable reaches
    # the sender (the rule matches echo requests only), then sendmsg() reports EPERM;
    # traceroute stops on the EPERM, ICMP probes (-I) too
    b = SimBackend()
    b.apply(scenario([], THREE))
    run_ = lambda line: b.run({"machine": "r0", "command": line})  # noqa: E731
    assert run_("iptables -A OUTPUT -p icmp --icmp-type echo-request -j REJECT").status == 0
    res = run_("ping -c 1 -W 1 192.168.1.100")
    assert (res.output, res.status, res.kind) == (
        "PING 192.168.1.100 (192.168.1.100) 56(84) bytes of data.\n"
        "From 192.168.1.1 icmp_seq=1 Destination Port Unreachable\n"
        "ping: sendmsg: Operation not permitted\n\n"
        "--- 192.168.1.100 ping statistics ---\n"
        "1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms\n\n", 1, ERROR)
    res = run_("traceroute -n -I -w 1 -q 1 -m 2 192.168.1.100")
    assert (res.output, res.status) == (
        "traceroute to 192.168.1.100 (192.168.1.100), 2 hops max, 60 byte packets\n"
        "send: Operation not permitted\n", 1)
    # a REJECT of everything rejects its own error too: silent loss
    assert run_("iptables -I OUTPUT -j REJECT").status == 0
    res = run_("ping -c 1 -W 1 192.168.1.100")
    assert (res.output, res.status) == (lost("192.168.1.100"), 1)


def test_ping_bound_to_a_device_takes_the_routes_source():
    # real: -I lo finds no route out of lo, takes 192.168.2.100 as on lo's link (lost)
    # and the source the kernel picks elsewhere; a device that is down is unreachable
    b = SimBackend()
    b.apply(scenario([LAN3_DOWN], THREE))
    res = b.run({"machine": "r0", "command": "ping -c 1 -W 1 -I lo 192.168.2.100"})
    assert (res.output, res.status) == (
        "ping: Warning: source address might be selected on device other than: lo\n"
        "PING 192.168.2.100 (192.168.2.100) from 192.168.1.1 lo: 56(84) bytes of data.\n\n"
        "--- 192.168.2.100 ping statistics ---\n"
        "1 packets transmitted, 0 received, 100% packet loss, time 0ms\n\n", 1)
    res = b.run({"machine": "r0", "command": "ping -c 1 -W 1 -I r0-eth3 192.168.3.100"})
    assert (res.output, res.status) == ("ping: connect: Network is unreachable\n", 2)


def test_traceroute_socket_errors_come_before_the_header_with_icmp_probes():
    # real: traceroute's ICMP method makes its socket (device, bind, connect) before the
    # header, its UDP method one per probe after it; error() starts a line of its own
    b = SimBackend()
    b.apply(scenario([LAN3_DOWN], THREE))
    run_ = lambda line: b.run({"machine": "r0", "command": line})  # noqa: E731
    res = run_("traceroute -n -I -w1 -q1 -m2 -i r0-eth9 192.168.2.100")
    assert (res.output, res.status) == ("\nsetsockopt SO_BINDTODEVICE: No such device\n", 1)
    res = run_("traceroute -n -w1 -q1 -m2 -s 10.9.9.9 192.168.2.100")
    assert (res.output, res.status) == (
        "traceroute to 192.168.2.100 (192.168.2.100), 2 hops max, 60 byte packets\n"
        "bind: Cannot assign requested address\n", 1)
    res = run_("traceroute -n -I -w1 -q1 -m2 10.9.9.9")
    assert (res.output, res.status) == ("\nconnect: Network is unreachable\n", 1)
    res = run_("traceroute -n -w1 -q1 -m2 -i r0-eth1 192.168.2.100")  # no route out of it
    assert (res.output, res.status) == (
        "traceroute to 192.168.2.100 (192.168.2.100), 2 hops max, 60 byte packets\n"
        " 1  *\n 2  *\n", 0)


# --- ICMP errors a router sends, pinned from real Mininet (Linux 6.18, iputils 20221126,
# traceroute 2.1.2, iptables 1.8.9 nf_tables); sim-vs-real: test_mininet_icmp.py


def on(topology, *faults):
    b = SimBackend()
    b.apply(scenario(list(faults), topology))
    return lambda m, line: b.run({"machine": m, "command": line})


def test_a_prohibit_rule_keeps_the_router_from_sending_its_errors():
    # real: the router's lookup for the error's way back hits the rule too: no From line
    run = on(TWO, DR3)
    res = run("h1", "ping -c 1 -W 1 192.168.2.100")
    assert (res.output, res.status) == (lost("192.168.2.100"), 1)
    res = run("h1", "traceroute -n -w 1 192.168.2.100")
    assert (res.output, res.status) == (
        "traceroute to 192.168.2.100 (192.168.2.100), 30 hops max, 60 byte packets\n"
        + "".join(f"{k:2d}  * * *\n" for k in range(1, 31)), 0)


def test_errors_go_through_the_routers_output_chain():
    # DT1 on LAN1: -A OUTPUT -d 192.168.1.0/24 -j DROP drops r0's errors to h1
    run = on(THREE, DT1, LAN3_DOWN)
    res = run("h1", "traceroute -n -w 1 -m 2 192.168.2.100")
    assert res.output.splitlines()[1:] == [
        " 1  * * *", " 2  192.168.2.100  0.120 ms  0.120 ms  0.120 ms"]  # real: its timings
    for line in ("ping -c 1 -W 1 192.168.3.100", "ping -c 1 -W 1 -t 1 192.168.2.100"):
        res = run("h1", line)
        assert (res.output, res.status) == (lost(line.split()[-1]), 1)


def test_ping_ttl_is_sent():
    res = on(THREE, LAN3_DOWN)("h1", "ping -c 1 -W 1 -t 1 192.168.2.100")
    assert (res.output, res.status) == (
        "PING 192.168.2.100 (192.168.2.100) 56(84) bytes of data.\n"
        "From 192.168.1.1 icmp_seq=1 Time to live exceeded\n\n"
        "--- 192.168.2.100 ping statistics ---\n"
        "1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms\n\n", 1)


def test_ttl_is_checked_before_the_forward_chain():
    # real: ip_forward sends time exceeded before the FORWARD hook sees the packet
    run = on(THREE, LAN3_DOWN)
    run("r0", "iptables -A FORWARD -d 192.168.2.0/24 -j REJECT")
    run("r0", "iptables -A OUTPUT -p icmp --icmp-type destination-unreachable -j DROP")
    res = run("h1", "traceroute -n -w 1 -m 2 192.168.2.100")
    assert res.output.splitlines()[1:] == [" 1  192.168.1.1  0.080 ms  0.080 ms  0.080 ms",
                                           " 2  * * *"]


def test_traceroute_goes_on_when_the_destinations_answer_is_lost():
    # DI3: the 88-byte port unreachable exceeds r0-eth2's mtu 68 and is dropped there;
    # real keeps probing ( 3  * * *, ...) until the command is killed
    res = on(THREE, DI3)("h1", "traceroute -n 192.168.2.100")
    lines = res.output.splitlines()
    assert lines[1:4] == [" 1  192.168.1.1  0.080 ms  0.080 ms  0.080 ms", " 2  * * *", " 3  * * *"]
    assert res.status == 124 and res.kind == TIMEOUT


def test_a_routers_own_ping_and_traceroute_under_prohibit_and_unreachable():
    run = on(TWO, DR3)
    res = run("r0", "ping -c 1 -W 1 192.168.2.100")  # iputils' text for connect()'s EACCES
    assert (res.output, res.status, res.kind) == (
        "ping: Do you want to ping broadcast? Then -b. If not, check your local firewall "
        "rules\n", 2, ERROR)
    res = run("r0", "traceroute -n 192.168.2.100")
    assert (res.output, res.status) == (
        "traceroute to 192.168.2.100 (192.168.2.100), 30 hops max, 60 byte packets\n"
        "connect: Permission denied\n", 1)
    run = on(THREE, LAN3_DOWN)
    run("r0", "ip route add unreachable 10.1.0.0/16")
    run("r0", "ip route add prohibit 10.3.0.0/16")
    res = run("r0", "ping -c 1 -W 1 10.1.0.1")  # an unreachable route: EHOSTUNREACH
    assert (res.output, res.status, res.kind) == ("ping: connect: No route to host\n", 2, ERROR)
    res = run("r0", "traceroute -n 10.3.0.1")
    assert (res.output, res.status) == (
        "traceroute to 10.3.0.1 (10.3.0.1), 30 hops max, 60 byte packets\n"
        "connect: Permission denied\n", 1)
    run("r0", "ip rule add unreachable to 10.5.0.0/16 pref 5")  # a rule: ENETUNREACH
    res = run("r0", "ping -c 1 -W 1 10.5.0.1")
    assert (res.output, res.status) == ("ping: connect: Network is unreachable\n", 2)


def test_route_errors_of_a_forwarding_router():
    # real: ip_error answers by the errno; a router whose input device does not forward
    # (ip_forward=0) sends nothing
    def from_line(line):
        return next((ln for ln in line.splitlines() if ln.startswith("From")), None)
    run = on(THREE, DT1)
    run("r0", "ip route add unreachable 10.1.0.0/16")
    res = run("h2", "ping -c 1 -W 1 10.1.0.1")
    assert from_line(res.output) == "From 192.168.2.1 icmp_seq=1 Destination Host Unreachable"
    res = run("h2", "ping -c 1 -W 1 10.9.9.9")
    assert from_line(res.output) == "From 192.168.2.1 icmp_seq=1 Destination Net Unreachable"
    run("r0", "sysctl -w net.ipv4.ip_forward=0")
    res = run("h2", "ping -c 1 -W 1 192.168.3.100")
    assert (res.output, res.status) == (lost("192.168.3.100"), 1)
    res = run("h2", "traceroute -n -w 1 -m 2 192.168.3.100")
    assert res.output.splitlines()[1:] == [" 1  * * *", " 2  * * *"]


def h1(line: str, *faults, topology=THREE):
    b = SimBackend()
    b.apply(scenario(list(faults) or [LAN3_DOWN], topology))
    return b.run({"machine": "h1", "command": line})


def test_a_packet_too_big_to_send_is_a_local_error_per_packet():
    # real (Mininet, iputils 20221126): after the header, counted as errors; -q hides both
    head = "PING 192.168.2.100 (192.168.2.100) 2000(2028) bytes of data.\n"
    err = "ping: local error: message too long, mtu=1500\n"
    res = h1("ping -c 2 -i 0.2 -W 1 -M do -s 2000 192.168.2.100")
    assert (res.output, res.status, res.kind) == (
        head + err + err + "\n--- 192.168.2.100 ping statistics ---\n"
        "2 packets transmitted, 0 received, +2 errors, 100% packet loss, time 200ms\n\n", 1, ERROR)
    res = h1("ping -q -c 2 -i 0.2 -W 1 -M do -s 2000 192.168.2.100")
    assert (res.output, res.status, res.kind) == (
        head + "\n--- 192.168.2.100 ping statistics ---\n"
        "2 packets transmitted, 0 received, 100% packet loss, time 200ms\n\n", 1, OK)


@pytest.mark.parametrize("line, output, status, kind", [
    # 65,508-65,527 data bytes: EMSGSIZE with the route's MTU (lo's, capped at 65535, for an
    # own address); from 65,528 the send is taken and nothing leaves
    ("ping -c 1 -W 1 -s 65508 192.168.1.100",
     "PING 192.168.1.100 (192.168.1.100) 65508(65536) bytes of data.\n"
     "ping: local error: message too long, mtu=65535\n\n"
     "--- 192.168.1.100 ping statistics ---\n"
     "1 packets transmitted, 0 received, +1 errors, 100% packet loss, time 0ms\n\n", 1, ERROR),
    ("ping -c 1 -W 1 -s 65528 192.168.2.100",
     "PING 192.168.2.100 (192.168.2.100) 65528(65556) bytes of data.\n\n"
     "--- 192.168.2.100 ping statistics ---\n"
     "1 packets transmitted, 0 received, 100% packet loss, time 0ms\n\n", 1, OK),
    # a payload under a timestamp: no round-trip time
    ("ping -c 1 -W 1 -s 8 192.168.2.100",
     "PING 192.168.2.100 (192.168.2.100) 8(36) bytes of data.\n"
     "16 bytes from 192.168.2.100: icmp_seq=1 ttl=63\n\n"
     "--- 192.168.2.100 ping statistics ---\n"
     "1 packets transmitted, 1 received, 0% packet loss, time 0ms\n\n", 0, OK),
])
def test_payloads_past_one_datagram_or_under_a_timestamp(line, output, status, kind):
    res = h1(line)
    assert (res.output, res.status, res.kind) == (output, status, kind)


def test_socket_errors_come_in_iputils_order():
    # bind (-I), then connect() to the first host, then the source route, then the TTL
    assert h1("ping -c 1 -t 0 -I 1.2.3.4 192.168.2.100").output == (
        "ping: bind: Cannot assign requested address\n")
    assert h1("ping -c 1 -t 0 192.168.2.100 192.168.3.100").output == (
        "ping: record route: Operation not permitted\n")
    res = h1("ping -c 1 -W 1 -t 0 192.168.2.100")
    assert (res.output, res.status, res.kind) == (
        "ping: cannot set unicast time-to-live: Invalid argument\n", 2, ERROR)
    b = SimBackend()
    b.apply(scenario([], TWO))
    assert b.run({"machine": "r0", "command": "ip route add unreachable 10.1.0.0/16"}).status == 0
    assert b.run({"machine": "r0", "command": "ping -t 0 10.1.0.1"}).output == (
        "ping: connect: No route to host\n")


def test_a_zero_wait_waits_for_ever():
    assert h1("ping -c 1 -W 0 192.168.2.100").status == 0  # the reply still counts
    res = h1("ping -c 1 -W 0 192.168.2.100", DR3, topology=TWO)  # silence: killed
    assert (res.status, res.kind) == (124, TIMEOUT)
    assert h1("ping -c 1 -W 1 192.168.2.100", DR3, topology=TWO).status == 1


def test_garbage_warnings_come_before_the_header():
    res = h1("ping -c 1 -W 1x 192.168.2.100")
    assert res.output.startswith("ping: option argument contains garbage: x\n"
                                 "ping: this will become fatal error in the future\n"
                                 "PING 192.168.2.100 (192.168.2.100) 56(84) bytes of data.\n")
    assert (res.status, res.kind) == (0, OK)


def test_traceroute_to_an_own_address_answers_from_it():
    # real: r0's probe to its own address carries that address as source, so an OUTPUT
    # rule dropping another subnet's traffic does not touch the answer
    b = SimBackend()
    b.apply(scenario([DT1, LAN3_DOWN], THREE))
    res = b.run({"machine": "r0", "command": "traceroute -n -w 1 -m 3 192.168.2.1"})
    assert res.output == ("traceroute to 192.168.2.1 (192.168.2.1), 3 hops max, 60 byte packets\n"
                          " 1  192.168.2.1  0.060 ms  0.060 ms  0.060 ms\n")


def test_traceroute_sees_its_own_arp_failure_only_with_a_wait_of_3_s():
    b = SimBackend()
    b.apply(scenario([LAN3_DOWN], THREE))  # h3's gateway is down
    head = "traceroute to 192.168.2.100 (192.168.2.100), 2 hops max, 60 byte packets\n"
    assert b.run({"machine": "h3", "command": "traceroute -n -q 1 -m 2 192.168.2.100"}).output == (
        head + " 1  192.168.3.100  3000.060 ms !H\n")
    assert b.run({"machine": "h3", "command": "traceroute -n -w 1 -m 2 192.168.2.100"}).output == (
        head + " 1  * * *\n 2  * * *\n")
