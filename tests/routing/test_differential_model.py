"""Simulator against the real kernel (Mininet backend) for issue 12's model items: routes
whose gateway is the router's own address, interface labels in compat, and the dynamic
neighbour cache. Each sequence runs through the differential harness (matrices, outcomes,
normalised diagnostic outputs after every step); neighbour listings are compared here as
sets, since the kernel prints them in hash order and its entry states depend on timers."""
import re

import pytest

from netarena_gym.routing.backends.mininet import requirements_missing
from netarena_gym.routing.backends.sim import SimBackend
from netarena_gym.routing.differential import EnvPair, normalise, run_both
from netarena_gym.routing.faults import Fault

from .conftest import SMALL, scenario

pytestmark = [pytest.mark.mininet,
              pytest.mark.skipif(bool(requirements_missing()),
                                 reason=f"mininet backend needs {requirements_missing()}")]

WRONG_MASK = Fault("remove_ip", 3, "r0", {"interface": "r0-eth1", "address": "192.168.1.1/30"})

OWN_GATEWAY = [
    ("r0", "ip route add 192.168.1.0/24 via 192.168.1.1 dev r0-eth1"),
    ("r0", "ip route show"), ("r0", "ip route get 192.168.1.100"), ("r0", "route -n"),
    ("r0", "ip route del 192.168.1.0/24 via 192.168.1.1"),
    ("r0", "ip route add 192.168.1.0/24 via 192.168.1.1"), ("r0", "ip route show"),
    ("r0", "ip route replace 192.168.1.0/24 via 192.168.1.1 dev r0-eth1"),
    ("r0", "ip route del 192.168.1.0/24"),
    ("r0", "ip route add 192.168.1.0/24 via 192.168.2.1 dev r0-eth1"),
    ("r0", "ip route add 192.168.1.0/24 via 192.168.1.1 dev r0-eth1 onlink"),
    ("r0", "ip route add 192.168.1.0/24 via 192.168.2.1"),
    ("r0", "ip route get 192.168.1.100"),
    ("r0", "ip route del 192.168.1.0/24"),
    ("r0", "route add -net 192.168.1.0/24 gw 192.168.1.1"), ("r0", "route -n"),
    ("r0", "ip route add 10.9.7.0/24 via 192.168.1.1 table 5"),
    ("r0", "ip route show table 5"),
    ("r0", "ip addr del 192.168.1.1/30 dev r0-eth1"), ("r0", "ip route show"),
]

WR4 = [("r0", "ip route del 192.168.1.0/24 dev r0-eth1"),
       ("r0", "ip route add 192.168.1.0/24 dev r0-eth2 via 192.168.2.1"),
       ("r0", "ip route show"), ("r0", "ip route get 192.168.1.100")]

_STATE = {"DELAY": "REACHABLE", "PROBE": "REACHABLE"}


def neigh_set(text: str) -> list[str]:
    """A neighbour listing as a sorted set: MACs masked, timer-driven states settled."""
    lines = normalise(text).splitlines()
    out = []
    for ln in lines:
        ln = re.sub(r"\b(DELAY|PROBE)\b", lambda m: _STATE[m.group(1)], ln)
        out.append(ln)
    return sorted(out)


@pytest.fixture(scope="module")
def real():
    from netarena_gym.routing.backends.mininet import MininetBackend
    b = MininetBackend(probe_timeout=0.2)
    yield b
    b.close()


def both(sc, cmds, real):
    """The harness on one scenario: a simulator env beside an env on the real backend."""
    pair = EnvPair(sc.level, real)
    try:
        return run_both(sc, cmds, pair)
    finally:
        pair.close()


def agree(rep):
    assert rep.agree, [(d.step, d.command, d.what, d.sim, d.real) for d in rep.diffs]


def test_route_via_own_address(real):
    agree(both(scenario([WRONG_MASK], SMALL), OWN_GATEWAY, real))


def test_wrong_routing_table_method_4(real):
    agree(both(scenario([], SMALL), WR4, real))


def test_compat_shows_no_aliases(real):
    sc = scenario([WRONG_MASK], SMALL, level="compat")
    cmds = [("r0", "ip link show"), ("r0", "ip -d addr show"), ("r0", "ip addr show")]
    agree(both(sc, cmds, real))
    assert "alias" not in real.run({"machine": "r0", "command": "ip -d link show"}).output
    sc1 = scenario([WRONG_MASK], SMALL, level=1)
    agree(both(sc1, cmds, real))
    assert "alias LAN s1 192.168.1.1/24" in real.run({"machine": "r0", "command": "ip link show"}).output


NEIGH_SEQUENCES = {
    "healthy": ([], [("r0", "ip neigh show to 192.168.0.0/16"), ("h2", "arp -n"), ("h1", "ip neigh show to 192.168.0.0/16")]),
    "flush": ([], [("r0", "ip neigh flush all"), ("r0", "arp -n"),
                   ("r0", "ip -s neigh flush dev r0-eth2"), ("r0", "ip neigh show to 192.168.0.0/16")]),
    "agent ping": ([], [("r0", "ip neigh flush all; ping -c1 -W1 192.168.2.100; arp -n"),
                        ("h2", "ip neigh show to 192.168.0.0/16")]),
    "missing host": ([], [("r0", "ping -c1 -W1 192.168.1.77 >/dev/null; arp -n"),
                          ("r0", "ip neigh show to 192.168.0.0/16")]),
    "link down": ([], [("r0", "ip link set r0-eth3 down; ip neigh show to 192.168.0.0/16; ip link set r0-eth3 up"),
                       ("r0", "ip addr flush dev r0-eth2; arp -n")]),
    "prohibit": ([Fault("disable_routing", 3, "r0", {})],
                 [("r0", "arp -n"), ("r0", "ip neigh show to 192.168.0.0/16"), ("h1", "ip neigh show to 192.168.0.0/16")]),
    "own gateway": ([WRONG_MASK], [("r0", "ip route add 192.168.1.0/24 via 192.168.1.1 dev r0-eth1"),
                                   ("r0", "ip neigh show to 192.168.0.0/16")]),
    "arp delete": ([], [("r0", "arp -d 192.168.2.100"), ("r0", "arp -d 192.168.2.100"), ("r0", "arp -an")]),
}


@pytest.mark.parametrize("name", sorted(NEIGH_SEQUENCES))
def test_neighbour_cache(real, name):
    faults, cmds = NEIGH_SEQUENCES[name]
    sim = SimBackend()
    sc = scenario(faults, SMALL)
    agree(both(sc, cmds, real))  # matrices and outcomes, step by step
    sim.apply(sc)
    real.apply(sc)
    sim.observe(), real.observe()
    for machine, cmd in cmds:
        a = sim.run({"machine": machine, "command": cmd})
        b = real.run({"machine": machine, "command": cmd})
        assert a.status == b.status, (cmd, a.output, b.output)
        assert neigh_set(a.output) == neigh_set(b.output), cmd
        sim.observe(), real.observe()
