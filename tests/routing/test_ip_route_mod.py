"""``ip route add|replace`` with a gateway that is one of the router's own addresses.

Real behaviour pinned from Linux 6.18 / iproute2 6.1 on the Mininet backend: the kernel
accepts the route (``fib_check_nh_v4_gw`` finds the gateway in ``local``: nexthop scope
host), ``ip route`` prints it with ``via``, ``ip route get`` without (``rt_set_nexthop``
uses the gateway only at scope link), and packets go on-link to the destination itself."""
import shlex

import pytest

from netarena_gym.shell.parser import ERROR, OK
from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.commands import REGISTRY, CommandContext
from netarena_gym.routing.commands import ip as _ip  # noqa: F401  (registers "ip")
from netarena_gym.routing.commands import legacy as _legacy  # noqa: F401  (registers "route")
from netarena_gym.routing.faults import Fault

from .conftest import SMALL, broken, scenario

# remove_ip method 3: r0's own address on r0-eth1 with a wrong mask (h1 falls outside)
WRONG_MASK = Fault("remove_ip", 3, "r0", {"interface": "r0-eth1", "address": "192.168.1.1/30"})


@pytest.fixture
def sim():
    b = SimBackend()
    b.apply(scenario([WRONG_MASK], SMALL))
    return b


def sh(b, line, node="r0"):
    return b.run({"machine": node, "command": line})


def out(b, line, node="r0"):
    res = sh(b, line, node)
    assert (res.status, res.kind) == (0, OK), res.output
    return res.output


def pairs_ok(b) -> int:
    m = b.observe()
    return int(m.sum()) - len(m)


def test_own_address_gateway_forwards_on_link(sim):
    # real: 12/20 pairs after the fault, 20/20 after the route (upstream's record: 0% loss)
    assert pairs_ok(sim) == 12
    assert out(sim, "ip route add 192.168.1.0/24 via 192.168.1.1 dev r0-eth1") == ""
    assert pairs_ok(sim) == 20
    assert out(sim, "ip route show") == (
        "192.168.1.0/30 dev r0-eth1 proto kernel scope link src 192.168.1.1 \n"
        "192.168.1.0/24 via 192.168.1.1 dev r0-eth1 \n"
        "192.168.2.0/24 dev r0-eth2 proto kernel scope link src 192.168.2.1 \n"
        "192.168.3.0/24 dev r0-eth3 proto kernel scope link src 192.168.3.1 \n")
    assert out(sim, "ip route get 192.168.1.100") == (
        "192.168.1.100 dev r0-eth1 src 192.168.1.1 uid 0 \n    cache \n")
    assert out(sim, "ip -d route show 192.168.1.0/24") == (
        "unicast 192.168.1.0/24 via 192.168.1.1 dev r0-eth1 proto boot scope global \n")
    # /proc/net/route keeps the gateway: route -n flags it UG
    assert ("192.168.1.0     192.168.1.1     255.255.255.0   UG    0      0        0 r0-eth1\n"
            in out(sim, "route -n"))
    # r0 resolved h1 itself, on r0-eth1
    assert out(sim, "ip neigh show dev r0-eth1").startswith("192.168.1.100 lladdr ")


def test_own_address_gateway_without_dev_and_replace(sim):
    # the device is the one holding the address (real: "via 192.168.1.1 dev r0-eth1")
    assert out(sim, "ip route add 192.168.1.0/24 via 192.168.1.1") == ""
    assert out(sim, "ip route show 192.168.1.0/24") == "192.168.1.0/24 via 192.168.1.1 dev r0-eth1 \n"
    assert pairs_ok(sim) == 20
    assert out(sim, "ip route del 192.168.1.0/24 via 192.168.1.1") == ""
    assert pairs_ok(sim) == 12
    assert out(sim, "ip route replace 192.168.1.0/24 via 192.168.1.1 dev r0-eth1") == ""
    assert pairs_ok(sim) == 20


def test_own_address_on_another_device_routes_out_of_that_device(sim):
    # real: "192.168.1.0/24 via 192.168.2.1 dev r0-eth2", get: "dev r0-eth2 src 192.168.2.1"
    assert out(sim, "ip route add 192.168.1.0/24 via 192.168.2.1") == ""
    assert out(sim, "ip route show 192.168.1.0/24") == "192.168.1.0/24 via 192.168.2.1 dev r0-eth2 \n"
    assert out(sim, "ip route get 192.168.1.100") == (
        "192.168.1.100 dev r0-eth2 src 192.168.2.1 uid 0 \n    cache \n")
    # h1 is not on s2: r0's ARP for it there goes unanswered (real: INCOMPLETE for 3 s)
    assert pairs_ok(sim) == 12
    assert "192.168.1.100 dev r0-eth2 INCOMPLETE \n" in out(sim, "ip neigh show")


@pytest.mark.parametrize("line", [
    "ip route add 192.168.1.0/24 via 192.168.2.1 dev r0-eth1",  # local, but on another dev
    "ip route add 192.168.1.0/24 via 192.168.1.1 dev r0-eth1 onlink",
    "ip route add 10.9.8.0/24 via 192.168.1.1 dev r0-eth2",
])
def test_own_address_gateway_rejections(sim, line):
    res = sh(sim, line)
    assert (res.output, res.status, res.kind) == ("Error: Nexthop has invalid gateway.\n", 2, ERROR)


def test_own_address_gateway_in_a_custom_table_and_via_loopback(sim):
    assert out(sim, "ip route add 10.9.7.0/24 via 192.168.1.1 table 5") == ""
    assert out(sim, "ip route show table 5") == "10.9.7.0/24 via 192.168.1.1 dev r0-eth1 \n"
    assert out(sim, "ip route add 10.9.9.0/24 via 127.0.0.1") == ""
    assert out(sim, "ip route show 10.9.9.0/24") == "10.9.9.0/24 via 127.0.0.1 dev lo \n"


def test_route_goes_with_the_last_address_of_its_device(sim):
    out(sim, "ip route add 192.168.1.0/24 via 192.168.1.1 dev r0-eth1")
    out(sim, "ip addr del 192.168.1.1/30 dev r0-eth1")
    assert "r0-eth1" not in out(sim, "ip route show")
    out(sim, "ip addr add 192.168.1.1/24 dev r0-eth1")
    assert out(sim, "ip route show 192.168.1.0/24") == (
        "192.168.1.0/24 dev r0-eth1 proto kernel scope link src 192.168.1.1 \n")
    assert not broken(sim.state)


def test_wrong_routing_table_method_4_loops_back_out_of_the_wrong_interface():
    # upstream WR m4: del the subnet's route, add it "via" the router's own 192.168.t.1;
    # real: accepted, "192.168.1.0/24 via 192.168.2.1 dev r0-eth2", 12/20 pairs
    b = SimBackend()
    b.apply(scenario([], SMALL))
    assert out(b, "ip route del 192.168.1.0/24 dev r0-eth1") == ""
    assert out(b, "ip route add 192.168.1.0/24 dev r0-eth2 via 192.168.2.1") == ""
    assert out(b, "ip route show 192.168.1.0/24") == "192.168.1.0/24 via 192.168.2.1 dev r0-eth2 \n"
    assert pairs_ok(b) == 12


def test_legacy_route_add_with_own_gateway(sim):
    res = REGISTRY["route"](CommandContext(sim.state.net, sim.state.net.nodes["r0"]),
                            shlex.split("route add -net 192.168.1.0/24 gw 192.168.1.1"), "")
    assert (res.status, res.kind) == (0, OK), res.output
    assert pairs_ok(sim) == 20
