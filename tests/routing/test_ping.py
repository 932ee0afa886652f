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
