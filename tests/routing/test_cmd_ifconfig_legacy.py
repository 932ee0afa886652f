"""net-tools ``ifconfig``, ``route`` and ``arp`` in the simulator."""
import shlex

import pytest

from netarena_gym.shell.parser import ERROR, INVALID, OK
from netarena_gym.routing.commands import REGISTRY, CommandContext
from netarena_gym.routing.commands import ifconfig as _ifconfig  # noqa: F401  (registers)
from netarena_gym.routing.commands import ip as _ip  # noqa: F401
from netarena_gym.routing.commands import legacy as _legacy  # noqa: F401
from netarena_gym.routing.commands.tool_help import IFCONFIG_USAGE
from netarena_gym.routing.topology import TopologySpec, build_network

SPEC = TopologySpec(hosts=((1, 2), (1,)), parents=(0,))


@pytest.fixture
def net():
    return build_network(SPEC)[0]


def run(net, node, line):
    argv = shlex.split(line)
    return REGISTRY[argv[0]](CommandContext(net, net.nodes[node]), argv, "")


def ok(net, node, line):
    res = run(net, node, line)
    assert (res.status, res.kind) == (0, OK), res.output
    return res.output


COUNTERS = ("        RX packets 0  bytes 0 (0.0 B)\n"
            "        RX errors 0  dropped 0  overruns 0  frame 0\n"
            "        TX packets 0  bytes 0 (0.0 B)\n"
            "        TX errors 0  dropped 0 overruns 0  carrier 0  collisions 0\n\n")
H1_LO = ("lo: flags=73<UP,LOOPBACK,RUNNING>  mtu 65536\n"
         "        inet 127.0.0.1  netmask 255.0.0.0\n"
         "        loop  txqueuelen 1000  (Local Loopback)\n" + COUNTERS)
H1_ETH0 = ("h1-eth0: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1500\n"
           "        inet 192.168.1.100  netmask 255.255.255.0  broadcast 192.168.1.255\n"
           "        ether 02:00:00:00:03:00  txqueuelen 1000  (Ethernet)\n" + COUNTERS)


# ----------------------------------------------------------------------------- ifconfig
def test_ifconfig_lists_up_interfaces_sorted(net):
    assert ok(net, "h1", "ifconfig") == H1_ETH0 + H1_LO
    ok(net, "h1", "ifconfig h1-eth0 down")
    assert ok(net, "h1", "ifconfig") == H1_LO
    assert ok(net, "h1", "ifconfig -a").startswith(
        "h1-eth0: flags=4098<BROADCAST,MULTICAST>  mtu 1500\n"
        "        inet 192.168.1.100  netmask 255.255.255.0  broadcast 192.168.1.255\n")
    assert ok(net, "h1", "ifconfig h1-eth0").startswith("h1-eth0: flags=4098<")
    ok(net, "h1", "ifconfig h1-eth0 up")
    assert ok(net, "h1", "ifconfig h1-eth0") == H1_ETH0
    # the static default route went away with the link and does not come back
    assert "default" not in ok(net, "h1", "ip route")


def test_ifconfig_unknown_device_and_option(net):
    res = run(net, "h1", "ifconfig eth9")
    assert res.output == "eth9: error fetching interface information: Device not found\n"
    assert (res.status, res.kind) == (1, ERROR)
    res = run(net, "h1", "ifconfig eth9 up")
    assert res.output == "eth9: ERROR while getting interface flags: No such device\n"
    res = run(net, "h1", "ifconfig -z")
    assert res.output == ("ifconfig: option `-z' not recognised.\n"
                          "ifconfig: `--help' gives usage information.\n")
    assert (res.status, res.kind) == (1, INVALID)


def test_ifconfig_sets_address_classful_and_brings_up(net):
    ok(net, "r0", "ifconfig r0-eth1 down")
    ok(net, "r0", "ifconfig r0-eth1 10.1.2.3")
    out = ok(net, "r0", "ip addr show r0-eth1")
    assert "<BROADCAST,MULTICAST,UP,LOWER_UP>" in out
    assert "    inet 10.1.2.3/8 brd 10.255.255.255 scope global r0-eth1\n" in out
    assert "inet 192.168.1.1" not in out
    ok(net, "r0", "ifconfig r0-eth1 192.168.1.1 netmask 255.255.255.0")
    assert ok(net, "r0", "ip addr show r0-eth1").count("inet ") == 1
    assert "192.168.1.0/24 dev r0-eth1 proto kernel scope link src 192.168.1.1 \n" in ok(
        net, "r0", "ip route")
    ok(net, "r0", "ifconfig r0-eth2 172.20.0.1/16")
    assert "    inet 172.20.0.1/16 brd 172.20.255.255 scope global r0-eth2\n" in ok(
        net, "r0", "ip addr show r0-eth2")
    ok(net, "r0", "ifconfig r0-eth2 0.0.0.0")
    assert "inet " not in ok(net, "r0", "ip addr show r0-eth2")


# net-tools 2.10 `ifconfig d ARGS` on a fresh veth, Linux 6.18 (x86-64), then `ip -4 -br addr`:
# /LEN is strtoul'd and made the mask ~(0xffffffff >> LEN), the shift count taken mod 32;
# the address is inet_aton's, and 0.x.y.z is class A since Linux 5.3
REAL_IFCONFIG_ADDRESSES = [
    ("10.0.0.1/33", "10.0.0.1/1"), ("10.0.0.1/32", "10.0.0.1/0"), ("10.0.0.1/0", "10.0.0.1/0"),
    ("10.0.0.1/-1", "10.0.0.1/31"), ("10.0.0.1/", "10.0.0.1/0"), ("10.0.0.1/40", "10.0.0.1/8"),
    ("10.0.0.1/64", "10.0.0.1/0"), ("10.0.0.1/0x18", "10.0.0.1/24"), ("10.0.0.1/010", "10.0.0.1/8"),
    ("10.0.0.1/+24", "10.0.0.1/24"), ("10.0.0.1/99999999999999999999999", "10.0.0.1/31"),
    ("10.0.0.1/-33", "10.0.0.1/31"), ("10.0.0.1/ 24", "0.0.0.24/0"), ("24", "0.0.0.24/8"),
    ("10.1", "10.0.0.1/8"), ("10.1/16", "10.0.0.1/16"), ("0x0a000001/24", "10.0.0.1/24"),
    ("0.1.2.3", "0.1.2.3/8"), ("1500", "0.0.5.220/8"), ("10.0.0.1/24 10.0.0.2/16", "10.0.0.2/16"),
    ("10.0.0.1/24 netmask 255.0.0.0", "10.0.0.1/24"), ("192.168.1.1/33 up", "192.168.1.1/1"),
    ("10.0.0.1 netmask 0xffffff00", "10.0.0.1/24"),
]


@pytest.mark.parametrize("args, shown", REAL_IFCONFIG_ADDRESSES)
def test_ifconfig_address_and_length_are_read_as_net_tools_does(net, args, shown):
    ok(net, "r0", f"ifconfig r0-eth1 {args}")
    addrs = [line.split()[1] for line in ok(net, "r0", "ip -4 addr show r0-eth1").splitlines()
             if line.startswith("    inet ")]
    assert addrs == [shown]


# the same, whole `ip -4 addr show` lines: SIOCSIFNETMASK makes the broadcast again only
# when it was the old mask's and the new prefix is below /31
REAL_IFCONFIG_BROADCASTS = [
    (["0.1.2.3/-1"], "0.1.2.3/31 brd 0.255.255.255"),
    (["10.0.0.1/31 netmask 255.255.255.0"], "10.0.0.1/31 brd 10.0.0.255"),
    (["10.0.0.1 netmask 255.255.255.254"], "10.0.0.1/31 brd 10.255.255.255"),
    (["10.0.0.1 broadcast 10.1.2.3 netmask 255.255.0.0"], "10.0.0.1/16 brd 10.1.2.3"),
    (["10.0.0.1/32"], "10.0.0.1/0 brd 255.255.255.255"),
    (["10.0.0.1/30 netmask 255.255.255.255"], "10.0.0.1/30 brd 10.255.255.255"),
    (["10.0.0.1/31", "netmask 255.255.255.0"], "10.0.0.1/24 brd 10.255.255.255"),
]


@pytest.mark.parametrize("steps, shown", REAL_IFCONFIG_BROADCASTS)
def test_ifconfig_netmask_keeps_or_remakes_the_broadcast_as_the_kernel_does(net, steps, shown):
    for args in steps:
        ok(net, "r0", f"ifconfig r0-eth1 {args}")
    assert f"    inet {shown} scope global r0-eth1\n" in ok(net, "r0", "ip -4 addr show r0-eth1")


@pytest.mark.parametrize("args, output, status", [
    ("10.0.0.1/24/3", None, 3), ("10.0.0.1/08", None, 3), ("10.0.0.1/0x", None, 3),
    ("foo/24", "foo: Unknown host\nifconfig: `--help' gives usage information.\n", 1),
    ("10.0.0.1 netmask 255.255.255", "SIOCSIFNETMASK: Invalid argument\n", 1),
    ("10.0.0.1 netmask 255.0.0.0/8", "255.0.0.0/8: Unknown host\n", 1),
    ("1.2.3.4/24 default", "SIOCSIFNETMASK: Cannot assign requested address\n", 1),
])
def test_ifconfig_bad_lengths_and_masks(net, args, output, status):
    res = run(net, "r0", f"ifconfig r0-eth1 {args}")
    assert res.status == status
    assert res.output == (output if output is not None else IFCONFIG_USAGE)


def test_ifconfig_shows_missing_broadcast_of_ip_added_address(net):
    ok(net, "r0", "ip addr flush dev r0-eth1")
    ok(net, "r0", "ip addr add 10.0.0.1/24 dev r0-eth1")
    assert "        inet 10.0.0.1  netmask 255.255.255.0  broadcast 0.0.0.0\n" in ok(
        net, "r0", "ifconfig r0-eth1")


def test_ifconfig_mtu_promisc_and_errors(net):
    ok(net, "r0", "ifconfig r0-eth1 mtu 1400 promisc")
    assert ok(net, "r0", "ifconfig r0-eth1").startswith(
        "r0-eth1: flags=4419<UP,BROADCAST,RUNNING,PROMISC,MULTICAST>  mtu 1400\n")
    ok(net, "r0", "ifconfig r0-eth1 -promisc")
    assert not net.nodes["r0"].interfaces["r0-eth1"].promisc
    res = run(net, "r0", "ifconfig r0-eth1 mtu 20")
    assert (res.output, res.status, res.kind) == ("SIOCSIFMTU: Invalid argument\n", 1, ERROR)
    res = run(net, "r0", "ifconfig r0-eth1 nosuchhost")
    assert res.output == ("nosuchhost: Unknown host\n"
                          "ifconfig: `--help' gives usage information.\n")
    assert (res.status, res.kind) == (1, INVALID)
    ok(net, "r0", "ip addr flush dev r0-eth2")
    res = run(net, "r0", "ifconfig r0-eth2 netmask 255.255.0.0")
    assert res.output == "SIOCSIFNETMASK: Cannot assign requested address\n"


# -------------------------------------------------------------------------------- route
R0_TABLE = (
    "Kernel IP routing table\n"
    "Destination     Gateway         Genmask         Flags Metric Ref    Use Iface\n"
    "172.16.0.0      0.0.0.0         255.255.255.252 U     0      0        0 r0-eth3\n"
    "192.168.1.0     0.0.0.0         255.255.255.0   U     0      0        0 r0-eth1\n"
    "192.168.2.0     0.0.0.0         255.255.255.0   U     0      0        0 r0-eth2\n"
    "192.168.3.0     172.16.0.2      255.255.255.0   UG    0      0        0 r0-eth3\n")


def test_route_listing(net):
    assert ok(net, "r0", "route -n") == R0_TABLE
    assert ok(net, "h1", "route") == (
        "Kernel IP routing table\n"
        "Destination     Gateway         Genmask         Flags Metric Ref    Use Iface\n"
        "default         192.168.1.1     0.0.0.0         UG    0      0        0 h1-eth0\n"
        "192.168.1.0     0.0.0.0         255.255.255.0   U     0      0        0 h1-eth0\n")
    assert ok(net, "h1", "route -n").splitlines()[2].startswith("0.0.0.0         192.168.1.1 ")


def test_route_listing_reject_rows(net):
    ok(net, "r0", "ip route add prohibit 10.0.0.0/8 metric 3")
    ok(net, "r0", "ip route add unreachable 10.9.9.9")
    ok(net, "r0", "ip route add blackhole 10.1.0.0/16")
    ok(net, "r0", "ip route add 10.2.0.0/16 via 172.16.0.2 table 100")
    rows = ok(net, "r0", "route -n").splitlines()[2:5]
    assert rows == [
        "10.0.0.0        -               255.0.0.0       !     3      -        0 -",
        "10.1.0.0        0.0.0.0         255.255.0.0     U     0      0        0 *",
        "10.9.9.9        -               255.255.255.255 !H    0      -        0 -",
    ]


def test_route_add_del(net):
    ok(net, "r0", "route add -net 10.0.0.0 netmask 255.0.0.0 gw 192.168.1.100")
    ok(net, "r0", "route add -net 10.1.0.0/16 gw 172.16.0.2 metric 5")
    ok(net, "r0", "route add -host 10.9.9.9 dev r0-eth2")
    ok(net, "r0", "route add -net 10.2.0.0 netmask 255.255.0.0 reject")
    assert ok(net, "r0", "ip route show root 10.0.0.0/8") == (
        "10.0.0.0/8 via 192.168.1.100 dev r0-eth1 \n"
        "10.1.0.0/16 via 172.16.0.2 dev r0-eth3 metric 5 \n"
        "unreachable 10.2.0.0/16 scope host \n"
        "10.9.9.9 dev r0-eth2 scope link \n")
    ok(net, "r0", "route del -net 10.1.0.0/16 gw 172.16.0.2")
    ok(net, "r0", "route del -host 10.9.9.9")
    res = run(net, "r0", "route del -net 10.1.0.0/16")
    assert (res.output, res.status, res.kind) == ("SIOCDELRT: No such process\n", 7, ERROR)


def test_route_add_is_a_prepend(net):
    ok(net, "h1", "route add default gw 192.168.1.50")
    assert ok(net, "h1", "ip route").startswith("default via 192.168.1.50 dev h1-eth0 \n"
                                                "default via 192.168.1.1 dev h1-eth0 \n")
    res = run(net, "h1", "route add default gw 192.168.1.50")
    assert (res.output, res.status, res.kind) == ("SIOCADDRT: File exists\n", 7, ERROR)
    ok(net, "h1", "route del default")
    assert ok(net, "h1", "ip route").startswith("default via 192.168.1.1 dev h1-eth0 \n")


def test_route_errors(net):
    res = run(net, "r0", "route add -net 10.0.0.0/8 gw 10.255.255.254")
    assert (res.output, res.status, res.kind) == ("SIOCADDRT: Network is unreachable\n", 7,
                                                  ERROR)
    res = run(net, "r0", "route add -net 10.0.0.0/8 dev eth9")
    assert res.output == "SIOCADDRT: No such device\n"
    res = run(net, "r0", "route add -net 10.0.0.1 netmask 255.0.0.0 dev r0-eth1")
    assert res.output.startswith("route: netmask doesn't match route address\n"
                                 "Usage: inet_route [-vF] del")
    assert (res.status, res.kind) == (3, INVALID)
    # Debian's net-tools 2.10 exits 0 after printing a usage text for no target, -h or a
    # bad option; usage() writes the family list to stderr, which a pipe delivers first
    res = run(net, "r0", "route add")
    assert res.output.startswith("Usage: inet_route [-vF] del")
    assert (res.status, res.kind) == (0, INVALID)
    res = run(net, "r0", "route -z")
    assert res.status == 0 and res.output.splitlines()[:3] == [
        "route: invalid option -- 'z'",
        "    inet (DARPA Internet) inet6 (IPv6) ax25 (AMPR AX.25) ",
        "    netrom (AMPR NET/ROM) rose (AMPR ROSE) ipx (Novell IPX) "]
    assert res.output.endswith("  List of possible address families (which support routing):\n")
    assert run(net, "r0", "route -h").output == res.output.split("\n", 1)[1]
    ok(net, "r0", "ip link set r0-eth1 down")
    res = run(net, "r0", "route add -net 10.0.0.0/8 dev r0-eth1")
    assert res.output == "SIOCADDRT: Network is down\n"


# ---------------------------------------------------------------------------------- arp
R0_ARP = (
    "Address                  HWtype  HWaddress           Flags Mask            Iface\n"
    "192.168.1.100            ether   02:00:00:00:03:00   C                     r0-eth1\n"
    "192.168.2.100            ether   02:00:00:00:04:00   C                     r0-eth2\n"
    "192.168.2.101            ether   02:00:00:00:05:00   C                     r0-eth2\n"
    "172.16.0.2               ether   02:00:00:00:02:02   C                     r0-eth3\n")


def test_arp_views_match_ip_neigh(net):
    assert ok(net, "r0", "arp -n") == R0_ARP
    assert ok(net, "r0", "arp") == R0_ARP
    assert ok(net, "r0", "arp -a") == (
        "? (192.168.1.100) at 02:00:00:00:03:00 [ether] on r0-eth1\n"
        "? (192.168.2.100) at 02:00:00:00:04:00 [ether] on r0-eth2\n"
        "? (192.168.2.101) at 02:00:00:00:05:00 [ether] on r0-eth2\n"
        "? (172.16.0.2) at 02:00:00:00:02:02 [ether] on r0-eth3\n")
    neigh = run(net, "r0", "ip neigh").output.splitlines()
    arp = ok(net, "r0", "arp -an").splitlines()
    assert [n.split()[0] for n in neigh] == [a.split()[1].strip("()") for a in arp]


def test_arp_filters(net):
    assert ok(net, "r0", "arp -n -i r0-eth1") == "".join(R0_ARP.splitlines(True)[:2])
    assert ok(net, "r0", "arp -n 192.168.9.9") == "192.168.9.9 (192.168.9.9) -- no entry\n"
    assert ok(net, "r0", "arp -n -i eth9") == "arp: in 4 entries no match found.\n"
    ok(net, "h1", "ip link set h1-eth0 down")
    net.new_traffic_round()
    # r0's probe of h1 goes unanswered: the entry stays unresolved (real row, kernel 6.18)
    assert ok(net, "r0", "arp -n -i r0-eth1") == (
        R0_ARP.splitlines(True)[0]
        + "192.168.1.100                    (incomplete)                              r0-eth1\n")
    assert ok(net, "r0", "arp -a -i r0-eth1") == "? (192.168.1.100) at <incomplete> on r0-eth1\n"


def test_arp_delete(net):
    ok(net, "r0", "arp -d 192.168.1.100")
    assert "192.168.1.100" not in ok(net, "r0", "arp -n")
    res = run(net, "r0", "arp -d 192.168.1.100")  # gone: no entry on the connected subnet
    assert (res.output, res.status, res.kind) == ("No ARP entry for 192.168.1.100\n", 255, ERROR)
    net.new_traffic_round()  # the next probe round resolves it again
    assert "192.168.1.100" in ok(net, "r0", "arp -n")


# net-tools 2.10 `arp -x` (Debian 12): the complaint, then the whole usage text, exit 3
REAL_ARP_BAD_OPTION = """\
arp: invalid option -- 'x'
Usage:
  arp [-vn]  [<HW>] [-i <if>] [-a] [<hostname>]             <-Display ARP cache
  arp [-v]          [-i <if>] -d  <host> [pub]               <-Delete ARP entry
  arp [-vnD] [<HW>] [-i <if>] -f  [<filename>]            <-Add entry from file
  arp [-v]   [<HW>] [-i <if>] -s  <host> <hwaddr> [temp]            <-Add entry
  arp [-v]   [<HW>] [-i <if>] -Ds <host> <if> [netmask <nm>] pub          <-''-

        -a                       display (all) hosts in alternative (BSD) style
        -e                       display (all) hosts in default (Linux) style
        -s, --set                set a new ARP entry
        -d, --delete             delete a specified entry
        -v, --verbose            be verbose
        -n, --numeric            don't resolve names
        -i, --device             specify network interface (e.g. eth0)
        -D, --use-device         read <hwaddr> from given device
        -A, -p, --protocol       specify protocol family
        -f, --file               read new entries from file or from /etc/ethers

  <HW>=Use '-H <hw>' to specify hardware address type. Default: ether
  List of possible hardware types (which support ARP):
    ash (Ash) ether (Ethernet) ax25 (AMPR AX.25) 
    netrom (AMPR NET/ROM) rose (AMPR ROSE) arcnet (ARCnet) 
    dlci (Frame Relay DLCI) fddi (Fiber Distributed Data Interface) hippi (HIPPI) 
    irda (IrLAP) x25 (generic X.25) eui64 (Generic EUI-64) 
"""


def test_arp_usage_errors(net):
    res = run(net, "r0", "arp -x")
    assert (res.output, res.status, res.kind) == (REAL_ARP_BAD_OPTION, 3, INVALID)
    usage = REAL_ARP_BAD_OPTION.split("\n", 1)[1]
    res = run(net, "r0", "arp --bogus")
    assert (res.output, res.status) == ("arp: unrecognized option '--bogus'\n" + usage, 3)
    res = run(net, "r0", "arp -i")
    assert (res.output, res.status) == ("arp: option requires an argument -- 'i'\n" + usage, 3)


def test_ifconfig_lo_address_makes_its_whole_prefix_local():
    # real (Mininet, Linux 6.18, campaign level 1 seed 100: r0-eth1 down, then on r0
    # "ifconfig lo 192.168.2.1 netmask 255.255.255.0"): the lo address's prefix route is
    # RTN_LOCAL, so r0 takes every packet for 192.168.2.0/24 itself:
    #   h3 -> X X h4 X X X        (h3, h4 on 192.168.2.0/24: their replies stop at r0)
    #   h5 -> X X h3 h4 h6 r0     (r0 answers for h3 and h4)
    from netarena_gym.routing.grader import pair_ok
    from netarena_gym.core.ipv4 import ip_to_int
    net = build_network(TopologySpec(hosts=((2, 2, 2),), parents=()))[0]
    ok(net, "r0", "ifconfig r0-eth1 down")
    ok(net, "r0", "ifconfig lo 192.168.2.1 netmask 255.255.255.0")
    assert "local 192.168.2.100 dev lo table local" in run(net, "r0", "ip route get 192.168.2.100").output
    nodes, ip = net.nodes, ip_to_int
    assert pair_ok(net, nodes["h5"], ip("192.168.2.100"), 1.0)  # r0 answers
    assert not pair_ok(net, nodes["h3"], ip("192.168.3.100"), 1.0)  # the reply stops at r0
    assert pair_ok(net, nodes["h3"], ip("192.168.2.101"), 1.0)  # on the LAN, as before
    # 127.0.0.1/8 went with the old lo address
    assert run(net, "r0", "ip route get 127.0.0.5").output == "RTNETLINK answers: Network is unreachable\n"


# ------------------------------------------------------------------- name lookups (no DNS)
# Real net-tools 2.10 in a Mininet node of the backend's sandbox (nodeexec.ETC_FILES: no
# DNS, Debian's /etc/networks, localhost in /etc/hosts), pinned verbatim.
def test_route_and_arp_resolve_like_inet_aton_and_fail_lookups_at_once(net):
    for line in ("route add default gw foo", "route del default gw foo",
                 "route add -host bogus dev h1-eth0",
                 "route add -net 10.0.0.0 netmask 255.0.0.0 gw bogus",
                 "route -n add default gw foo"):
        res = run(net, "h1", line)
        word = line.split()[-1] if "gw" in line else "bogus"
        assert (res.output, res.status, res.kind) == (f"{word}: Unknown host\n", 6, INVALID)
    res = run(net, "h1", "route add 192.168.1.300")
    assert (res.output, res.status) == ("192.168.1.300: Unknown host\n", 6)
    # inet_aton: "10.1" is 10.0.0.1, "255.255.0" is 255.255.0.0, "010" is octal
    res = run(net, "h1", "route add -net 10.1 netmask 255.255.0.0 dev h1-eth0")
    assert res.output.startswith("route: netmask doesn't match route address\n")
    ok(net, "h1", "route add -host 10.1 dev h1-eth0")
    ok(net, "h1", "route add -net 10.2.0.0 netmask 255.255.0 dev h1-eth0")
    ok(net, "h1", "route add -net 010.0.0.0 netmask 255.0.0.0 dev h1-eth0")
    rows = ok(net, "h1", "route -n").splitlines()
    assert "8.0.0.0         0.0.0.0         255.0.0.0       U     0      0        0 h1-eth0" in rows
    assert "10.0.0.1        0.0.0.0         255.255.255.255 UH    0      0        0 h1-eth0" in rows
    assert "10.2.0.0        0.0.0.0         255.255.0.0     U     0      0        0 h1-eth0" in rows


def test_arp_host_argument_is_resolved(net):
    for line in ("arp bogus", "arp -a bogus", "arp -n bogus", "arp -i h1-eth0 bogus",
                 "arp -s bogus 02:00:00:00:00:01"):
        res = run(net, "h1", line)
        assert (res.output, res.status, res.kind) == ("bogus: Unknown host\n", 255, INVALID)
    assert ok(net, "h1", "arp 10") == "10 (0.0.0.10) -- no entry\n"
    assert ok(net, "h1", "arp 192.168.001.77") == "192.168.001.77 (192.168.1.77) -- no entry\n"
    assert ok(net, "h1", "arp 192.168.001.001") == ok(net, "h1", "arp 192.168.1.1")
    assert ok(net, "h1", "arp -a 192.168.001.001").startswith("? (192.168.1.1) at ")
    assert ok(net, "h1", "arp -a 192.168.1.77") == "arp: in 1 entries no match found.\n"


def test_names_match_the_sandbox_files():
    """The names the simulator resolves are the ones the Mininet sandbox binds."""
    from netarena_gym.routing.backends.nodeexec import ETC_FILES
    from netarena_gym.routing.commands.legacy import NAMES, resolve
    import ipaddress
    files = {}
    for line in ETC_FILES["/etc/networks"].splitlines():
        name, addr = line.split()
        files[name] = int(ipaddress.IPv4Address(addr))
    for line in ETC_FILES["/etc/hosts"].splitlines():
        addr, *names = line.split()
        if ":" not in addr:  # gethostbyname() is IPv4-only
            files.update((n, int(ipaddress.IPv4Address(addr))) for n in names)
    assert {k: v for k, v in files.items() if k != "default"} == NAMES
    assert resolve("default") == 0 and resolve("link-local") == 0xA9FE0000
    assert resolve("example.com") is None


def test_route_names_networks_from_etc_networks(net):
    for line in ("ip route add 169.254.0.0/16 dev h1-eth0", "ip route add 127.0.0.0/8 dev h1-eth0",
                 "ip route add 10.0.0.0/8 via 192.168.1.1", "ip route add 169.254.1.1 dev h1-eth0"):
        ok(net, "h1", line)
    assert ok(net, "h1", "route") == (  # real net-tools 2.10, Mininet node
        "Kernel IP routing table\n"
        "Destination     Gateway         Genmask         Flags Metric Ref    Use Iface\n"
        "default         192.168.1.1     0.0.0.0         UG    0      0        0 h1-eth0\n"
        "10.0.0.0        192.168.1.1     255.0.0.0       UG    0      0        0 h1-eth0\n"
        "loopback        0.0.0.0         255.0.0.0       U     0      0        0 h1-eth0\n"
        "link-local      0.0.0.0         255.255.0.0     U     0      0        0 h1-eth0\n"
        "169.254.1.1     0.0.0.0         255.255.255.255 UH    0      0        0 h1-eth0\n"
        "192.168.1.0     0.0.0.0         255.255.255.0   U     0      0        0 h1-eth0\n")
    assert ok(net, "h1", "arp localhost") == "localhost (127.0.0.1) -- no entry\n"
    assert ok(net, "h1", "arp link-local") == "link-local (169.254.0.0) -- no entry\n"
    res = run(net, "h1", "route add -net link-local netmask 255.255.0.0 dev h1-eth0")
    assert (res.output, res.status, res.kind) == ("SIOCADDRT: File exists\n", 7, ERROR)


def test_arp_delete_finds_the_device_by_a_link_scope_lookup(net):
    """Real net-tools 2.10 / Linux 6.18 in Mininet nodes: without -i, SIOCDARP looks the
    address up at scope link (connected subnets and local addresses only)."""
    unreachable = ("SIOCDARP(dontpub): Network is unreachable\n", 255, ERROR)

    def arp_d(node, line):
        res = run(net, node, line)
        return res.output, res.status, res.kind

    assert arp_d("r0", "arp -d 192.168.1.1") == ("No ARP entry for 192.168.1.1\n", 255, ERROR)
    assert arp_d("r0", "arp -d 10.9.9.9") == unreachable
    assert arp_d("h1", "arp -d 192.168.2.100") == unreachable  # only through the gateway
    for kind, net_ in (("unreachable", "10.5"), ("blackhole", "10.6"), ("prohibit", "10.7")):
        ok(net, "r0", f"ip route add {kind} {net_}.0.0/16")
        assert arp_d("r0", f"arp -d {net_}.0.1") == unreachable
    ok(net, "r0", "ip link set r0-eth2 down")
    assert arp_d("r0", "arp -d 192.168.2.101") == unreachable
    ok(net, "r0", "ip rule add prohibit pref 0")
    assert arp_d("r0", "arp -d 192.168.1.100") == (
        "SIOCDARP(dontpub): Permission denied\n", 255, ERROR)
    assert arp_d("r0", "arp -d 192.168.1.100 -i r0-eth1") == ("", 0, OK)


def test_route_add_via_an_own_address_has_scope_global(net):
    # real (Mininet, Linux 6.18, the baseline's rules added: main and local tables unmerged):
    # 'default via 192.168.1.1 dev r0-eth1' without 'scope link', so 'arp -d' (a scope-link
    # lookup) finds no device for a host whose connected route is gone
    ok(net, "r0", "ip route del 192.168.1.0/24")
    ok(net, "r0", "route add default gw 192.168.1.1")
    assert "default via 192.168.1.1 dev r0-eth1 \n" in ok(net, "r0", "ip route show")
    res = run(net, "r0", "arp -d 192.168.1.100")
    assert (res.output, res.status) == ("SIOCDARP(dontpub): Network is unreachable\n", 255)
    ok(net, "r0", "route del default gw 192.168.1.1")
    assert "default" not in ok(net, "r0", "ip route show")


@pytest.mark.parametrize("args, output, status", [
    # real (Mininet, net-tools 2.10): every ioctl of a missing device fails with ENODEV and
    # ifconfig goes on; a flag change (set_flag/clr_flag, also after an address or a
    # broadcast) returns -1, so it exits 255, other failures 1
    ("down", "eth9: ERROR while getting interface flags: No such device\n", 255),
    ("mtu 1400", "SIOCSIFMTU: No such device\n", 1),
    ("netmask 255.255.255.0", "SIOCSIFNETMASK: No such device\n", 1),
    ("192.168.9.1/24", "SIOCSIFADDR: No such device\n"
     "eth9: ERROR while getting interface flags: No such device\n"
     "SIOCSIFNETMASK: No such device\n", 255),
    ("mtu 1400 up", "SIOCSIFMTU: No such device\n"
     "eth9: ERROR while getting interface flags: No such device\n", 255),
    ("broadcast 192.168.9.255", "SIOCSIFBRDADDR: No such device\n"
     "eth9: ERROR while getting interface flags: No such device\n", 255),
    ("broadcast", "eth9: ERROR while getting interface flags: No such device\n", 255),
])
def test_ifconfig_of_a_missing_device(net, args, output, status):
    res = run(net, "r0", f"ifconfig eth9 {args}")
    assert (res.output, res.status, res.kind) == (output, status, ERROR)
