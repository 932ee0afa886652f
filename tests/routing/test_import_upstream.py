"""``import_upstream`` on records in upstream's formats (written from
docs/spec upstream-route.md 2.1/2.2: ``get_detail``'s fields, ``generate_config``'s queries,
and a run's ``results[]`` with ``error_type``/``error_detail``)."""
import json

import pytest

from netarena_gym.routing.backends.sim import SimState
from netarena_gym.routing.faults import Fault
from netarena_gym.routing.generator import COMPAT_CATEGORIES, import_upstream
from netarena_gym.routing.topology import TopologySpec

# every (type, method) get_detail can write, in its own format, with what upstream's
# process_single_error then ran on r0 (interface prefix pNN_ removed)
RECORDS = [
    ("disable_routing", {"action": "Disable IP forwarding", "method": 1},
     ["sysctl -w net.ipv4.ip_forward=0"]),
    ("disable_routing", {"action": "Disable IP forwarding", "method": 2},
     ["iptables -P FORWARD DROP"]),
    ("disable_routing", {"action": "Disable IP forwarding", "method": 3},
     ["ip rule add prohibit pref 0"]),
    ("disable_routing", {"action": "Disable IP forwarding", "method": 4, "subnet": "192.168.2.0/24"},
     ["iptables -A FORWARD -s 192.168.2.0/24 -j DROP"]),
    ("disable_interface", {"interface": "r0-eth2", "method": 1}, ["ifconfig r0-eth2 down"]),
    ("disable_interface", {"interface": "r0-eth1", "method": 2}, ["ip link set r0-eth1 down"]),
    ("disable_interface", {"interface": "r0-eth3", "method": 3}, ["ip link set r0-eth3 mtu 68"]),
    ("remove_ip", {"interface": "r0-eth2", "method": 1}, ["ip addr flush dev r0-eth2"]),
    ("remove_ip", {"interface": "r0-eth3", "method": 3, "wrong_mask": 30},
     ["ip addr flush dev r0-eth3", "ip addr add 192.168.3.1/30 dev r0-eth3"]),
    ("drop_traffic_to_from_subnet", {"subnet": "192.168.1.0/24", "method": 1},
     ["iptables -A INPUT -s 192.168.1.0/24 -j DROP", "iptables -A OUTPUT -d 192.168.1.0/24 -j DROP"]),
    ("drop_traffic_to_from_subnet", {"subnet": "192.168.2.0/24", "method": 2},
     ["iptables -A INPUT -s 192.168.2.0/24 -j REJECT",
      "iptables -A OUTPUT -d 192.168.2.0/24 -j REJECT"]),
    ("drop_traffic_to_from_subnet", {"subnet": "192.168.3.0/24", "method": 3},
     ["iptables -A INPUT -p icmp -s 192.168.3.0/24 -j DROP",
      "iptables -A OUTPUT -p icmp -d 192.168.3.0/24 -j DROP"]),
    ("drop_traffic_to_from_subnet", {"subnet": "192.168.2.0/24", "method": 4, "delay_ms": 2500},
     ["tc qdisc add dev r0-eth2 root netem delay 2500ms"]),
    ("wrong_routing_table", {"from": "192.168.1.0/24", "to": "192.168.2.0/24",
                             "del_interface": "r0-eth1", "add_interface": "r0-eth2",
                             "method": 1, "to_ip": "192.168.2.1"},
     ["ip route del 192.168.1.0/24 dev r0-eth1", "ip route add 192.168.1.0/24 dev r0-eth2"]),
    ("wrong_routing_table", {"from": "192.168.3.0/24", "to": "192.168.1.0/24",
                             "del_interface": "r0-eth3", "add_interface": "r0-eth1",
                             "method": 2, "to_ip": "192.168.1.1"},
     ["ip route del 192.168.3.0/24 dev r0-eth3", "ip route add 192.168.3.0/24 via 10.255.255.254"]),
    ("wrong_routing_table", {"from": "192.168.2.0/24", "to": "192.168.3.0/24",
                             "del_interface": "r0-eth2", "add_interface": "r0-eth3",
                             "method": 3, "to_ip": "192.168.3.1"},
     ["ip route del 192.168.2.0/24 dev r0-eth2",
      "ip route add 192.168.2.0/24 dev r0-eth3 metric 10000"]),
    ("wrong_routing_table", {"from": "192.168.2.0/24", "to": "192.168.1.0/24",
                             "del_interface": "r0-eth2", "add_interface": "r0-eth1",
                             "method": 4, "to_ip": "192.168.1.1", "metric": 14321},
     ["ip route del 192.168.2.0/24 dev r0-eth2", "ip route add 192.168.2.0/24 via 192.168.1.1"]),
]


def query(types, details, s=3, h=2):
    return {"num_switches": s, "num_hosts_per_subnet": h, "errornumber": len(types) if
            isinstance(types, list) else 1, "errortype": types, "errordetail": details}


@pytest.mark.parametrize("etype,detail,commands", RECORDS,
                         ids=[f"{t}-{d['method']}" for t, d, _ in RECORDS])
def test_every_single_record_imports_and_injects_what_upstream_ran(etype, detail, commands):
    (sc,) = import_upstream({"queries": [query(etype, detail)]})
    assert sc.level == "compat" and sc.meta["category"] == etype and sc.meta["upstream_level"] == 1
    (f,) = [Fault.from_dict(x) for x in sc.faults]
    assert (f.type, f.method, f.router) == (etype, detail["method"], "r0")
    assert f.commands() == commands
    state = SimState.build(sc)
    assert all(res.status == 0 for _, cmd, res in state.injection
               if "10.255.255.254" not in cmd), state.injection


def test_records_drawn_at_injection_time_are_drawn_once_and_reproducibly():
    recs = [query("remove_ip", {"interface": "p42_r0-eth2", "method": 2}),
            query("remove_ip", {"interface": "r0-eth1", "method": 4})]
    a, b = import_upstream({"queries": recs}), import_upstream({"queries": recs})
    assert a == b
    foreign = Fault.from_dict(a[0].faults[0]).params["address"]
    assert foreign.startswith("10.") and foreign.endswith(".1/24")
    dup = Fault.from_dict(a[1].faults[0]).params["address"]
    assert dup in ("192.168.2.1/24", "192.168.3.1/24")  # another subnet's router address


def test_every_paired_category_imports_in_upstream_order():
    first = {t: d for t, d, _ in reversed(RECORDS)}  # one record per type
    queries = [query(list(c), [first[t] for t in c]) for c in COMPAT_CATEGORIES if len(c) == 2]
    out = import_upstream({"queries": queries})
    assert [tuple(s.meta["category"].split("+")) for s in out] == \
        [c for c in COMPAT_CATEGORIES if len(c) == 2]
    assert sorted({s.meta["upstream_level"] for s in out}) == [2, 3]
    for s in out:
        assert [f["type"] for f in s.faults] == s.meta["category"].split("+")
        SimState.build(s)


def test_wrong_routing_table_record_breaks_the_from_subnet():
    rec = RECORDS[13][1]  # 192.168.1.0/24 moved to r0-eth2
    (sc,) = import_upstream([query("wrong_routing_table", rec, s=2, h=1)])
    state = SimState.build(sc)
    names = state.oracle.names  # h1 h2 r0
    m = state.oracle.matrix()
    assert not m[names.index("r0"), names.index("h1")]
    assert TopologySpec.from_dict(sc.params["topology"]).hosts == ((1, 1),)


def test_run_results_records_and_missing_fields():
    results = {"participants": {"route_operator": "x"}, "results": [
        {"agent_info": {}, "error_type": ["disable_routing", "remove_ip"],
         "error_detail": [{"action": "Disable IP forwarding", "method": 3},
                          {"interface": "r0-eth1", "method": 3}],
         "success": False, "safe": True, "iterations": 11, "log_content": ""},
        {"avg_correctness": 0.0, "avg_safety": 1.0, "avg_iterations": 11},
    ]}
    (sc,) = import_upstream(results)
    assert TopologySpec.from_dict(sc.params["topology"]).hosts == ((1, 1),)  # 2 switches, 1 host
    mask = int(Fault.from_dict(sc.faults[1]).params["address"].split("/")[1])
    assert mask in (8, 16, 30, 31, 32)  # wrong_mask absent: drawn as upstream would
    (nm,) = import_upstream([query("disable_interface", {"interface": "r0-eth2"})])
    assert Fault.from_dict(nm.faults[0]).method in (1, 2, 3)


@pytest.mark.parametrize("bad,match", [
    (query("disable_routing", {"method": 5}), "no method 5"),
    (query("flood", {"method": 1}), "unknown upstream error type"),
    (query(["remove_ip", "disable_routing"], [{"interface": "r0-eth1", "method": 1}]), "lengths differ"),
    (query("wrong_routing_table", {"to": "192.168.2.0/24", "method": 1}), "missing field 'from'"),
    (query("drop_traffic_to_from_subnet", {"subnet": "nowhere", "method": 1}), "not a subnet"),
])
def test_malformed_records_raise_a_clear_error(bad, match):
    with pytest.raises(ValueError, match=match):
        import_upstream({"queries": [bad]})


def test_a_file_round_trips(tmp_path):
    p = tmp_path / "error_config.json"
    p.write_text(json.dumps({"queries": [query(t, d) for t, d, _ in RECORDS]}))
    out = import_upstream(p)
    assert len(out) == len(RECORDS) and [s.meta["query_index"] for s in out] == list(range(len(RECORDS)))


def test_a_wrong_routing_table_record_without_interfaces_moves_the_from_subnets_route():
    # upstream always stores del_interface/add_interface (r0-eth{f}, r0-eth{t}); one left
    # out of a hand-written record is the subnet's own interface, so the fault still breaks
    # the from subnet (a fixed r0-eth1 named a route that is not there: 0 pairs broken)
    rec = {"from": "192.168.2.0/24", "to": "192.168.3.0/24", "method": 3}
    (sc,) = import_upstream([query("wrong_routing_table", rec, s=3, h=1)])
    params = Fault.from_dict(sc.faults[0]).params
    assert (params["dev"], params["wrong_dev"]) == ("r0-eth2", "r0-eth3")
    state = SimState.build(sc)
    names = state.oracle.names
    assert not state.oracle.matrix()[names.index("r0"), names.index("h2")]
