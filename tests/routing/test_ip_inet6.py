"""``ip -6`` in the simulator: the IPv6 view of a node as a Mininet node shows it after
the backend's baseline (real iproute2 6.1 on Linux 6.18 in the backend's nodes, and on
veths with IPv6 disabled, pinned verbatim)."""
import shlex

import pytest

from netarena_gym.shell.parser import ERROR, INVALID, OK
from netarena_gym.routing.commands import REGISTRY, CommandContext
from netarena_gym.routing.commands import ip as ipmod  # noqa: F401  (registers "ip")
from netarena_gym.routing.topology import TopologySpec, build_network

SPEC = TopologySpec(hosts=((1, 2), (1,)), parents=(0,))

LO_HEAD = "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default qlen 1000\n"
LO6 = ("    inet6 ::1/128 scope host \n"
       "       valid_lft forever preferred_lft forever\n")


@pytest.fixture
def net():
    return build_network(SPEC)[0]


def run(net, node, line):
    res = REGISTRY["ip"](CommandContext(net, net.nodes[node]), shlex.split(line), "")
    return res.output, res.status, res.kind


@pytest.mark.parametrize("node", ["h1", "r0"])
def test_listings_of_the_baseline(net, node):
    # a family-filtered dump prints lo's header without qdisc and group
    dump = ("1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 state UNKNOWN qlen 1000\n" + LO6, 0, OK)
    assert run(net, node, "ip -6 addr") == dump
    assert run(net, node, "ip -6 a") == dump
    assert run(net, node, "ip -6 addr show lo") == (LO_HEAD + LO6, 0, OK)
    assert run(net, node, "ip -6 a show dev lo") == (LO_HEAD + LO6, 0, OK)
    assert run(net, node, f"ip -6 addr show dev {node}-eth{0 if node == 'h1' else 1}") == (
        "", 0, OK)
    assert run(net, node, "ip -6 -br addr") == ("lo               UNKNOWN        ::1/128 \n", 0, OK)
    assert run(net, node, "ip -6 -o a show lo") == (
        "1: lo    inet6 ::1/128 scope host \\       valid_lft forever preferred_lft forever\n",
        0, OK)
    for line in ("ip -6 route", "ip -6 r", "ip -6 route show", "ip -6 route list",
                 "ip -6 neigh", "ip -6 n", "ip -6 neigh flush all", "ip -4 -6 route"):
        assert run(net, node, line) == ("", 0, OK), line
    rules = ("0:\tfrom all lookup local\n32766:\tfrom all lookup main\n", 0, OK)
    assert run(net, node, "ip -6 rule") == rules
    assert run(net, node, "ip -6 ru") == rules
    assert run(net, node, "ip -6 rule list") == rules


def test_link_ignores_the_family(net):
    assert run(net, "h1", "ip -6 link") == run(net, "h1", "ip link")
    assert run(net, "h1", "ip -6 -br link") == run(net, "h1", "ip -br link")
    assert run(net, "h1", "ip -6 link set h1-eth0 down") == ("", 0, OK)
    assert "state DOWN" in run(net, "h1", "ip link show h1-eth0")[0]


def test_route_get_and_failures(net):
    assert run(net, "r0", "ip -6 route get ::1") == (
        "local ::1 from :: dev lo table local proto kernel src ::1 metric 0 pref medium\n", 0, OK)
    assert run(net, "r0", "ip -6 route get to ::1") == run(net, "r0", "ip -6 route get ::1")
    for dst in ("2001:db8::1", "fe80::1", "::"):
        assert run(net, "h1", f"ip -6 route get {dst}") == (
            "RTNETLINK answers: Network is unreachable\n", 2, ERROR)
    assert run(net, "h1", "ip -6 route get") == ("need at least a destination address\n", 1,
                                                 ERROR)
    assert run(net, "h1", "ip -6 route get 192.168.1.1") == (
        'Error: inet6 prefix is expected rather than "192.168.1.1".\n', 1, INVALID)
    assert run(net, "h1", "ip -6 route add 192.168.5.0/24 dev h1-eth0") == (
        'Error: inet6 prefix is expected rather than "192.168.5.0/24".\n', 1, INVALID)
    assert run(net, "h1", "ip -6 addr add 192.168.1.5/24 dev h1-eth0") == (
        'Error: inet6 prefix is expected rather than "192.168.1.5/24".\n', 1, INVALID)
    assert run(net, "h1", "ip -6 neigh add 192.168.1.5 lladdr 02:00:00:00:00:01 dev h1-eth0") == (
        'Error: inet6 address is expected rather than "192.168.1.5".\n', 1, INVALID)
    assert run(net, "h1", "ip -6 route del 2001:db8::/64") == (
        "RTNETLINK answers: No such process\n", 2, ERROR)
    assert run(net, "h1", "ip -6 addr del 2001:db8::1/64 dev h1-eth0") == (
        "Error: ipv6: address not found.\n", 2, ERROR)
    assert run(net, "h1", "ip -6 route foo") == (
        'Command "foo" is unknown, try "ip route help".\n', 255, INVALID)


# real iproute2 6.1 / Linux 6.18 on a veth with net.ipv6.conf.<dev>.disable_ipv6=1
REFUSED = [
    ("ip -6 addr add 2001:db8::1/64 dev h1-eth0",
     "Error: ipv6: IPv6 is disabled on this device.\n", 2, ERROR),
    ("ip -6 addr change 2001:db8::1/64 dev h1-eth0",
     "Error: ipv6: IPv6 is disabled on this device.\n", 2, ERROR),
    ("ip -6 addr replace 2001:db8::1/64 dev h1-eth0",
     "Error: ipv6: IPv6 is disabled on this device.\n", 2, ERROR),
    ("ip -6 addr add 2001:db8::1/64 dev nosuch", 'Cannot find device "nosuch"\n', 1, ERROR),
    ("ip -6 addr add 2001:db8::1/64",
     'Not enough information: "dev" argument is required.\n', 1, INVALID),
    ("ip -6 route del 2001:db8::/64 dev h1-eth0", "RTNETLINK answers: No such process\n", 2,
     ERROR),
    ("ip -6 route add 2001:db8::/64 via fe80::1", "Error: Egress device not specified.\n", 2,
     ERROR),
    ("ip -6 route add 2001:db8::/64 via 2001:db8::2", "RTNETLINK answers: No route to host\n",
     2, ERROR),
    ("ip -6 route add 2001:db8::/64 dev h1-eth0",
     "Error: IPv6 is disabled on nexthop device.\n", 2, ERROR),
    ("ip -6 route replace 2001:db8::/64 dev h1-eth0",
     "Error: IPv6 is disabled on nexthop device.\n", 2, ERROR),
    ("ip -6 route add ::/0 via fe80::1 dev h1-eth0",
     "Error: IPv6 is disabled on nexthop device.\n", 2, ERROR),
    ("ip -6 route add default dev h1-eth0",
     "Error: IPv6 is disabled on nexthop device.\n", 2, ERROR),
    ("ip -6 route add 2001:db8::/64 dev nosuch", 'Cannot find device "nosuch"\n', 1, ERROR),
    ("ip -6 neigh add fe80::5 lladdr 02:00:00:00:00:01 dev h1-eth0",
     "Error: IPv6 is disabled on this device.\n", 2, ERROR),
    ("ip -6 neigh del fe80::5 dev h1-eth0", "RTNETLINK answers: No such file or directory\n",
     2, ERROR),
    ("ip -6 route show table local", "local ::1 dev lo proto kernel metric 0 pref medium\n", 0,
     OK),
    ("ip -6 route show table all",
     "local ::1 dev lo table local proto kernel metric 0 pref medium\n", 0, OK),
    ("ip -6 route show table main", "", 0, OK),
    ("ip -6 route flush all", "", 0, OK),
    ("ip -6 route flush table main", "", 0, OK),
    ("ip -6 addr flush dev h1-eth0", "", 0, OK),
    ("ip -6 neigh flush dev h1-eth0", "", 0, OK),
]


@pytest.mark.parametrize("line,output,status,kind", REFUSED)
def test_ipv6_is_off_on_the_veths(net, line, output, status, kind):
    assert run(net, "h1", line) == (output, status, kind)


def test_changes_that_would_succeed_are_not_modelled(net):
    for line in ("ip -6 addr add 2001:db8::1/64 dev lo", "ip -6 addr del ::1/128 dev lo",
                 "ip -6 route add 2001:db8::/64 dev lo", "ip -6 rule add from all lookup 100",
                 "ip -6 route show proto kernel", "ip -6 -j rule"):
        out, status, kind = run(net, "h1", line)
        assert out.startswith("netarena: ") and (status, kind) == (1, INVALID), line
    ok = run(net, "h1", "ip link set lo down")
    assert ok[1] == 0
    assert run(net, "h1", "ip -6 addr")[0] == (
        'netarena: "ip -6" with lo down or its MTU under 1280 is not supported by the simulator\n')


def test_json_listings(net):
    assert run(net, "h1", "ip -6 -j route") == ("[]\n", 0, OK)
    assert run(net, "h1", "ip -6 -j addr") == (
        '[{"ifindex":1,"ifname":"lo","flags":["LOOPBACK","UP","LOWER_UP"],"mtu":65536,'
        '"operstate":"UNKNOWN","txqlen":1000,"addr_info":[{"family":"inet6","local":"::1",'
        '"prefixlen":128,"scope":"host","valid_life_time":4294967295,'
        '"preferred_life_time":4294967295}]}]\n', 0, OK)


def test_family_options(net):
    assert run(net, "h1", "ip -family inet6 rule") == run(net, "h1", "ip -6 rule")
    assert run(net, "h1", "ip -6 -4 route")[0].startswith("default via 192.168.1.1")
    assert run(net, "h1", "ip -f link route")[0] == (
        'netarena: "-family link" is not supported by the simulator\n')
