"""Every fault type and method: injected with its real commands, the broken pairs asserted
exactly, then repaired by the expert from observations alone."""
import gymnasium as gym
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.agents.episode import play_episode
from netarena_gym.routing.expert import RoutingExpert
from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.routing.faults import METHODS, Fault
from netarena_gym.routing.topology import Layout

from .conftest import both, broken, scenario

CROSS_2 = both("h2", ["h1", "h4"]) | both("h3", ["h1", "h4"])
SUBNET2_CUT = CROSS_2 | both("h2", ["r0"]) | both("h3", ["r0"])
ALL_CROSS = (both("h1", ["h2", "h3", "h4"]) | both("h4", ["h2", "h3"]))
ROUTER_ONLY_2 = both("h2", ["r0"]) | both("h3", ["r0"])
EVERYTHING_BUT_SAME_SUBNET = ALL_CROSS | both("r0", ["h1", "h2", "h3", "h4"])
H3_CUT = both("h3", ["h1", "h4", "r0"])

WR = {"subnet": "192.168.2.0/24", "dev": "r0-eth2", "via": None, "wrong_dev": "r0-eth3",
      "wrong_ip": "192.168.3.1"}
CASES = [
    ("disable_routing", 1, {}, ALL_CROSS),
    ("disable_routing", 2, {}, ALL_CROSS),
    ("disable_routing", 3, {}, EVERYTHING_BUT_SAME_SUBNET),
    ("disable_routing", 4, {"subnet": "192.168.2.0/24"}, CROSS_2),
    ("disable_routing", 5, {}, EVERYTHING_BUT_SAME_SUBNET),
    ("disable_interface", 1, {"interface": "r0-eth2"}, SUBNET2_CUT),
    ("disable_interface", 2, {"interface": "r0-eth2"}, SUBNET2_CUT),
    ("disable_interface", 3, {"interface": "r0-eth2"}, SUBNET2_CUT),
    ("disable_interface", 4, {"interface": "r0-eth2", "loss_pct": 60}, SUBNET2_CUT),
    ("remove_ip", 1, {"interface": "r0-eth2"}, SUBNET2_CUT),
    ("remove_ip", 2, {"interface": "r0-eth2", "address": "10.7.9.1/24"}, SUBNET2_CUT),
    ("remove_ip", 3, {"interface": "r0-eth2", "address": "192.168.2.1/30"}, SUBNET2_CUT),
    ("remove_ip", 4, {"interface": "r0-eth2", "address": "192.168.1.1/24"}, SUBNET2_CUT),
    ("drop_traffic_to_from_subnet", 1, {"subnet": "192.168.2.0/24"}, ROUTER_ONLY_2),
    ("drop_traffic_to_from_subnet", 2, {"subnet": "192.168.2.0/24"}, ROUTER_ONLY_2),
    ("drop_traffic_to_from_subnet", 3, {"subnet": "192.168.2.0/24"}, ROUTER_ONLY_2),
    ("drop_traffic_to_from_subnet", 4, {"subnet": "192.168.2.0/24", "interface": "r0-eth2",
                                        "delay_ms": 1500}, SUBNET2_CUT),
    ("drop_traffic_to_from_subnet", 6, {"subnet": "192.168.2.0/24", "interface": "r0-eth2",
                                        "corrupt_pct": 30}, SUBNET2_CUT),
    ("wrong_routing_table", 1, WR, SUBNET2_CUT),
    ("wrong_routing_table", 2, WR, SUBNET2_CUT),
    ("wrong_routing_table", 3, {**WR, "metric": 7000}, SUBNET2_CUT),
    ("wrong_routing_table", 4, WR, SUBNET2_CUT),
    ("wrong_routing_table", 5, {"host": "h3", "address": "192.168.2.101/32"}, H3_CUT),
]


def test_cases_cover_every_observable_method():
    covered = {(t, m) for t, m, _, _ in CASES}
    expected = {(t, m) for t, ms in METHODS.items() for m, spec in ms.items() if spec.observable_alone}
    assert covered == expected


@pytest.mark.parametrize("ftype,method,params,expected", CASES,
                         ids=[f"{t}-{m}" for t, m, _, _ in CASES])
def test_fault_breaks_exactly_and_expert_repairs(build, ftype, method, params, expected):
    fault = Fault(ftype, method, "r0", params)
    state = build(fault)
    assert broken(state) == expected
    env = gym.make("NetArena-Routing-v0", level=1, max_steps=15)
    res = play_episode(env, RoutingExpert(), options={"scenario": scenario([fault])})
    assert res.correct and res.safe, res.metrics


def test_wrong_mask_wider_than_subnet_is_invisible(build):
    """/8 and /16 keep the hosts reachable (upstream's queries could be healthy at step 0)."""
    for plen in (8, 16):
        st = build(Fault("remove_ip", 3, "r0", {"interface": "r0-eth2", "address": f"192.168.2.1/{plen}"}))
        assert broken(st) == set()


def test_tcp_only_drop_is_invisible_to_ping(build):
    st = build(Fault("drop_traffic_to_from_subnet", 5, "r0", {"subnet": "192.168.2.0/24"}))
    assert broken(st) == set()
    assert not METHODS["drop_traffic_to_from_subnet"][5].observable_alone


def test_address_on_a_downed_interface_stays_reachable_through_others(build):
    """The kernel keeps the local route of an address whose link is down (checked on a
    real kernel): only the subnet behind the link is cut off, 192.168.1.1 still answers."""
    st = build(Fault("disable_interface", 2, "r0", {"interface": "r0-eth1"}))
    assert broken(st) == both("h1", ["h2", "h3", "h4", "r0"])


def test_injection_commands_are_recorded_with_outcomes(build):
    st = build(Fault("wrong_routing_table", 2, "r0", WR))
    cmds = [(m, c, r.status) for m, c, r in st.injection]
    assert cmds[0][1] == "ip route del 192.168.2.0/24 dev r0-eth2" and cmds[0][2] == 0
    assert cmds[1][1] == "ip route add 192.168.2.0/24 via 10.255.255.254"
    assert cmds[1][2] != 0  # rejected gateway: the route simply stays deleted


def test_inert_names_exactly_the_wider_masks_that_break_nothing(build):
    """A wider mask on a LAN (/8, /16) breaks no pair on the intact network; a narrower one
    cuts the subnet off, and on a transit link any mask does (the flush takes the static
    routes through the link along)."""
    from netarena_gym.routing.faults import inert
    from netarena_gym.routing.topology import Layout, TopologySpec
    two = {"hosts": [[1], [1]], "parents": [0]}
    lay = Layout(TopologySpec.from_dict(two))
    for itf, ip, plen, masks in (("r0-eth2", "192.168.2.1", 24, (8, 16, 30, 31, 32)),
                                 ("r0-eth1", "192.168.1.1", 24, (8, 16, 30)),
                                 ("r1-eth2", "172.16.0.2", 30, (8, 16, 24, 31, 32))):
        for mask in masks:
            f = Fault("remove_ip", 3, itf.split("-")[0], {"interface": itf,
                                                          "address": f"{ip}/{mask}"})
            topo = two if itf.startswith("r1") else None
            st = build(f, topology=topo) if topo else build(f)
            want = mask < plen and plen == 24
            assert inert(lay if topo else st.layout, f) == want, (itf, mask)
            assert (broken(st) == set()) == want, (itf, mask)


def test_targets_and_root_qdisc_clashes():
    from netarena_gym.routing.faults import clash, target
    a = Fault("remove_ip", 1, "r0", {"interface": "r0-eth1"})
    b = Fault("remove_ip", 2, "r0", {"interface": "r0-eth1", "address": "10.1.2.1/24"})
    assert target(a) == target(b) != target(Fault("remove_ip", 1, "r1", {"interface": "r1-eth1"}))
    w1 = Fault("wrong_routing_table", 1, "r0", {"subnet": "192.168.2.0/24", "wrong_dev": "x"})
    w2 = Fault("wrong_routing_table", 2, "r0", {"subnet": "192.168.2.0/24", "wrong_dev": "y"})
    w5 = Fault("wrong_routing_table", 5, "r0", {"host": "h2", "address": "192.168.2.100/32"})
    assert target(w1) == target(w2) != target(w5)
    loss = Fault("disable_interface", 4, "r0", {"interface": "r0-eth1", "loss_pct": 60})
    delay = Fault("drop_traffic_to_from_subnet", 4, "r0", {"subnet": "192.168.1.0/24",
                                                           "interface": "r0-eth1",
                                                           "delay_ms": 2000})
    assert clash(loss, delay) and not clash(loss, Fault("disable_interface", 2, "r0",
                                                        {"interface": "r0-eth1"}))


def test_an_unknown_fault_in_a_record_is_a_scenario_error():
    from netarena_gym.errors import ScenarioError
    for d in ({"type": "nope", "method": 1, "router": "r0"},
              {"type": "remove_ip", "method": 9, "router": "r0"}):
        with pytest.raises(ScenarioError, match="unknown fault"):
            Fault.from_dict(d)


def test_faults_on_a_spine_that_carries_no_path_are_inert():
    """Every leaf of a leaf-spine routes through the first spine: forwarding faults on the
    second break nothing, nor does a wider mask on a leaf's link to it (the spine answers
    ARP for its own addresses on-link). Before, level 3 drew them beside other faults."""
    from netarena_gym.routing.backends.sim import SimState
    from netarena_gym.routing.faults import inert
    from netarena_gym.routing.shapes import shape_spec
    spec = shape_spec("leaf-spine", [(1,)] * 5)  # spines r0, r1; leaves r2..r4
    topo, lay = spec.to_dict(), Layout(spec)
    leaf_to = {sp: next(itf for nb, itf, _ in lay.neighbors("r2") if nb == sp)
               for sp in ("r0", "r1")}
    ip = {sp: next(f"{int_to_ip(ln.b_ip)}" for ln in lay.links if (ln.a, ln.b) == (sp, "r2"))
          for sp in ("r0", "r1")}
    cases = [(Fault("disable_routing", m, sp, {"subnet": "192.168.1.0/24"} if m == 4 else {}),
              sp == "r1") for m in (1, 2, 4) for sp in ("r0", "r1")]
    cases += [(Fault("disable_routing", 3, "r1", {}), False)]  # prohibit: its own probes too
    cases += [(Fault("remove_ip", 3, "r2", {"interface": leaf_to[sp],
                                            "address": f"{ip[sp]}/{mask}"}), sp == "r1")
              for sp in ("r0", "r1") for mask in (16, 24)]
    cases += [(Fault("remove_ip", 3, "r2", {"interface": leaf_to["r1"],
                                            "address": f"{ip['r1']}/31"}), False)]
    for f, want in cases:
        st = SimState.build(scenario([f], topology=topo, level=3))
        assert inert(lay, f) == want, f
        assert (broken(st) == set()) == want, f
