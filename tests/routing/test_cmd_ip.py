"""``ip`` (iproute2 6.1) in the simulator: exact output, kernel semantics of every change,
error wording, exit statuses and outcome kinds."""
import shlex

import pytest

from netarena_gym.shell.parser import ERROR, INVALID, OK
from netarena_gym.routing.commands import REGISTRY, CommandContext
from netarena_gym.routing.commands import ip as ipmod  # noqa: F401  (registers "ip")
from netarena_gym.routing.state import Qdisc
from netarena_gym.routing.topology import TopologySpec, build_network

# r0: eth1 -> s1 (h1), eth2 -> s2 (h2, h3), eth3 -> transit to r1 (172.16.0.0/30)
# r1: eth1 -> s3 (h4), eth2 -> transit
SPEC = TopologySpec(hosts=((1, 2), (1,)), parents=(0,))


@pytest.fixture
def net():
    return build_network(SPEC)[0]


def run(net, node, line):
    return REGISTRY["ip"](CommandContext(net, net.nodes[node]), shlex.split(line), "")


def ok(net, node, line):
    res = run(net, node, line)
    assert (res.status, res.kind) == (0, OK), res.output
    return res.output


def fails(net, node, line, output, status, kind):
    res = run(net, node, line)
    assert res.output == output
    assert (res.status, res.kind) == (status, kind)


R0_ROUTES = (
    "172.16.0.0/30 dev r0-eth3 proto kernel scope link src 172.16.0.1 \n"
    "192.168.1.0/24 dev r0-eth1 proto kernel scope link src 192.168.1.1 \n"
    "192.168.2.0/24 dev r0-eth2 proto kernel scope link src 192.168.2.1 \n"
    "192.168.3.0/24 via 172.16.0.2 dev r0-eth3 \n")

R0_ETH1_ADDR = (
    "2: r0-eth1@if100: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP "
    "group default qlen 1000\n"
    "    link/ether 02:00:00:00:01:01 brd ff:ff:ff:ff:ff:ff link-netnsid 0\n"
    "    inet 192.168.1.1/24 brd 192.168.1.255 scope global r0-eth1\n"
    "       valid_lft forever preferred_lft forever\n")


# ------------------------------------------------------------------------- addresses
def test_addr_show_whole_node(net):
    out = ok(net, "r0", "ip addr show")
    assert out.startswith(
        "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN group default "
        "qlen 1000\n"
        "    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n"
        "    inet 127.0.0.1/8 scope host lo\n"
        "       valid_lft forever preferred_lft forever\n" + R0_ETH1_ADDR)
    assert "3: r0-eth2@if101: " in out and "4: r0-eth3@if102: " in out
    assert "inet 172.16.0.1/30 brd 172.16.0.3 scope global r0-eth3\n" in out
    assert "alias" not in out  # iproute2 prints aliases with ip link or -details only


def test_addr_show_abbreviations_and_dev_filter(net):
    assert ok(net, "r0", "ip a s dev r0-eth1") == R0_ETH1_ADDR
    assert ok(net, "r0", "ip address list r0-eth1") == R0_ETH1_ADDR
    assert ok(net, "r0", "ip addr ls r0-eth1") == R0_ETH1_ADDR


def test_addr_show_details_prints_alias(net):
    out = ok(net, "r0", "ip -d addr show r0-eth1")
    assert "\n    alias LAN s1 192.168.1.1/24\n    inet 192.168.1.1/24" in out


def test_addr_show_family_brief_oneline(net):
    out = ok(net, "h1", "ip -4 addr show h1-eth0")
    assert out == ("2: h1-eth0@if105: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue "
                   "state UP group default qlen 1000 link-netnsid 0\n"
                   "    inet 192.168.1.100/24 brd 192.168.1.255 scope global h1-eth0\n"
                   "       valid_lft forever preferred_lft forever\n")
    assert ok(net, "h1", "ip -br a") == ("lo               UNKNOWN        127.0.0.1/8 \n"
                                        "h1-eth0@if105    UP             192.168.1.100/24 \n")
    assert ok(net, "h1", "ip -o a show h1-eth0") == (
        "2: h1-eth0    inet 192.168.1.100/24 brd 192.168.1.255 scope global h1-eth0\\"
        "       valid_lft forever preferred_lft forever\n")


def test_addr_show_down_promisc_qdisc(net):
    ok(net, "r0", "ip link set r0-eth1 down promisc on")
    net.nodes["r0"].interfaces["r0-eth2"].qdisc = Qdisc("netem")
    out = ok(net, "r0", "ip addr show r0-eth1")
    assert out.startswith("2: r0-eth1@if100: <BROADCAST,MULTICAST,PROMISC> mtu 1500 qdisc "
                          "noqueue state DOWN group default qlen 1000\n")
    assert " qdisc netem state UP " in ok(net, "r0", "ip addr show r0-eth2")


def test_addr_show_up_filter_and_unknown_device(net):
    ok(net, "r0", "ip link set r0-eth2 down")
    assert "r0-eth2" not in ok(net, "r0", "ip addr show up")
    fails(net, "r0", "ip addr show eth9", 'Device "eth9" does not exist.\n', 1, ERROR)


def test_addr_add_without_brd_and_secondary(net):
    ok(net, "r0", "ip addr add 10.0.0.1/24 dev r0-eth1")
    ok(net, "r0", "ip addr add 10.0.0.2/24 dev r0-eth1 brd +")
    ok(net, "r0", "ip addr add 192.168.1.7/24 dev r0-eth1")
    out = ok(net, "r0", "ip addr show r0-eth1")
    assert out.endswith(
        "    inet 192.168.1.1/24 brd 192.168.1.255 scope global r0-eth1\n"
        "       valid_lft forever preferred_lft forever\n"
        "    inet 10.0.0.1/24 scope global r0-eth1\n"
        "       valid_lft forever preferred_lft forever\n"
        "    inet 10.0.0.2/24 brd 10.0.0.255 scope global secondary r0-eth1\n"
        "       valid_lft forever preferred_lft forever\n"
        "    inet 192.168.1.7/24 scope global secondary r0-eth1\n"
        "       valid_lft forever preferred_lft forever\n")
    assert "10.0.0.0/24 dev r0-eth1 proto kernel scope link src 10.0.0.1 \n" in ok(
        net, "r0", "ip route")


def test_addr_add_existing_and_replace(net):
    # Linux 6.18 (Mininet): the extack of inet_rtm_newaddr, not __inet_insert_ifa's bare EEXIST
    fails(net, "r0", "ip addr add 192.168.1.1/24 dev r0-eth1",
          "Error: ipv4: Address already assigned.\n", 2, ERROR)
    ok(net, "r0", "ip addr replace 192.168.1.1/24 dev r0-eth1")
    ok(net, "r0", "ip addr change 192.168.1.1/24 dev r0-eth1")
    assert ok(net, "r0", "ip addr show r0-eth1") == R0_ETH1_ADDR


def test_addr_label_and_usage_errors(net):
    ok(net, "r0", "ip addr add 10.0.0.1/24 dev r0-eth1 label r0-eth1:1")
    assert "scope global r0-eth1:1\n" in ok(net, "r0", "ip addr show r0-eth1")
    fails(net, "r0", "ip addr add 10.0.0.9/24 dev r0-eth1 label eth0:1",
          '"label" (eth0:1) must match "dev" (r0-eth1) or be prefixed by "dev" with a colon.\n',
          1, INVALID)
    fails(net, "r0", "ip addr add 10.0.0.9/24",
          'Not enough information: "dev" argument is required.\n', 1, INVALID)
    fails(net, "r0", "ip addr add 10.0.0.9/24 dev eth9", 'Cannot find device "eth9"\n', 1,
          ERROR)
    fails(net, "r0", "ip addr add 10.0.0.300/24 dev r0-eth1",
          'Error: any valid prefix is expected rather than "10.0.0.300/24".\n', 1, INVALID)
    fails(net, "r0", "ip -4 addr add foo dev r0-eth1",
          'Error: inet prefix is expected rather than "foo".\n', 1, INVALID)
    fails(net, "r0", "ip addr add 10.0.0.9/24 10.0.0.8/24 dev r0-eth1",
          'Error: either "local" is duplicate, or "10.0.0.8/24" is a garbage.\n', 255, INVALID)
    fails(net, "r0", "ip addr frob", 'Command "frob" is unknown, try "ip address help".\n',
          255, INVALID)


def test_addr_del_primary_takes_secondaries(net):
    ok(net, "r0", "ip addr add 192.168.1.7/24 dev r0-eth1")
    ok(net, "r0", "ip addr del 192.168.1.1/24 dev r0-eth1")
    out = ok(net, "r0", "ip addr show r0-eth1")
    assert "inet " not in out
    assert "192.168.1.0/24" not in ok(net, "r0", "ip route")
    fails(net, "r0", "ip addr del 192.168.1.1/24 dev r0-eth1",
          "Error: ipv4: Address not found.\n", 2, ERROR)


def test_addr_del_without_prefix_length_warns(net):
    out = ok(net, "r0", "ip addr del 192.168.2.1 dev r0-eth2")
    assert out.startswith("Warning: Executing wildcard deletion to stay compatible with old "
                          "scripts.\n         Explicitly specify the prefix length "
                          "(192.168.2.1/32) to avoid this warning.\n")
    assert "inet " not in ok(net, "r0", "ip addr show r0-eth2")


def test_addr_flush_removes_connected_and_dependent_routes(net):
    ok(net, "r0", "ip route add 10.0.0.0/8 via 192.168.1.100")
    ok(net, "r0", "ip addr flush dev r0-eth1")
    routes = ok(net, "r0", "ip route")
    assert "192.168.1.0/24" not in routes and "10.0.0.0/8" not in routes
    assert "inet " not in ok(net, "r0", "ip addr show r0-eth1")
    fails(net, "r0", "ip addr flush", "Flush requires arguments.\n", 1, INVALID)


# ------------------------------------------------------------------------------- link
def test_link_show(net):
    out = ok(net, "r0", "ip link show r0-eth3")
    assert out == ("4: r0-eth3@if102: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue "
                   "state UP mode DEFAULT group default qlen 1000\n"
                   "    link/ether 02:00:00:00:01:03 brd ff:ff:ff:ff:ff:ff link-netnsid 0\n"
                   "    alias TRANSIT r1 172.16.0.1/30\n")
    assert ok(net, "r0", "ip l").startswith(
        "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT "
        "group default qlen 1000\n    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00\n")
    assert ok(net, "r0", "ip -br link show dev r0-eth1") == (
        "r0-eth1@if100    UP             02:00:00:00:01:01 <BROADCAST,MULTICAST,UP,LOWER_UP> \n")
    assert ok(net, "r0", "ip -o link show r0-eth1").count("\\") == 2


def test_link_set_several_settings(net):
    ok(net, "r0", 'ip link set dev r0-eth1 mtu 1400 promisc on alias "uplink to s1" arp off')
    itf = net.nodes["r0"].interfaces["r0-eth1"]
    assert (itf.mtu, itf.promisc, itf.alias) == (1400, True, "uplink to s1")
    out = ok(net, "r0", "ip link show r0-eth1")
    assert "<BROADCAST,MULTICAST,NOARP,PROMISC,UP,LOWER_UP> mtu 1400 " in out
    assert out.endswith("    alias uplink to s1\n")


def test_link_down_flushes_routes_and_up_does_not_restore_static(net):
    ok(net, "r0", "ip route add 10.0.0.0/8 via 172.16.0.2")
    ok(net, "r0", "ip link set r0-eth3 down")
    out = ok(net, "r0", "ip link show r0-eth3")
    assert out.startswith("4: r0-eth3@if102: <BROADCAST,MULTICAST> mtu 1500 qdisc noqueue "
                          "state DOWN mode DEFAULT")
    assert "r0-eth3" not in ok(net, "r0", "ip route")
    ok(net, "r0", "ip link set r0-eth3 up")
    assert ok(net, "r0", "ip route") == (
        "172.16.0.0/30 dev r0-eth3 proto kernel scope link src 172.16.0.1 \n"
        "192.168.1.0/24 dev r0-eth1 proto kernel scope link src 192.168.1.1 \n"
        "192.168.2.0/24 dev r0-eth2 proto kernel scope link src 192.168.2.1 \n")


def test_link_errors(net):
    fails(net, "r0", "ip link set eth9 up", 'Cannot find device "eth9"\n', 1, ERROR)
    fails(net, "r0", "ip link set r0-eth1 mtu 60", "Error: mtu less than device minimum.\n", 2,
          ERROR)
    fails(net, "r0", "ip link set r0-eth1 mtu 70000",
          "Error: mtu greater than device maximum.\n", 2, ERROR)
    fails(net, "r0", "ip link set r0-eth1 mtu abc",
          'Error: argument "abc" is wrong: Invalid "mtu" value\n\n', 255, INVALID)
    fails(net, "r0", "ip link set r0-eth1 bogus",
          'Error: either "dev" is duplicate, or "bogus" is a garbage.\n', 255, INVALID)
    fails(net, "r0", "ip link set r0-eth1 promisc maybe",
          'Error: argument of "promisc" must be "on" or "off", not "maybe"\n', 1, INVALID)
    fails(net, "r0", "ip link set r0-eth1 mtu",
          'Command line is not complete. Try option "help"\n', 255, INVALID)
    assert run(net, "r0", "ip link add foo type dummy").kind == INVALID
    assert net.nodes["r0"].interfaces["r0-eth1"].mtu == 1500


# ----------------------------------------------------------------------------- routes
def test_route_show(net):
    assert ok(net, "r0", "ip route") == R0_ROUTES
    assert ok(net, "r0", "ip r show table main") == R0_ROUTES
    assert ok(net, "h1", "ip ro") == (
        "default via 192.168.1.1 dev h1-eth0 \n"
        "192.168.1.0/24 dev h1-eth0 proto kernel scope link src 192.168.1.100 \n")
    assert ok(net, "r0", "ip route show dev r0-eth1") == (
        "192.168.1.0/24 proto kernel scope link src 192.168.1.1 \n")
    to_s3 = "192.168.3.0/24 via 172.16.0.2 dev r0-eth3 \n"
    assert ok(net, "r0", "ip route show 192.168.3.0/24") == to_s3
    assert ok(net, "r0", "ip route show match 192.168.3.7") == to_s3
    assert ok(net, "r0", "ip route show 192.168.3.7") == ""
    assert ok(net, "r0", "ip route show proto kernel").count("\n") == 3


def test_route_show_local_and_all_tables(net):
    local = ok(net, "h1", "ip route show table local")
    assert local == (
        "local 127.0.0.0/8 dev lo proto kernel scope host src 127.0.0.1 \n"
        "local 127.0.0.1 dev lo proto kernel scope host src 127.0.0.1 \n"
        "broadcast 127.255.255.255 dev lo proto kernel scope link src 127.0.0.1 \n"
        "local 192.168.1.100 dev h1-eth0 proto kernel scope host src 192.168.1.100 \n"
        "broadcast 192.168.1.255 dev h1-eth0 proto kernel scope link src 192.168.1.100 \n")
    every = ok(net, "h1", "ip route show table all")
    assert every.startswith("default via 192.168.1.1 dev h1-eth0 \n")
    assert "local 192.168.1.100 dev h1-eth0 table local proto kernel scope host src " \
           "192.168.1.100 \n" in every
    fails(net, "h1", "ip route show table 100",
          "Error: ipv4: FIB table does not exist.\nDump terminated\n", 2, ERROR)


def test_route_types_and_metric_printing(net):
    ok(net, "r0", "ip route add blackhole 192.168.2.100")
    ok(net, "r0", "ip route add prohibit 10.0.0.0/8")
    ok(net, "r0", "ip route add unreachable 10.1.0.0/16 metric 20 proto static")
    ok(net, "r0", "ip route add 10.2.0.0/16 dev r0-eth1 metric 7")
    out = ok(net, "r0", "ip route")
    assert out.startswith("prohibit 10.0.0.0/8 \n"
                          "unreachable 10.1.0.0/16 proto static metric 20 \n"
                          "10.2.0.0/16 dev r0-eth1 scope link metric 7 \n")
    assert "blackhole 192.168.2.100 \n" in out
    fails(net, "r0", "ip route add blackhole 10.3.0.0/16 dev r0-eth1",
          "Error: Gateway, device and multipath can not be specified for this route type.\n",
          2, ERROR)


def test_route_add_exists_regardless_of_nexthop_and_append(net):
    ok(net, "r0", "ip route add 10.0.0.0/8 via 172.16.0.2")
    fails(net, "r0", "ip route add 10.0.0.0/8 via 192.168.1.100",
          "RTNETLINK answers: File exists\n", 2, ERROR)
    ok(net, "r0", "ip route add 10.0.0.0/8 via 192.168.1.100 metric 5")
    ok(net, "r0", "ip route append 10.0.0.0/8 via 192.168.2.100")
    fails(net, "r0", "ip route append 10.0.0.0/8 via 192.168.2.100",
          "RTNETLINK answers: File exists\n", 2, ERROR)
    assert ok(net, "r0", "ip route show 10.0.0.0/8") == (
        "10.0.0.0/8 via 172.16.0.2 dev r0-eth3 \n"
        "10.0.0.0/8 via 192.168.2.100 dev r0-eth2 \n"
        "10.0.0.0/8 via 192.168.1.100 dev r0-eth1 metric 5 \n")


def test_route_replace_change_prepend(net):
    ok(net, "r0", "ip route replace 10.0.0.0/8 via 172.16.0.2")  # adds
    ok(net, "r0", "ip route append 10.0.0.0/8 via 192.168.2.100")
    ok(net, "r0", "ip route replace 10.0.0.0/8 via 192.168.1.100")  # rewrites the first
    assert ok(net, "r0", "ip route show 10.0.0.0/8") == (
        "10.0.0.0/8 via 192.168.1.100 dev r0-eth1 \n"
        "10.0.0.0/8 via 192.168.2.100 dev r0-eth2 \n")
    fails(net, "r0", "ip route change 10.9.0.0/16 via 192.168.1.100",
          "RTNETLINK answers: No such file or directory\n", 2, ERROR)
    ok(net, "r0", "ip route prepend 10.0.0.0/8 via 172.16.0.2")
    assert ok(net, "r0", "ip route show 10.0.0.0/8").startswith(
        "10.0.0.0/8 via 172.16.0.2 dev r0-eth3 \n")


def test_route_del_selectors_and_first_match(net):
    ok(net, "r0", "ip route add 10.0.0.0/8 via 172.16.0.2")
    ok(net, "r0", "ip route append 10.0.0.0/8 via 192.168.1.100")
    ok(net, "r0", "ip route add 10.0.0.0/8 via 192.168.2.100 metric 9")
    ok(net, "r0", "ip route del 10.0.0.0/8 via 192.168.1.100")
    assert ok(net, "r0", "ip route show 10.0.0.0/8") == (
        "10.0.0.0/8 via 172.16.0.2 dev r0-eth3 \n"
        "10.0.0.0/8 via 192.168.2.100 dev r0-eth2 metric 9 \n")
    ok(net, "r0", "ip route del 10.0.0.0/8 metric 9")
    ok(net, "r0", "ip route del 10.0.0.0/8")  # the first one left
    assert ok(net, "r0", "ip route show 10.0.0.0/8") == ""
    fails(net, "r0", "ip route del 10.0.0.0/8", "RTNETLINK answers: No such process\n", 2,
          ERROR)
    fails(net, "r0", "ip route del 192.168.1.0/24 dev r0-eth2",
          "RTNETLINK answers: No such process\n", 2, ERROR)
    fails(net, "r0", "ip route del blackhole 192.168.1.0/24",
          "RTNETLINK answers: No such process\n", 2, ERROR)
    ok(net, "r0", "ip route del 192.168.1.0/24 dev r0-eth1 proto kernel")
    assert "192.168.1.0/24" not in ok(net, "r0", "ip route")


def test_route_nexthop_checks(net):
    fails(net, "r0", "ip route add 10.0.0.0/8 via 10.255.255.254",
          "Error: Nexthop has invalid gateway.\n", 2, ERROR)
    # reachable only through another gateway route: not on-link
    fails(net, "r0", "ip route add 10.0.0.0/8 via 192.168.3.100",
          "Error: Nexthop has invalid gateway.\n", 2, ERROR)
    fails(net, "r0", "ip route add 10.0.0.0/8 via 192.168.1.100 dev r0-eth2",
          "Error: Nexthop has invalid gateway.\n", 2, ERROR)
    fails(net, "r0", "ip route add 10.0.0.0/8 via 10.9.9.9 onlink",
          "Error: Nexthop device required for onlink.\n", 2, ERROR)
    ok(net, "r0", "ip route add 10.0.0.0/8 via 10.9.9.9 dev r0-eth1 onlink")
    ok(net, "r0", "ip route add 10.1.0.0/16 via 192.168.2.1")  # a local address
    fails(net, "r0", "ip route add 10.2.0.0/16", "RTNETLINK answers: No such device\n", 2,
          ERROR)
    fails(net, "r0", "ip route add 10.2.0.0/16 dev eth9", 'Cannot find device "eth9"\n', 1,
          ERROR)
    ok(net, "r0", "ip link set r0-eth2 down")
    fails(net, "r0", "ip route add 10.2.0.0/16 dev r0-eth2",
          "Error: Device for nexthop is not up.\n", 2, ERROR)
    fails(net, "r0", "ip route add 10.2.0.1/16 dev r0-eth1",
          "Error: Invalid prefix for given prefix length.\n", 2, ERROR)
    fails(net, "r0", "ip route add 10.2.0.0/16 dev r0-eth1 src 10.9.9.9",
          "Error: Invalid prefsrc address.\n", 2, ERROR)
    routes = ok(net, "r0", "ip route")
    assert "10.0.0.0/8 via 10.9.9.9 dev r0-eth1 onlink \n" in routes
    assert "10.1.0.0/16 via 192.168.2.1 dev r0-eth2 \n" not in routes  # gone with eth2


def test_route_dev_taken_from_gateway_and_custom_table(net):
    ok(net, "r0", "ip route add 10.0.0.0/8 via 192.168.2.100 table 100")
    assert ok(net, "r0", "ip route show table 100") == "10.0.0.0/8 via 192.168.2.100 dev r0-eth2 \n"
    assert "10.0.0.0/8 via 192.168.2.100 dev r0-eth2 table 100 \n" in ok(
        net, "r0", "ip route show table all")
    assert "10.0.0.0" not in ok(net, "r0", "ip route")
    ok(net, "r0", "ip route del 10.0.0.0/8 table 100")
    fails(net, "r0", "ip route del 10.0.0.0/8 table 200", "Error: FIB table does not exist.\n",
          2, ERROR)


def test_route_flush(net):
    ok(net, "r0", "ip route add blackhole 10.0.0.0/8")
    ok(net, "r0", "ip route add blackhole 10.1.0.0/16")
    ok(net, "r0", "ip route flush type blackhole")
    assert ok(net, "r0", "ip route") == R0_ROUTES
    ok(net, "r0", "ip route flush dev r0-eth3")
    assert ok(net, "r0", "ip route") == (
        "192.168.1.0/24 dev r0-eth1 proto kernel scope link src 192.168.1.1 \n"
        "192.168.2.0/24 dev r0-eth2 proto kernel scope link src 192.168.2.1 \n")
    ok(net, "r0", "ip route flush cache")
    fails(net, "r0", "ip route flush", '"ip route flush" requires arguments.\n', 1, INVALID)


def test_route_usage_errors(net):
    fails(net, "r0", "ip route add 10.0.0.0/8 via 1.2.3.4 to 10.1.0.0/16",
          'Error: either "to" is duplicate, or "10.1.0.0/16" is a garbage.\n', 255, INVALID)
    fails(net, "r0", "ip route add 10.0.0.0/8 via foo",
          'Error: inet address is expected rather than "foo".\n', 1, INVALID)
    fails(net, "r0", "ip route add foo via 1.2.3.4",
          'Error: any valid prefix is expected rather than "foo".\n', 1, INVALID)
    fails(net, "r0", "ip route add 10.0.0.0/8 metric x",
          'Error: argument "x" is wrong: "metric" value is invalid\n\n', 255, INVALID)
    fails(net, "r0", "ip route add 10.0.0.0/8 via",
          'Command line is not complete. Try option "help"\n', 255, INVALID)
    res = run(net, "r0", "ip route add via 1.2.3.4")
    assert res.output.startswith("Usage: ip route { list | flush } SELECTOR\n")
    assert (res.status, res.kind) == (255, INVALID)
    fails(net, "r0", "ip route frob", 'Command "frob" is unknown, try "ip route help".\n', 255,
          INVALID)


def test_route_get(net):
    assert ok(net, "r0", "ip route get 192.168.3.100") == (
        "192.168.3.100 via 172.16.0.2 dev r0-eth3 src 172.16.0.1 uid 0 \n    cache \n")
    assert ok(net, "r0", "ip route get 192.168.2.101") == (
        "192.168.2.101 dev r0-eth2 src 192.168.2.1 uid 0 \n    cache \n")
    assert ok(net, "r0", "ip route get 192.168.1.1") == (
        "local 192.168.1.1 dev lo table local src 192.168.1.1 uid 0 \n    cache <local> \n")
    assert ok(net, "r0", "ip route get 192.168.3.100 from 192.168.1.1") == (
        "192.168.3.100 from 192.168.1.1 via 172.16.0.2 dev r0-eth3 uid 0 \n    cache \n")
    assert ok(net, "r0", "ip route get 192.168.3.100 from 192.168.1.100 iif r0-eth1") == (
        "192.168.3.100 from 192.168.1.100 via 172.16.0.2 dev r0-eth3 \n    cache iif r0-eth1 \n")
    fails(net, "r0", "ip route get 8.8.8.8", "RTNETLINK answers: Network is unreachable\n", 2,
          ERROR)
    fails(net, "r0", "ip route get", "need at least a destination address\n", 1, INVALID)
    fails(net, "r0", "ip route get 1.2.3.4 oif eth9", 'Cannot find device "eth9"\n', 1, ERROR)
    # out of a given device, an unroutable destination is taken as on-link
    assert ok(net, "r0", "ip route get 8.8.8.8 oif r0-eth1") == (
        "8.8.8.8 dev r0-eth1 src 192.168.1.1 uid 0 \n    cache \n")
    assert ok(net, "r0", "ip -o route get 192.168.2.100") == (
        "192.168.2.100 dev r0-eth2 src 192.168.2.1 uid 0 \\    cache \n")


def test_route_get_reject_routes_and_rules(net):
    ok(net, "r0", "ip route add blackhole 10.0.0.0/8")
    ok(net, "r0", "ip route add prohibit 10.1.0.0/16")
    ok(net, "r0", "ip route add unreachable 10.2.0.0/16")
    fails(net, "r0", "ip route get 10.0.0.1", "RTNETLINK answers: Invalid argument\n", 2, ERROR)
    fails(net, "r0", "ip route get 10.1.0.1", "RTNETLINK answers: Permission denied\n", 2,
          ERROR)
    fails(net, "r0", "ip route get 10.2.0.1", "RTNETLINK answers: No route to host\n", 2, ERROR)
    ok(net, "r0", "ip rule add prohibit pref 0")
    fails(net, "r0", "ip route get 192.168.3.100", "RTNETLINK answers: Permission denied\n", 2,
          ERROR)
    net.nodes["r0"].ip_forward = False
    fails(net, "r0", "ip route get 192.168.2.100 from 192.168.1.100 iif r0-eth1",
          "RTNETLINK answers: No route to host\n", 2, ERROR)


# ------------------------------------------------------------------------------ rules
DEFAULT_RULES = ("0:\tfrom all lookup local\n32766:\tfrom all lookup main\n"
                 "32767:\tfrom all lookup default\n")


def test_rule_show_and_insertion(net):
    assert ok(net, "r0", "ip rule") == DEFAULT_RULES
    assert ok(net, "r0", "ip ru list") == DEFAULT_RULES
    ok(net, "r0", "ip rule add from 10.0.0.0/8 lookup 100")   # pref 32765
    ok(net, "r0", "ip rule add to 192.168.3.7 table main")    # pref 32764
    ok(net, "r0", "ip rule add prohibit pref 0")               # after the local rule
    ok(net, "r0", "ip rule add not iif r0-eth9 blackhole pref 32765")
    assert ok(net, "r0", "ip rule show") == (
        "0:\tfrom all lookup local\n"
        "0:\tfrom all prohibit\n"
        "32764:\tfrom all to 192.168.3.7 lookup main\n"
        "32765:\tfrom 10.0.0.0/8 lookup 100\n"
        "32765:\tnot from all iif r0-eth9 [detached] blackhole\n"
        "32766:\tfrom all lookup main\n"
        "32767:\tfrom all lookup default\n")
    fails(net, "r0", "ip rule add from 10.0.0.0/8 lookup 100 pref 32765",
          "RTNETLINK answers: File exists\n", 2, ERROR)


def test_rule_del_first_match(net):
    ok(net, "r0", "ip rule add prohibit pref 0")
    ok(net, "r0", "ip rule del prohibit")
    assert ok(net, "r0", "ip rule") == DEFAULT_RULES
    ok(net, "r0", "ip rule add prohibit pref 0")
    ok(net, "r0", "ip rule del pref 0")  # the local rule comes first
    assert ok(net, "r0", "ip rule") == ("0:\tfrom all prohibit\n32766:\tfrom all lookup main\n"
                                        "32767:\tfrom all lookup default\n")
    fails(net, "r0", "ip rule del from 10.0.0.0/8",
          "RTNETLINK answers: No such file or directory\n", 2, ERROR)
    ok(net, "r0", "ip rule del table main")
    assert "lookup main" not in ok(net, "r0", "ip rule")
    # without the local rule, the second rule (pref 32767) decides the default pref
    ok(net, "r0", "ip rule add from 10.0.0.0/8 lookup 100")
    assert "32766:\tfrom 10.0.0.0/8 lookup 100\n" in ok(net, "r0", "ip rule")


def test_rule_flush_keeps_pref_zero(net):
    ok(net, "r0", "ip rule add from 10.0.0.0/8 lookup 100")
    ok(net, "r0", "ip rule add prohibit pref 0")
    ok(net, "r0", "ip rule flush")
    assert ok(net, "r0", "ip rule") == "0:\tfrom all lookup local\n0:\tfrom all prohibit\n"


def test_rule_errors(net):
    fails(net, "r0", "ip rule add", '"ip rule add" requires arguments.\n', 1, INVALID)
    fails(net, "r0", "ip rule del", '"ip rule del" requires arguments.\n', 1, INVALID)
    fails(net, "r0", "ip rule add frob",
          'Error: argument "frob" is wrong: Failed to parse rule type\n', 255, INVALID)
    fails(net, "r0", "ip rule add from foo lookup 100",
          'Error: any valid prefix is expected rather than "foo".\n', 1, INVALID)
    fails(net, "r0", "ip rule add pref x lookup 100",
          'Error: argument "x" is wrong: preference value is invalid\n\n', 255, INVALID)


# -------------------------------------------------------------------------- neighbours
def test_neigh_show_is_what_the_probe_round_resolved(net):
    # iproute2 prints a space after the state (real: "... lladdr 26:ed:0f:8f:84:91 REACHABLE ")
    assert ok(net, "r0", "ip neigh") == (
        "192.168.1.100 dev r0-eth1 lladdr 02:00:00:00:03:00 REACHABLE \n"
        "192.168.2.100 dev r0-eth2 lladdr 02:00:00:00:04:00 REACHABLE \n"
        "192.168.2.101 dev r0-eth2 lladdr 02:00:00:00:05:00 REACHABLE \n"
        "172.16.0.2 dev r0-eth3 lladdr 02:00:00:00:02:02 REACHABLE \n")
    assert ok(net, "r0", "ip n show dev r0-eth2") == (
        "192.168.2.100 lladdr 02:00:00:00:04:00 REACHABLE \n"
        "192.168.2.101 lladdr 02:00:00:00:05:00 REACHABLE \n")
    assert ok(net, "r0", "ip neigh show 192.168.2.0/24 nud reachable").count("\n") == 2
    assert ok(net, "r0", "ip neigh show nud stale") == ""
    ok(net, "h2", "ip link set h2-eth0 down")
    net.new_traffic_round()
    assert "192.168.2.100 dev r0-eth2 INCOMPLETE \n" in ok(net, "r0", "ip neighbour show")
    assert ok(net, "r0", "ip neigh flush dev r0-eth2") == ""
    assert "r0-eth2" not in ok(net, "r0", "ip neigh")
    assert ok(net, "r0", "ip -s neigh flush all") == (
        "\n*** Round 1, deleting 2 entries ***\n*** Flush is complete after 1 round ***\n")
    assert ok(net, "r0", "ip neigh") == ""
    fails(net, "r0", "ip neigh flush", "Flush requires arguments.\n", 1, INVALID)
    fails(net, "r0", "ip neigh show dev eth9", 'Cannot find device "eth9"\n', 1, ERROR)
    fails(net, "r0", "ip neigh show nud bogus",
          'Error: argument "bogus" is wrong: nud state is bad\n', 255, INVALID)


# ------------------------------------------------------------------ options / objects
def test_objects_and_options(net):
    fails(net, "r0", "ip foo", 'Object "foo" is unknown, try "ip help".\n', 1, INVALID)
    fails(net, "r0", "ip -x addr", 'Option "-x" is unknown, try "ip -help".\n', 255, INVALID)
    assert ok(net, "r0", "ip -s -4 -c=never route") == R0_ROUTES
    assert ok(net, "r0", "ip -color=always r") == ok(net, "r0", "ip -c -s -4 route") != R0_ROUTES
    assert ok(net, "r0", "ip -V") == "ip utility, iproute2-6.1.0, libbpf 1.1.2\n"
    res = run(net, "r0", "ip")
    assert res.output.startswith("Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\n")
    assert (res.status, res.kind) == (255, INVALID)
    assert "RX:  bytes packets errors dropped  missed   mcast" in ok(net, "r0", "ip -s link")
    assert ok(net, "r0", "ip -d route").startswith(
        "unicast 172.16.0.0/30 dev r0-eth3 proto kernel scope link src 172.16.0.1 \n")


def test_changes_bump_versions_and_reads_do_not(net):
    node = net.nodes["r0"]
    v = node.version
    for line in ("ip addr show", "ip route show table all", "ip rule", "ip neigh",
                 "ip route get 192.168.3.1", "ip -d -s link"):
        ok(net, "r0", line)
    assert node.version == v
    ok(net, "r0", "ip route add 10.0.0.0/8 via 172.16.0.2")
    assert node.version > v


# ------------------------------------------------------------------------------- -color
def _esc(text: str) -> str:
    return text.replace("{", "\x1b[").replace("}", "m")


def test_color_as_iproute2_prints_it(net):
    # iproute2 6.1.0 `ip -c` on Mininet (same configuration), "{N}" standing for ESC[Nm
    assert ok(net, "h1", "ip -c route") == _esc(
        "default via {35}192.168.1.1 {0}dev {36}h1-eth0 {0}\n"
        "{35}192.168.1.0/24 {0}dev {36}h1-eth0 {0}proto kernel scope link src "
        "{35}192.168.1.100 {0}\n")
    assert ok(net, "r0", "ip -c -br addr show dev r0-eth1") == _esc(
        "{36}r0-eth1@if100    {0}{32}UP             {0}{35}192.168.1.1{0}/24 \n")
    assert ok(net, "r0", "ip -c -o addr show dev r0-eth1") == _esc(
        "2: r0-eth1    inet {35}192.168.1.1{0}/24 brd {35}192.168.1.255 {0}scope global "
        "r0-eth1\\       valid_lft forever preferred_lft forever\n")
    head = ok(net, "r0", "ip -c link show r0-eth1").splitlines()[:2]
    assert head == [_esc("2: {36}r0-eth1@if100: {0}<BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 "
                         "qdisc noqueue state {32}UP {0}mode DEFAULT group default qlen 1000"),
                    _esc("    link/ether {33}02:00:00:00:01:01{0} brd {33}ff:ff:ff:ff:ff:ff{0} "
                         "link-netnsid 0")]
    ok(net, "r0", "ip link set r0-eth2 down")
    assert _esc("state {31}DOWN {0}group") in ok(net, "r0", "ip -color addr show r0-eth2")
    # rules are never coloured; auto (no terminal) and never are plain
    assert ok(net, "r0", "ip -c rule") == ok(net, "r0", "ip rule")
    assert ok(net, "r0", "ip -color=auto route") == ok(net, "r0", "ip -c=never route") == \
        ok(net, "r0", "ip route")
    assert run(net, "r0", "ip -c=bogus link").output == (
        'Option "-c=bogus" is unknown, try "ip -help".\n')


def test_a_duplicate_address_swallows_the_replies_to_it():
    # Linux delivers a reply to an address the node owns locally. h3 given h2's address:
    # h2's pings of h3 fail, since h3 answers no ARP request sent from an address it owns
    # (a martian source: two veths in namespaces on Linux 6.18 leave the sender's entry
    # INCOMPLETE); r0 given h2's address on another port: h2 is cut off through r0 (r0
    # also drops h2's packets as martians, which the model leaves out: the result is the
    # same), and r0 itself now "reaches" that address locally
    from netarena_gym.routing.grader import echo, pair_ok
    net = build_network(SPEC)[0]
    h1, h2, h3, r0 = (net.nodes[n] for n in ("h1", "h2", "h3", "r0"))
    assert pair_ok(net, h2, net.probe_ip["h3"], 1.0)
    ok(net, "h3", "ip addr add 192.168.2.100/24 dev h3-eth0")
    assert not pair_ok(net, h2, net.probe_ip["h3"], 1.0)
    out = echo(net, h2, net.probe_ip["h3"])
    assert (out.ok, out.error) == (False, "Destination Host Unreachable")
    assert net.neighbor(h2, "h2-eth0", net.probe_ip["h3"]) is None
    assert pair_ok(net, h3, net.probe_ip["h2"], 1.0)  # local to h3 now
    ok(net, "h3", "ip addr del 192.168.2.100/24 dev h3-eth0")
    assert pair_ok(net, h2, net.probe_ip["h1"], 1.0)
    ok(net, "r0", "ip addr change 192.168.2.100/24 dev r0-eth1")
    assert not pair_ok(net, h2, net.probe_ip["h1"], 1.0)
    assert not pair_ok(net, h2, net.probe_ip["r0"], 1.0)
    assert pair_ok(net, r0, net.probe_ip["h2"], 1.0) and pair_ok(net, h1, net.probe_ip["r0"], 1.0)


def test_arp_for_an_address_two_nodes_own_goes_to_the_interface_carrying_it():
    # r0 answers ARP for any of its addresses (arp_ignore 0), so on s2 both h2 and r0 answer
    # for 192.168.2.100 once r0-eth1 has it; on Mininet h2's reply wins
    net = build_network(SPEC)[0]
    ok(net, "r0", "ip addr add 192.168.2.100/24 dev r0-eth1")
    hop = net.neighbor(net.nodes["h3"], "h3-eth0", 0xC0A80264)
    assert (hop[0].name, hop[1]) == ("h2", "h2-eth0")
    ok(net, "h2", "ip addr flush dev h2-eth0")
    hop = net.neighbor(net.nodes["h3"], "h3-eth0", 0xC0A80264)
    assert (hop[0].name, hop[1]) == ("r0", "r0-eth2")


def test_operstate_without_carrier_looks_the_peer_index_up_in_the_own_namespace():
    # real (Mininet, Linux 6.18, level 3 seed 43 after its faults: r1-eth1, r2-eth4 and
    # r0-eth4 down), MACs masked:
    #   4: r1-eth3@if5: <NO-CARRIER,BROADCAST,MULTICAST,UP> ... state LOWERLAYERDOWN ...
    #   5: r1-eth4@if5: <NO-CARRIER,BROADCAST,MULTICAST,UP> ... state DOWN ...
    # r1-eth3's peer is r0-eth4 (index 5 in r0): r1's index 5 is r1-eth4, which has no
    # carrier either; r1-eth4's peer is r2-eth4, index 5: the device itself
    net = build_network(TopologySpec(hosts=((1, 2, 1), (3, 2), (3, 1, 3)), parents=(0, 1)))[0]
    for node, dev in (("r1", "r1-eth1"), ("r2", "r2-eth4"), ("r0", "r0-eth4")):
        ok(net, node, f"ip link set {dev} down")
    states = {ln.split()[0].split("@")[0]: ln.split()[1]
              for ln in ok(net, "r1", "ip -br link show").splitlines()}
    assert states == {"lo": "UNKNOWN", "r1-eth1": "DOWN", "r1-eth2": "UP",
                      "r1-eth3": "LOWERLAYERDOWN", "r1-eth4": "DOWN"}
    assert "state LOWERLAYERDOWN" in ok(net, "r1", "ip link show r1-eth3")
    assert "state DOWN" in ok(net, "r1", "ip addr show r1-eth4")
    # the peer's index names a device that has carrier (here r0-eth3): DOWN
    ok(net, "r0", "ip link set r0-eth4 up")
    ok(net, "r1", "ip link set r1-eth3 down")
    assert ok(net, "r0", "ip -br link show r0-eth4").split()[1] == "DOWN"


def test_router_taking_a_hosts_address_leaves_the_hosts_lan_traffic_alone():
    # real (Mininet, Linux 6.18, campaign level 1 seed 87: on r0
    # "ip addr change 192.168.3.100/24 dev r0-eth3", h5's address; pingall afterwards):
    #   h3 -> h1 h2 h4 h5 h6 r0   (r0 answers for 192.168.3.100 itself)
    #   h5 -> X X X X h6 X        (h6 answers h5 through the entry h5's ARP request left)
    #   h6 -> h1 h2 h3 h4 h5 r0
    from netarena_gym.core.ipv4 import ip_to_int as ip
    from netarena_gym.routing.grader import pair_ok
    net = build_network(TopologySpec(hosts=((2, 2, 2),), parents=()))[0]
    ok(net, "r0", "ip addr change 192.168.3.100/24 dev r0-eth3")
    n = net.nodes
    assert pair_ok(net, n["h5"], ip("192.168.3.101"), 1.0)
    assert not pair_ok(net, n["h5"], ip("192.168.2.100"), 1.0)
    assert pair_ok(net, n["h3"], ip("192.168.3.100"), 1.0)
    assert pair_ok(net, n["h6"], ip("192.168.3.100"), 1.0)
    # then "ip route flush table main" on r0 (real: h6 -> X X X X h5 X): h6 reaches h5,
    # which sends with the address, not r0, which has it as a secondary
    ok(net, "r0", "ip route flush table main")
    assert pair_ok(net, n["h6"], ip("192.168.3.100"), 1.0)
    assert pair_ok(net, n["h5"], ip("192.168.3.101"), 1.0)


def test_an_address_in_0_0_0_0_slash_len_adds_no_prefix_route(net):
    # fib_add_ifaddr adds no route for a zeronet prefix (Linux 6.18, pinned in a
    # namespace): 10.162.0.1/1 and 0.1.2.3/8 leave `ip route` as it was, so 10.9.9.9 is
    # unreachable from h1 once its default route goes
    before = ok(net, "h1", "ip route")
    ok(net, "h1", "ip addr add 10.162.0.1/1 dev h1-eth0")
    ok(net, "h1", "ip addr add 0.1.2.3/8 dev h1-eth0")
    assert ok(net, "h1", "ip route") == before
    assert "local 10.162.0.1 dev h1-eth0 table local" in ok(net, "h1", "ip route show table all")
    ok(net, "h1", "ip route del default")
    fails(net, "h1", "ip route get 10.9.9.9", "RTNETLINK answers: Network is unreachable\n", 2,
          ERROR)
