"""Differential testing of the routing simulator against a real backend.

The same scenario and the same command sequence run on both backends; after every step the
reachability matrices must be equal, the commands must succeed or fail alike, and the
output of diagnostic commands must match once normalised (MAC addresses, interface
indexes, counters, timings, IPv6 lines and kernel-build details that the simulator does not
model). Command sequences come from the expert, from random agents over the catalogue, and
from a corpus of plausible wrong fixes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from netarena_gym.core.scenario import Scenario
from netarena_gym.core.seeding import rng_from_seed
from netarena_gym.routing.topology import Layout, TopologySpec

DIAGNOSTIC = re.compile(
    r"^(ip( -\S+)* (a|addr|address|l|link|r|route|ru|rule|n|neigh)( show| list)?( dev \S+)?$"
    r"|iptables -S|iptables -L -n|iptables -L -n -v|tc qdisc show|sysctl net\.ipv4\.ip_forward"
    r"|ip route get \S+|route -n|cat /proc/sys/net/ipv4/ip_forward)")

_RULES = [
    (re.compile(r"([0-9a-f]{2}:){5}[0-9a-f]{2}"), "MAC"),
    (re.compile(r"@if\d+"), "@ifN"),
    (re.compile(r"link-netnsid \d+"), "link-netnsid N"),
    (re.compile(r" allmulti \d+ "), " "),
    (re.compile(r"numtxqueues \d+ numrxqueues \d+"), "queues"),
    (re.compile(r"time[=<][\d.]+ ?ms"), "time=T"),
    (re.compile(r"time \d+ms"), "time Tms"),
    (re.compile(r"rtt min/avg/max/mdev = \S+ ms"), "rtt"),
    (re.compile(r"  [\d.]+ ms"), "  T ms"),
    (re.compile(r"qdisc (\S+) [0-9a-f]+: "), r"qdisc \1 H: "),
    (re.compile(r"refcnt \d+"), "refcnt N"),
    (re.compile(r"^# .*$", re.M), "#"),
    (re.compile(r"\[\d+:\d+\]"), "[P:B]"),
]
_DROP_LINE = re.compile(r"^\s+inet6 |^\s+valid_lft forever preferred_lft forever$"
                        r"|^\s+veth |^\s+link/loopback")


def normalise(text: str) -> str:
    lines = [ln.rstrip() for ln in text.splitlines() if not _DROP_LINE.match(ln)]
    out = "\n".join(lines)
    for rx, rep in _RULES:
        out = rx.sub(rep, out)
    return out


@dataclass
class StepDiff:
    step: int
    machine: str
    command: str
    what: str  # "matrix" | "outcome" | "output"
    sim: str
    real: str


@dataclass
class EpisodeDiff:
    scenario: dict
    steps: int
    diffs: list[StepDiff] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return not self.diffs


def run_both(scenario: Scenario, commands: list[tuple[str, str]], sim, real,
             *, compare_outputs: bool = True) -> EpisodeDiff:
    """Apply ``scenario`` on both backends, then run ``commands`` step by step."""
    sim.apply(scenario)
    real.apply(scenario)
    rep = EpisodeDiff(scenario.to_dict(), len(commands))
    _compare_matrix(rep, -1, "", "(after injection)", sim, real)
    for k, (machine, cmd) in enumerate(commands):
        act = {"machine": machine, "command": cmd}
        a, b = sim.run(act), real.run(act)
        if (a.status == 0) != (b.status == 0) or (a.kind == "refused") != (b.kind == "refused"):
            rep.diffs.append(StepDiff(k, machine, cmd, "outcome", f"{a.status} {a.kind}\n{a.output}",
                                      f"{b.status} {b.kind}\n{b.output}"))
        elif compare_outputs and DIAGNOSTIC.match(cmd):
            na, nb = normalise(a.output), normalise(b.output)
            if na != nb:
                rep.diffs.append(StepDiff(k, machine, cmd, "output", na, nb))
        _compare_matrix(rep, k, machine, cmd, sim, real)
    return rep


def _compare_matrix(rep, k, machine, cmd, sim, real) -> None:
    ms, mr = sim.observe(), real.observe()
    if not np.array_equal(ms, mr):
        names = sim.names
        only_sim = [(names[i], names[j]) for i, j in zip(*np.nonzero(ms & ~mr))]
        only_real = [(names[i], names[j]) for i, j in zip(*np.nonzero(mr & ~ms))]
        rep.diffs.append(StepDiff(k, machine, cmd, "matrix", f"reachable only in sim: {only_sim}",
                                  f"reachable only in real: {only_real}"))


# ------------------------------------------------------------- command sequences
def expert_commands(scenario: Scenario, max_steps: int = 40) -> list[tuple[str, str]]:
    """The expert's commands for ``scenario``, as it plays it on the simulator."""
    import gymnasium as gym

    import netarena_gym  # noqa: F401
    from netarena_gym.routing.expert import RoutingExpert
    env = gym.make("NetArena-Routing-v0", level=scenario.level, max_steps=max_steps)
    obs, info = env.reset(options={"scenario": scenario})
    agent, out = RoutingExpert(), []
    while True:
        a = agent.act(obs, info)
        out.append((a["machine"], a["command"]))
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            return out


def random_commands(scenario: Scenario, n: int, seed: int) -> list[tuple[str, str]]:
    """``n`` uniformly drawn entries of the episode's action catalogue."""
    from netarena_gym.core.actions import Catalogue
    from netarena_gym.routing.catalogue import Dims, fill
    from netarena_gym.routing.generator import level_config
    lay = Layout(TopologySpec.from_dict(scenario.params["topology"]))
    dims = Dims(*level_config(scenario.level).max_dims())
    cat = Catalogue(dims.size)
    fill(cat, lay, dims)
    valid = np.flatnonzero(cat.mask)
    rng = rng_from_seed(seed)
    picks = [cat.entries[int(valid[rng.integers(len(valid))])].action for _ in range(n)]
    return [(p["machine"], p["command"]) for p in picks]


def wrong_fixes(scenario: Scenario, n: int, seed: int) -> list[tuple[str, str]]:
    """Plausible wrong repairs: the right kind of command aimed at the wrong target."""
    lay = Layout(TopologySpec.from_dict(scenario.params["topology"]))
    rng = rng_from_seed(seed)
    cands = []
    for r in lay.routers:
        for itf in lay.router_ifaces[r]:
            cands += [(r, f"ip link set {itf} down"), (r, f"ip addr flush dev {itf}"),
                      (r, f"ip link set {itf} mtu 1400"), (r, f"ifconfig {itf} down"),
                      (r, f"ip route del 192.168.1.0/24 dev {itf}")]
        for s in lay.subnets:
            net = f"192.168.{s.index}.0/24"
            cands += [(r, f"ip route del {net}"), (r, f"iptables -A FORWARD -d {net} -j DROP"),
                      (r, f"iptables -I INPUT -s {net} -j REJECT"),
                      (r, f"ip route add blackhole 192.168.{s.index}.100/32"),
                      (r, f"ip route replace {net} via 10.9.9.9")]
        cands += [(r, "iptables -F INPUT"), (r, "iptables -P OUTPUT DROP"),
                  (r, "sysctl -w net.ipv4.ip_forward=0"), (r, "ip rule add prohibit pref 100"),
                  (r, "ip rule del pref 32766"), (r, "echo 0 > /proc/sys/net/ipv4/ip_forward"),
                  (r, "ip route flush table main"), (r, "iptables -D FORWARD 1")]
    diag = [(r, c) for r in lay.routers for c in ("ip addr show", "ip route show", "ip rule show",
                                                   "iptables -S", "tc qdisc show", "route -n")]
    out = []
    for _ in range(n):
        pool = cands if rng.random() < 0.6 else diag
        out.append(pool[int(rng.integers(len(pool)))])
    return out
