"""Deriving the intended configuration from inspection output, with and without labels."""
from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.views import INSPECT, derive_intent, parse_inspection

from .conftest import scenario

TWO = {"hosts": [[1], [1]], "parents": [0]}


def views(topology, level):
    b = SimBackend()
    b.apply(scenario([], topology, level=level))
    return {r: parse_inspection(b.run({"machine": r, "command": INSPECT}).output)
            for r in b.layout.routers}


def test_labels_and_the_single_router_plan_agree():
    small = {"hosts": [[1, 2, 1]], "parents": []}
    labelled, plain = views(small, 1), views(small, "compat")
    assert labelled["r0"].ifaces["r0-eth2"].alias == "LAN s2 192.168.2.1/24"
    assert plain["r0"].ifaces["r0-eth2"].alias is None
    a, b = derive_intent(labelled), derive_intent(plain)
    assert a == b
    assert b.addrs[("r0", "r0-eth3")] == ("192.168.3.1", 24)
    assert b.routes["r0"]["192.168.1.0/24"] == ("r0-eth1", None)


def test_several_routers_without_labels_leave_the_intent_unknown():
    plain = views(TWO, "compat")
    assert derive_intent(plain).addrs == {}
    intent = derive_intent(views(TWO, 1))
    assert intent.routes["r0"]["192.168.2.0/24"] == ("r0-eth2", "172.16.0.2")
