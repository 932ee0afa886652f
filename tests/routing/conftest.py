import pytest

from netarena_gym.core.scenario import Scenario
from netarena_gym.routing.backends.sim import SimState
from netarena_gym.routing.faults import Fault

# r0: eth1 -> s1 (h1), eth2 -> s2 (h2, h3), eth3 -> s3 (h4); probe order h1..h4, r0
#: what the Mininet tests' skip message tells a user to run (docs/backends.md#mininet-routing)
MININET_HINT = ("run as root after apt-get install mininet bridge-utils iputils-ping traceroute "
                "iptables iproute2 && pip install -e \".[mininet]\"")

SMALL = {"hosts": [[1, 2, 1]], "parents": []}
# the ICMP-error cases (test_ping.py pins the real outputs, test_mininet_icmp.py compares)
TWO = {"hosts": [[1, 1]], "parents": []}
THREE = {"hosts": [[1, 1, 1]], "parents": []}
DR3 = Fault("disable_routing", 3, "r0", {})  # ip rule add prohibit pref 0
DT1 = Fault("drop_traffic_to_from_subnet", 1, "r0", {"subnet": "192.168.1.0/24"})
LAN3_DOWN = Fault("disable_interface", 2, "r0", {"interface": "r0-eth3"})
DI3 = Fault("disable_interface", 3, "r0", {"interface": "r0-eth2"})  # mtu 68


def scenario(faults, topology=SMALL, level=1):
    return Scenario(task="routing", level=level, params={"topology": topology},
                    faults=tuple(f if isinstance(f, dict) else f.to_dict() for f in faults), seed=None)


def broken(state: SimState) -> set[tuple[str, str]]:
    m = state.oracle.matrix()
    names = state.oracle.names
    return {(names[i], names[j]) for i in range(len(names)) for j in range(len(names))
            if i != j and not m[i, j]}


def both(a, others):
    return {(a, o) for o in others} | {(o, a) for o in others}


@pytest.fixture
def build():
    def _build(*faults, topology=SMALL):
        return SimState.build(scenario(faults, topology))
    return _build
