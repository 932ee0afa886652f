"""The dynamic neighbour cache (:mod:`netarena_gym.routing.neigh`) against what Linux 6.18
shows on the Mininet backend (which flushes the caches before each probe round). Real
outputs are pinned with their MAC addresses replaced by the simulator's."""
import pytest

from netarena_gym.shell.parser import ERROR, OK
from netarena_gym.routing import neigh
from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.faults import Fault

from .conftest import SMALL, scenario

ARP_HEADER = "Address                  HWtype  HWaddress           Flags Mask            Iface\n"


@pytest.fixture
def sim():
    b = SimBackend()
    b.apply(scenario([], SMALL))
    b.observe()
    return b


def out(b, line, node="r0"):
    res = b.run({"machine": node, "command": line})
    assert (res.status, res.kind) == (0, OK), res.output
    return res.output


def test_probe_round_fills_every_table(sim):
    # real (sorted; kernel 6.18 lists in hash order, and an entry learnt from a request and
    # then used is DELAY for 5 s before it settles to REACHABLE)
    assert out(sim, "ip neigh show") == (
        "192.168.1.100 dev r0-eth1 lladdr 02:00:00:00:02:00 REACHABLE \n"
        "192.168.2.100 dev r0-eth2 lladdr 02:00:00:00:03:00 REACHABLE \n"
        "192.168.2.101 dev r0-eth2 lladdr 02:00:00:00:04:00 REACHABLE \n"
        "192.168.3.100 dev r0-eth3 lladdr 02:00:00:00:05:00 REACHABLE \n")
    assert out(sim, "ip neigh show", "h1") == (
        "192.168.1.1 dev h1-eth0 lladdr 02:00:00:00:01:01 REACHABLE \n")
    # a host learns its gateway and the hosts of its own subnet, nobody else
    assert out(sim, "arp -n", "h2") == ARP_HEADER + (
        "192.168.2.1              ether   02:00:00:00:01:02   C                     h2-eth0\n"
        "192.168.2.101            ether   02:00:00:00:04:00   C                     h2-eth0\n")


def test_flush_empties_until_the_next_round(sim):
    assert out(sim, "ip neigh flush all") == ""
    assert out(sim, "ip neigh show") == "" and out(sim, "arp -n") == "" and out(sim, "arp -an") == ""
    assert out(sim, "ip -s neigh flush all") == "Nothing to flush.\n"
    sim.observe()
    assert out(sim, "ip neigh show").count("\n") == 4
    assert out(sim, "ip -s neigh flush dev r0-eth3") == (
        "\n*** Round 1, deleting 1 entries ***\n*** Flush is complete after 1 round ***\n")
    assert "r0-eth3" not in out(sim, "ip neigh show")


def test_agent_ping_resolves_into_the_current_round(sim):
    out(sim, "ip neigh flush all")
    out(sim, "ping -c1 192.168.2.100")
    assert out(sim, "ip neigh show") == (
        "192.168.2.100 dev r0-eth2 lladdr 02:00:00:00:03:00 REACHABLE \n")
    # the pinged host learnt r0 from its request and answered through that entry
    assert "192.168.2.1 dev h2-eth0 lladdr 02:00:00:00:01:02 REACHABLE \n" in out(
        sim, "ip neigh show", "h2")


def test_unanswered_resolution_is_incomplete(sim):
    assert sim.run({"machine": "r0", "command": "ping -c1 -W1 192.168.1.77"}).status == 1
    # real (Mininet, kernel 6.18): INCOMPLETE for the 3 s of solicitations, FAILED after;
    # right after ping -W1 it still says INCOMPLETE
    assert out(sim, "ip neigh show 192.168.1.77") == "192.168.1.77 dev r0-eth1 INCOMPLETE \n"
    assert out(sim, "ip neigh show nud incomplete") == "192.168.1.77 dev r0-eth1 INCOMPLETE \n"
    assert out(sim, "ip neigh show nud failed") == ""
    assert out(sim, "arp -n -i r0-eth1") == ARP_HEADER + (
        "192.168.1.77                     (incomplete)                              r0-eth1\n"
        "192.168.1.100            ether   02:00:00:00:02:00   C                     r0-eth1\n")
    assert out(sim, "arp -an -i r0-eth1") == (
        "? (192.168.1.77) at <incomplete> on r0-eth1\n"
        "? (192.168.1.100) at 02:00:00:00:02:00 [ether] on r0-eth1\n")
    assert out(sim, "ip neigh flush to 192.168.1.77") == ""
    assert "192.168.1.77" not in out(sim, "ip neigh show")


def test_link_down_and_last_address_drop_the_devices_entries(sim):
    # real: the entries stay gone when the link comes back within the round (no traffic)
    assert "r0-eth3" not in out(sim, "ip link set r0-eth3 down; ip neigh show; ip link set r0-eth3 up")
    assert "r0-eth3" not in out(sim, "ip neigh show")
    sim.observe()
    assert "r0-eth3" in out(sim, "ip neigh show")
    out(sim, "ip addr flush dev r0-eth3")
    assert "r0-eth3" not in out(sim, "ip neigh show")


def test_prohibit_rule_leaves_only_entries_learnt_from_requests():
    # issue 12 item 4. Upstream's record printed nothing for `arp -n`; Linux 6.18 lists the
    # hosts STALE: the rule sits after `lookup local`, so r0 still answers the hosts' ARP
    # requests for its own addresses (and learns them), but never sends anything itself
    b = SimBackend()
    b.apply(scenario([Fault("disable_routing", 3, "r0", {})], SMALL))
    m = b.observe()
    assert int(m.sum()) - len(m) == 2  # real: 2/20 (h2 <-> h3 only)
    assert out(b, "ip neigh show") == (
        "192.168.1.100 dev r0-eth1 lladdr 02:00:00:00:02:00 STALE \n"
        "192.168.2.100 dev r0-eth2 lladdr 02:00:00:00:03:00 STALE \n"
        "192.168.2.101 dev r0-eth2 lladdr 02:00:00:00:04:00 STALE \n"
        "192.168.3.100 dev r0-eth3 lladdr 02:00:00:00:05:00 STALE \n")
    assert out(b, "ip neigh show nud stale").count("\n") == 4
    assert out(b, "ip neigh show", "h1") == (
        "192.168.1.1 dev h1-eth0 lladdr 02:00:00:00:01:01 REACHABLE \n")


def test_arp_delete_removes_until_the_next_round(sim):
    assert out(sim, "arp -d 192.168.2.100") == ""
    res = sim.run({"machine": "r0", "command": "arp -d 192.168.2.100"})
    assert (res.output, res.status, res.kind) == ("No ARP entry for 192.168.2.100\n", 255, ERROR)
    assert out(sim, "arp -n -i eth9") == "arp: in 3 entries no match found.\n"
    sim.observe()
    assert "192.168.2.100" in out(sim, "arp -n")


def test_round_is_a_cached_pure_function_of_the_configuration(sim):
    net = sim.state.net
    first = neigh.round_tables(net)
    assert neigh.round_tables(net) is first
    out(sim, "ip link set r0-eth2 mtu 1400")
    changed = neigh.round_tables(net)
    assert changed is not first
    out(sim, "ip link set r0-eth2 mtu 1500")
    assert neigh.round_tables(net) == first  # same content, same tables
    other = SimBackend()
    other.apply(scenario([], SMALL))
    assert neigh.round_tables(other.state.net) == first


def fail(b, line, node="r0"):
    res = b.run({"machine": node, "command": line})
    return res.output, res.status, res.kind


def pair(b, a, z):
    names = b.names
    return bool(b.observe()[names.index(a), names.index(z)])


# ------------------------------------------------------------ ip neigh add / replace / del
def test_neigh_add_argument_errors_as_iproute2(sim):
    # real iproute2 6.1.0 / Linux 6.18 answers, pinned in a network namespace
    assert fail(sim, "ip neigh add 192.168.1.9 lladdr zz dev r0-eth1") == (
        '"zz" is invalid lladdr.\n', 1, ERROR)
    assert fail(sim, "ip neigh add 192.168.1.9 lladdr 02:00:00:00:00 dev r0-eth1") == (
        "Error: Invalid link address.\n", 2, ERROR)
    assert fail(sim, "ip neigh add 300.1.1.1 lladdr 02:00:00:00:00:01 dev r0-eth1")[:2] == (
        'Error: any valid address is expected rather than "300.1.1.1".\n', 1)
    assert fail(sim, "ip neigh add 192.168.1.9 lladdr 02:00:00:00:00:01 dev r0-eth1 nud bogus"
                )[:2] == ('Error: argument "bogus" is wrong: nud state is bad\n', 255)
    assert fail(sim, "ip neigh add 192.168.1.9 lladdr 02:00:00:00:00:01 dev r0-eth1 bogus")[:2] == (
        'Error: either "to" is duplicate, or "bogus" is a garbage.\n', 255)
    for line in ("ip neigh add 192.168.1.9 lladdr 02:00:00:00:00:01", "ip neigh add dev r0-eth1",
                 "ip neigh del 192.168.1.100"):
        assert fail(sim, line)[:2] == ("Device and destination are required arguments.\n", 255)
    assert fail(sim, "ip neigh add 192.168.1.9 dev r0-eth1") == (
        "Error: No link layer address given.\n", 2, ERROR)
    assert fail(sim, "ip neigh add 192.168.1.9 lladdr 02:00:00:00:00:01 dev eth9") == (
        'Cannot find device "eth9"\n', 1, ERROR)
    assert fail(sim, "ip neigh del 192.168.1.9 dev r0-eth1") == (
        "RTNETLINK answers: No such file or directory\n", 2, ERROR)
    assert fail(sim, "ip neigh change 192.168.1.9 lladdr 02:00:00:00:00:01 dev r0-eth1") == (
        "RTNETLINK answers: No such file or directory\n", 2, ERROR)


def test_permanent_entries(sim):
    # an entry traffic resolved exists: add refuses, as for any existing entry
    assert fail(sim, "ip neigh add 192.168.1.100 lladdr 02:00:00:00:00:01 dev r0-eth1") == (
        "RTNETLINK answers: File exists\n", 2, ERROR)
    assert pair(sim, "h1", "h2")
    # a wrong MAC: r0's frames to h1 go nowhere, its replies to h1's pings too
    out(sim, "ip neigh replace 192.168.1.100 lladdr 2:0:0:0:0:1 dev r0-eth1")
    assert out(sim, "ip neigh show dev r0-eth1") == "192.168.1.100 lladdr 02:00:00:00:00:01 PERMANENT \n"
    assert not pair(sim, "h1", "h2") and not pair(sim, "h1", "r0") and pair(sim, "h2", "h3")
    # kept by probe rounds and a plain flush; shown by arp and /proc/net/arp (flags 0x6, CM)
    out(sim, "ip neigh flush all")
    assert out(sim, "arp -n -i r0-eth1") == ARP_HEADER + (
        "192.168.1.100            ether   02:00:00:00:00:01   CM                    r0-eth1\n")
    assert out(sim, "arp -a -i r0-eth1") == (
        "? (192.168.1.100) at 02:00:00:00:00:01 [ether] PERM on r0-eth1\n")
    assert out(sim, "cat /proc/net/arp") == (
        "IP address       HW type     Flags       HW address            Mask     Device\n"
        "192.168.1.100    0x1         0x6         02:00:00:00:00:01     *        r0-eth1\n")
    # the right MAC works; del drops it and ARP takes over again
    mac = sim.state.net.nodes["h1"].interfaces["h1-eth0"].mac
    out(sim, f"ip neigh change 192.168.1.100 lladdr {mac} dev r0-eth1")
    assert pair(sim, "h1", "h2")
    out(sim, "ip neigh replace 192.168.1.100 lladdr 02:00:00:00:00:01 dev r0-eth1")
    out(sim, "ip neigh del 192.168.1.100 dev r0-eth1")
    assert pair(sim, "h1", "h2")
    # nud permanent flushes them; so does taking the link down
    out(sim, "ip neigh add 192.168.1.7 lladdr 02:00:00:00:00:07 dev r0-eth1")
    out(sim, "ip neigh flush dev r0-eth1 nud permanent")
    assert "192.168.1.7" not in out(sim, "ip neigh show")
    out(sim, "ip neigh add 192.168.1.7 lladdr 02:00:00:00:00:07 dev r0-eth1")
    out(sim, "ip link set r0-eth1 down")
    out(sim, "ip link set r0-eth1 up")
    assert "192.168.1.7" not in out(sim, "ip neigh show")


def test_proc_net_arp_lists_unresolved_entries_with_zero_flags(sim):
    out(sim, "ip neigh flush all")
    sim.run({"machine": "r0", "command": "ping -c1 -W1 192.168.1.50"})
    assert out(sim, "cat /proc/net/arp") == (
        "IP address       HW type     Flags       HW address            Mask     Device\n"
        "192.168.1.50     0x1         0x0         00:00:00:00:00:00     *        r0-eth1\n")


def test_arp_off_stops_resolving_and_answering_on_the_device(sim):
    # Linux: IFF_NOARP neighbours get NUD_NOARP with the device's own MAC (no one takes
    # the frames) and arp_rcv drops requests heard on it; the flag change flushes the
    # device's entries (neigh_changeaddr); /proc/net/arp and ip neigh hide NOARP entries
    out(sim, "ip link set r0-eth2 arp off")
    assert "<BROADCAST,MULTICAST,NOARP,UP,LOWER_UP>" in out(sim, "ip link show r0-eth2")
    assert out(sim, "ifconfig r0-eth2").startswith(
        "r0-eth2: flags=4291<UP,BROADCAST,RUNNING,NOARP,MULTICAST>  mtu 1500\n")
    assert not pair(sim, "h2", "r0") and not pair(sim, "h2", "h1") and not pair(sim, "h1", "h2")
    assert pair(sim, "h2", "h3") and pair(sim, "h1", "h4")  # the LAN itself, other ports
    assert "r0-eth2" not in out(sim, "ip neigh show") + out(sim, "arp -n")
    out(sim, "ifconfig r0-eth2 arp")
    assert pair(sim, "h2", "h1") and "NOARP" not in out(sim, "ip link show r0-eth2")
    out(sim, "ifconfig r0-eth2 -arp")
    assert not pair(sim, "h2", "h1")
    out(sim, "ip link set dev r0-eth2 arp on")
    assert pair(sim, "h2", "h1")


def test_neighbours_on_lo_are_all_keyed_0_0_0_0(sim):
    # real (Mininet, Linux 6.18, iproute2 6.1, on a host): the kernel keys every loopback
    # neighbour as 0.0.0.0; the address given is looked up first and not found
    nd = "lladdr 02:00:00:00:00:0"
    assert out(sim, f"ip neighbour add 192.168.3.100 {nd}1 dev lo", "h1") == ""
    assert out(sim, f"ip neigh add 10.1.1.1 {nd}2 dev lo", "h1") == ""  # overrides
    assert out(sim, "ip neigh show dev lo", "h1") == "0.0.0.0 lladdr 02:00:00:00:00:02 PERMANENT \n"
    assert fail(sim, f"ip neigh change 10.1.1.1 {nd}3 dev lo", "h1") == (
        "RTNETLINK answers: No such file or directory\n", 2, ERROR)
    assert out(sim, f"ip neigh replace 10.1.1.1 {nd}4 dev lo", "h1") == ""
    assert out(sim, "ip neigh show 0.0.0.0", "h1") == (
        "0.0.0.0 dev lo lladdr 02:00:00:00:00:04 PERMANENT \n")
    assert out(sim, "ip neigh add 1.2.3.4 dev lo", "h1") == ""  # keeps the entry's MAC
    assert out(sim, "ip neigh show nud permanent", "h1") == (
        "0.0.0.0 dev lo lladdr 02:00:00:00:00:04 PERMANENT \n")
    assert fail(sim, "ip neigh del 10.1.1.1 dev lo", "h1") == (
        "RTNETLINK answers: No such file or directory\n", 2, ERROR)
    assert out(sim, "ip neigh del 0.0.0.0 dev lo", "h1") == ""
    assert "dev lo" not in out(sim, "ip neigh show", "h1")
    assert fail(sim, "ip neigh add 1.2.3.4 dev lo", "h1") == (
        "Error: No link layer address given.\n", 2, ERROR)
    assert out(sim, f"ip neigh add 0.0.0.0 {nd}5 dev lo", "h1") == ""
    assert fail(sim, f"ip neigh add 0.0.0.0 {nd}5 dev lo", "h1") == (
        "RTNETLINK answers: File exists\n", 2, ERROR)
    assert out(sim, f"ip neigh change 0.0.0.0 {nd}6 dev lo", "h1") == ""
    assert out(sim, "ip neigh flush dev lo", "h1") == ""  # a permanent entry stays
    assert out(sim, "ip neigh show dev lo", "h1") == "0.0.0.0 lladdr 02:00:00:00:00:06 PERMANENT \n"
    assert out(sim, "ip neigh flush nud permanent", "h1") == ""
    assert out(sim, "ip neigh show dev lo", "h1") == ""


def test_siocdarp_deletes_on_the_device_of_the_link_scope_route(sim):
    # real (Mininet, Linux 6.18, net-tools 2.10, on r0 after a probe round):
    #   arp -d 192.168.3.100            -> (nothing), exit 0; again: No ARP entry for ...
    #   arp -d 10.9.9.9                 -> SIOCDARP(dontpub): Network is unreachable, 255
    #   (after ip route add 10.9.9.0/24 via 192.168.1.100: the same, a gateway route)
    #   arp -d 192.168.1.1              -> No ARP entry for 192.168.1.1 (r0's own)
    #   ip rule add prohibit pref 5; arp -d 192.168.1.100
    #                                   -> SIOCDARP(dontpub): Permission denied, 255
    #   arp -i r0-eth1 -d 192.168.1.100 -> exit 0 (no route lookup with a device)
    #   ip route add blackhole 192.168.1.101/32; arp -d 192.168.1.101 -> exit 0 (scope
    #   global: skipped; the /24 link route decides; here on s2, which has two hosts)
    #   ip rule del pref 32766; arp -d 192.168.2.100 -> SIOCDARP(dontpub): Network is unreachable
    net = sim.state.net
    r0 = net.nodes["r0"]
    from netarena_gym.core.ipv4 import ip_to_int as ip
    assert neigh.siocdarp(net, r0, ip("192.168.3.100")) is None
    assert neigh.siocdarp(net, r0, ip("192.168.3.100")) == neigh.NO_ENTRY
    assert neigh.siocdarp(net, r0, ip("10.9.9.9")) == "Network is unreachable"
    out(sim, "ip route add 10.9.9.0/24 via 192.168.1.100")
    assert neigh.siocdarp(net, r0, ip("10.9.9.9")) == "Network is unreachable"
    assert neigh.siocdarp(net, r0, ip("192.168.1.1")) == neigh.NO_ENTRY
    out(sim, "ip rule add prohibit pref 5")
    assert neigh.siocdarp(net, r0, ip("192.168.1.100")) == "Permission denied"
    assert neigh.siocdarp(net, r0, ip("192.168.1.100"), "r0-eth1") is None
    out(sim, "ip rule del pref 5")
    out(sim, "ip route add blackhole 192.168.2.101/32")
    assert neigh.siocdarp(net, r0, ip("192.168.2.101")) is None
    out(sim, "ip rule del pref 32766")
    assert neigh.siocdarp(net, r0, ip("192.168.2.100")) == "Network is unreachable"
    assert neigh.siocdarp(net, r0, ip("192.168.2.100"), "r0-eth2") is None
