"""``ping`` toward a neighbour that never answers ARP (pinned from iputils on Linux 6.18):
the kernel reports it only once its ARP gives up (3 solicitations, 1 s apart)."""
from netarena_gym.routing.backends.sim import SimBackend

from .conftest import SMALL, scenario

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
