"""The Mininet network is reused across episodes with the same topology: nothing an agent
changes on a node outlives its episode, each command line has a wall-clock budget, and
backends made one after another share one signal handler.

The changes the allow-list refuses are also made behind its back (``mnexec`` in the node's
namespace), as a bug in the allow-list would let them through: the next ``apply`` must still
start from the healthy network. Needs root and Mininet (CI runs these as root)."""
import signal
import subprocess
import time

import pytest

from netarena_gym.routing.backends.mininet import requirements_missing
from netarena_gym.shell.parser import REFUSED, TIMEOUT

from .conftest import MININET_HINT, scenario

pytestmark = [pytest.mark.mininet,
              pytest.mark.skipif(bool(requirements_missing()),
                                 reason=f"mininet backend needs {requirements_missing()}: {MININET_HINT}")]

# r0: eth1 -> s1 (h1), eth2 -> s2 (h2, h3), eth3 -> s3 (h4)
SC = scenario([])


@pytest.fixture(scope="module")
def real():
    from netarena_gym.routing.backends.mininet import MininetBackend
    b = MininetBackend(probe_timeout=0.1)
    yield b
    b.close()


def behind(b, node: str, line: str) -> str:
    """``line`` run by bash in ``node``'s namespace, past the allow-list."""
    p = subprocess.run(["mnexec", "-a", str(b.node_pid(node)), "bash", "-c", line],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout


def link_names(b, node: str) -> list[str]:
    out = behind(b, node, "ip -o link show")
    return sorted(ln.split(": ")[1].split("@")[0] for ln in out.splitlines())


@pytest.mark.parametrize("line", [
    "iptables -t raw -A PREROUTING -i r0-eth1 -j DROP",
    "iptables -t mangle -A FORWARD -o r0-eth2 -j DROP",
    "iptables -tnat -F", "iptables --table=mangle -P FORWARD DROP",
    "ip link set dev r0-eth3 name zz0", "ip link rep name br9 type bridge",
    "ip link de r0-eth3", "ip link dele r0-eth3", "ip link ad br9 type bridge",
    "ip link cha dev r0-eth3 name zz0", "ip link set r0-eth1 address 02:00:00:00:00:01",
    "ip link property add dev r0-eth1 altname up1",
    "ifconfig r0-eth1 hw ether 02:00:00:00:00:01", "ifconfig r0-eth1 txqueuelen 5",
    "ifconfig r0-eth1 -multicast", "tc qdisc add dev r0-eth1 ingress"])
def test_changes_that_outlive_the_episode_are_refused(real, line):
    real.apply(SC)
    before = link_names(real, "r0")
    res = real.run({"machine": "r0", "command": line})
    assert res.kind == REFUSED, res
    assert link_names(real, "r0") == before


@pytest.mark.parametrize("line,check,left", [
    ("iptables -t raw -A PREROUTING -i r0-eth1 -j DROP", "iptables-save", "-A PREROUTING"),
    ("iptables -t mangle -A FORWARD -o r0-eth2 -j DROP", "iptables-save", "-A FORWARD"),
    ("iptables -t mangle -P FORWARD DROP", "iptables-save -t mangle", "FORWARD DROP"),
    ("iptables -t nat -N NX && iptables -t nat -A PREROUTING -j NX", "iptables-save", "NX"),
    ("iptables -t raw -N NX", "iptables-save", "NX"),
    ("ip route add 10.99.0.0/24 dev r0-eth1 table 100", "ip route show table all", "10.99"),
    ("tc qdisc add dev r0-eth1 ingress", "tc qdisc show dev r0-eth1", "ingress"),
    ("ip link set dev r0-eth1 txqueuelen 5", "ip link show dev r0-eth1", "qlen 5"),
    ("ip link set dev r0-eth1 multicast off", "ip link show dev r0-eth1", "<BROADCAST,UP"),
    ("ip link set dev r0-eth1 allmulticast on", "ip link show dev r0-eth1", "ALLMULTI"),
])
def test_baseline_undoes_every_table(real, line, check, left):
    """What slipped past the allow-list into a table the baseline used to skip is gone at
    the next episode, without a rebuild (25 -> 17 reachable pairs before: a DROP in raw)."""
    real.apply(SC)
    builds = real.builds
    behind(real, "r0", line)
    assert left in behind(real, "r0", check)
    real.apply(SC)
    assert real.builds == builds
    assert left not in behind(real, "r0", check)
    assert real.observe().all()


@pytest.mark.parametrize("line", [
    "ip link set dev r0-eth3 name zz0",
    "ip link set dev r0-eth3 name zz0 && ip link set dev zz0 name r0-eth3",
    "ip link del dev r0-eth3",
    "ip link add br9 type bridge",
    "ip link add br9 type bridge && ip link del dev r0-eth1 && ip link set br9 name r0-eth1",
])
def test_damaged_links_are_rebuilt(real, line):
    """A node whose links are not those it was built with (renamed, deleted, made) starts
    the next episode from a rebuilt network (17, 13, 11 reachable pairs before)."""
    real.apply(SC)
    built = {n: link_names(real, n) for n in ("r0", "h4")}
    builds = real.builds
    behind(real, "r0", line)
    real.apply(SC)
    renamed_back = line.endswith("name r0-eth3")  # same name, same device: nothing to rebuild
    assert real.builds == builds + (0 if renamed_back else 1)
    assert {n: link_names(real, n) for n in built} == built
    assert real.observe().all()


def test_reset_to_baseline_rebuilds_a_damaged_network(real):
    real.apply(SC)
    builds = real.builds
    behind(real, "r0", "ip link del dev r0-eth3")
    real.reset_to_baseline()
    assert real.builds == builds + 1 and real.observe().all()
    assert "r0-eth3" in link_names(real, "r0")


# on h1's LAN: no answer, 1.5 s per ping (the ARP request fails only after 3 s)
UNREACHABLE = "ping -c1 -W1.5 192.168.1.250"


def test_a_command_line_has_a_budget(real):
    """40 pings of 1.9 s ran 76 s in one step; now the line stops at its budget: the
    command running then is killed, the result is a timeout, the rest is not run. (The
    budget ends before the kernel gives up on the address's ARP, 3 s after the first
    ping: a ping then fails at once, which raced a budget of 3 s.)"""
    real.apply(SC)
    real.run({"machine": "r0", "command": "ip neigh flush to 192.168.1.250"})
    old = real.command_timeout, real.step_timeout
    real.command_timeout, real.step_timeout = 2.0, 2.5
    try:
        t = time.monotonic()
        res = real.run({"machine": "r0", "command": "; ".join([UNREACHABLE] * 40)})
        took = time.monotonic() - t
        assert res.kind == TIMEOUT and res.status == 124, res
        assert "budget of 2.5 s (step_timeout) is spent (killed)" in res.output
        assert res.output.count("1 packets transmitted") == 1  # the second was killed
        assert took < 2.5 + 1.5, took
        # a line inside its budget is not touched; a single command keeps command_timeout
        ok = real.run({"machine": "r0", "command": "ip -br link && ping -c1 -W1 192.168.1.100"})
        assert ok.kind != TIMEOUT and "1 received" in ok.output, ok
        real.step_timeout = 60.0
        res = real.run({"machine": "r0", "command": "ping -c5 -i0.5 -W1 192.168.1.250"})
        assert res.kind == TIMEOUT and "timed out after 2 s (killed)" in res.output, res
    finally:
        real.command_timeout, real.step_timeout = old


def test_the_budget_follows_the_command_timeout():
    from netarena_gym.routing.backends.mininet import MininetBackend
    from netarena_gym.shell.policy import STEP_TIMEOUT
    bs = [MininetBackend(command_timeout=2.0), MininetBackend(command_timeout=30.0),
          MininetBackend(step_timeout=1.5)]
    try:
        assert [b.step_timeout for b in bs] == [STEP_TIMEOUT, 30.0, 1.5]
    finally:
        for b in bs:
            b.close()


def test_the_env_hands_its_step_timeout_to_the_backend():
    """The env kept ``step_timeout`` for itself (None on Mininet) and the backend used its
    default: a user's ``step_timeout=1.5`` bounded nothing."""
    from netarena_gym.routing.env import RoutingEnv
    env = RoutingEnv(backend="mininet", step_timeout=1.5)
    try:
        assert env.backend.step_timeout == 1.5
        assert env.step_timeout is None  # no signal deadline: the backend kills the command
    finally:
        env.close()
    env = RoutingEnv(backend="mininet", command_timeout=20.0)
    try:
        assert env.backend.step_timeout == 20.0
    finally:
        env.close()


def test_backends_share_one_signal_handler(real):
    """Each backend used to chain a handler onto the previous one's and never remove it
    (after 1,500 backends SIGTERM raised RecursionError)."""
    from netarena_gym.routing.backends.mininet import MininetBackend
    handlers = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    for _ in range(3):
        MininetBackend().close()
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
