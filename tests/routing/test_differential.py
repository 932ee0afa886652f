"""The differential harness itself (on the simulator only; the sim-vs-Mininet campaign is
tests/routing/test_differential_mininet.py)."""
import collections

import pytest

from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.differential import (
    ASPECTS, UNORDERED, EnvPair, grammar_commands, normalise, run_both, wrong_fixes)
from netarena_gym.routing.faults import Fault
from netarena_gym.routing.generator import RoutingGenerator

from .conftest import scenario


def test_grammar_commands_cover_every_family_and_are_seeded():
    sc = RoutingGenerator(3).generate(4).scenario
    a = grammar_commands(sc, 600, 1)
    assert a == grammar_commands(sc, 600, 1) and a != grammar_commands(sc, 600, 2)
    progs = collections.Counter(cmd.split()[0] for _, cmd in a)
    for p in ("ip", "ifconfig", "route", "arp", "sysctl", "iptables", "tc", "ping", "cat", "echo"):
        assert progs[p], p
    assert any("|" in c for _, c in a) and any(">" in c for _, c in a)
    assert {m for m, _ in a} > {"r0", "r1"} and any(m.startswith("h") for m, _ in a)
    kinds = collections.Counter()
    b = SimBackend()
    b.apply(sc)
    for m, c in a:
        kinds[b.run({"machine": m, "command": c}).kind] += 1
    assert kinds["ok"] and kinds["error"] and kinds["invalid"]  # the grammar reaches all three


def test_identical_backends_agree_on_every_aspect():
    sc = RoutingGenerator(2).generate(11).scenario
    pair = EnvPair(2, SimBackend())
    rep = run_both(sc, grammar_commands(sc, 30, 3) + wrong_fixes(sc, 10, 3), pair)
    assert rep.agree and rep.steps >= 1, rep.diffs[:2]


def test_a_backend_difference_shows_in_outcome_reward_and_info():
    """The same episode where one side lacks iptables (the agentbeats image)."""
    f = Fault("drop_traffic_to_from_subnet", 1, "r0", {"subnet": "192.168.2.0/24"})
    sc = scenario([f])
    pair = EnvPair(1, SimBackend())
    pair.real.backend.missing_programs = frozenset({"iptables"})
    rep = run_both(sc, [("r0", "iptables -S")], pair)
    assert {"matrix", "outcome", "reward", "info"} <= rep.disagrees_on() <= set(ASPECTS)
    outcome = next(d for d in rep.diffs if d.what == "outcome")
    assert outcome.sim.startswith("0 ok") and outcome.real.startswith("127 invalid")


def test_normalise_hides_only_what_the_simulator_does_not_model():
    a = "2: r0-eth1@if7: <UP> mtu 1500 link/ether 02:00:00:00:01:01 link-netnsid 3"
    b = "2: r0-eth1@if9: <UP> mtu 1500 link/ether 4e:aa:00:00:01:01 link-netnsid 0"
    assert normalise(a) == normalise(b)
    assert normalise(a) != normalise(a.replace("mtu 1500", "mtu 68"))
    # counters and timer-driven states the simulator does not model (real output pinned)
    sim = ("Chain FORWARD (policy ACCEPT 0 packets, 0 bytes)\n"
           " pkts bytes target     prot opt in     out     source               destination\n"
           "    0     0 DROP       0    --  *      *       0.0.0.0/0            192.168.12.0/24\n"
           "192.168.3.100 dev h6-eth0 lladdr 02:00:00:00:03:01 REACHABLE")
    real = ("Chain FORWARD (policy ACCEPT 12 packets, 1008 bytes)\n"
            " pkts bytes target     prot opt in     out     source               destination\n"
            "    8   672 DROP       0    --  *      *       0.0.0.0/0            192.168.12.0/24\n"
            "192.168.3.100 dev h6-eth0 lladdr 4e:aa:00:00:03:01 DELAY")
    assert normalise(sim) == normalise(real)
    assert normalise(sim) != normalise(sim.replace("192.168.12.0/24", "192.168.13.0/24"))
    # --line-numbers: the rule number stays, the counters after it go (real pinned)
    sim = ("num   pkts bytes target     prot opt in     out     source               destination\n"
           "1        0     0 DROP       0    --  *      *       0.0.0.0/0            192.168.12.0/24\n"
           "2        0     0            0    --  *      *       0.0.0.0/0            192.168.13.0/24")
    real = ("num   pkts bytes target     prot opt in     out     source               destination\n"
            "1        3   252 DROP       0    --  *      *       0.0.0.0/0            192.168.12.0/24\n"
            "2       12  1008            0    --  *      *       0.0.0.0/0            192.168.13.0/24")
    assert normalise(sim) == normalise(real)
    assert normalise(sim) != normalise(sim.replace("\n2 ", "\n3 "))
    assert normalise("1    DROP       0    --  0.0.0.0/0") == "1    DROP       0    --  0.0.0.0/0"
    # -j: IPv6 entries and the veth peer's numbers; -br: IPv6 addresses and column padding
    real = ('[{"ifindex":2,"link_index":14,"ifname":"h1-eth0","link_netnsid":1,"addr_info":'
            '[{"family":"inet","local":"192.168.1.100"},{"family":"inet6","local":"fe80::1"}]}]')
    sim = ('[{"ifindex":2,"link_index":100,"ifname":"h1-eth0","link_netnsid":0,"addr_info":'
           '[{"family":"inet","local":"192.168.1.100"}]}]')
    assert normalise(sim) == normalise(real) != normalise(sim.replace(".100", ".101"))
    assert normalise("h1-eth0@if100    UP             192.168.1.100/24 ") == normalise(
        "h1-eth0@if14   UP             192.168.1.100/24 fe80::1/64 ")
    assert UNORDERED.match("ip n show") and not UNORDERED.match("ip n add 1.2.3.4 dev x")


@pytest.mark.parametrize("level", [1, "compat"])
def test_pair_envs_share_settings(level):
    pair = EnvPair(level, SimBackend(), compat_profile="agentbeats" if level == "compat" else "paper")
    assert pair.sim.config == pair.real.config and pair.sim.backend is not pair.real.backend
    assert pair.real.backend.missing_programs == pair.sim.backend.missing_programs
    assert pair.sim.step_timeout is None and pair.real.step_timeout is None
