"""Differential testing of the routing simulator against a real backend.

The same scenario and the same command sequence run through two ``NetArena-Routing-v0``
envs, one on the simulator and one on the real backend (:class:`EnvPair`). After the reset
and after every step these must be equal: the reachability matrices, the result kind and
exit status, the reward and its components, ``info`` (every key but ``backend`` and
``extra``, which names the backend's capabilities; ``info`` holds no timings), whether the
episode ended, and, for diagnostic commands, the output once normalised (MAC addresses,
interface indexes, counters, timings, IPv6 lines and kernel-build details that the
simulator does not model; neighbour listings compared as sets of lines, the kernel's hash
order not being modelled). Command sequences come from the expert, from random agents over
the catalogue (:func:`random_commands`) and over the full command grammar
(:func:`grammar_commands`), and from a corpus of plausible wrong fixes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.core.observation import last_output
from netarena_gym.core.scenario import Scenario
from netarena_gym.core.seeding import rng_from_seed
from netarena_gym.routing.topology import Layout, TopologySpec

DIAGNOSTIC = re.compile(
    r"^(ip( -\S+)* (a|addr|address|l|link|r|route|ru|rule|n|neigh)( show| list)?( dev \S+)?$"
    r"|iptables -S|iptables -L -n|iptables -L -n -v|tc qdisc show|sysctl( -n)? net\.ipv4\.\S+$"
    r"|ip route get \S+|route -n|cat /proc/sys/net/ipv4/\S+$|arp -x$|route -[hz]$)")

# the kernel lists neighbours in hash order, which the simulator does not model
UNORDERED = re.compile(r"^ip( -\S+)* (n|neigh|neighbor|neighbour)( show| list)?( dev \S+)?$")

_RULES = [
    (re.compile(r"([0-9a-f]{2}:){5}[0-9a-f]{2}"), "MAC"),
    (re.compile(r"@if\d+ *"), lambda m: "@ifN" + (" " if m[0].endswith(" ") else "")),
    (re.compile(r"link-netnsid \d+"), "link-netnsid N"),
    (re.compile(r" +allmulti \d+ "), " "),
    (re.compile(r"\b(REACHABLE|STALE|DELAY|PROBE)$", re.M), "NUD"),  # kernel timers
    (re.compile(r"\(policy (\w+) \d+[KMGT]? packets, \d+[KMGT]? bytes\)"), r"(policy \1 N packets, N bytes)"),
    (re.compile(r"numtxqueues \d+ numrxqueues \d+"), "queues"),
    (re.compile(r"time[=<][\d.]+ ?ms"), "time=T"),
    (re.compile(r"time \d+ms"), "time Tms"),
    (re.compile(r"rtt min/avg/max/mdev = \S+ ms"), "rtt"),
    (re.compile(r"  [\d.]+ ms"), "  T ms"),
    (re.compile(r"qdisc (\S+) [0-9a-f]+: "), r"qdisc \1 H: "),
    (re.compile(r"refcnt \d+"), "refcnt N"),
    (re.compile(r"^# .*$", re.M), "#"),
    (re.compile(r"\[\d+:\d+\]"), "[P:B]"),
    # -j: IPv6 addresses, the veth peer's index
    (re.compile(r'\{"family":"inet6"[^{}]*\},?|\{"local":"[0-9a-f]*:[0-9a-f:]*","prefixlen":\d+\},?'), ""),
    (re.compile(r",\]"), "]"),
    (re.compile(r'"link_(index|netnsid)":\d+'), r'"link_\1":N'),
    # -br IPv6 (the observation shows an escape character as "?")
    (re.compile(r" (?:[\x1b?]\[34m)?[0-9a-f:]*:[0-9a-f:]*(?:[\x1b?]\[0m)?/\d+"), ""),
    (re.compile(r"^ +\d+( +\d+)+ *$", re.M), "    COUNTERS"),  # ip -s statistics rows
    # iptables -v: packet and byte counters, after the rule number with --line-numbers
    (re.compile(r"^(?:(\d+) +| *)\d+[KMGT]? +\d+[KMGT]? (?=[A-Z]|\s)", re.M),
     lambda m: f"{m[1] or ''}    P B "),
]
_DROP_LINE = re.compile(r"^\s+inet6 |^\d+: \S+\s+inet6 |^\s+valid_lft forever preferred_lft forever$"
                        r"|^\s+veth |^\s+link/loopback")


def normalise(text: str) -> str:
    lines = [ln.rstrip() for ln in text.splitlines() if not _DROP_LINE.match(ln)]
    out = "\n".join(lines)
    for rx, rep in _RULES:
        out = rx.sub(rep, out)
    return out


ASPECTS = ("matrix", "outcome", "reward", "info", "done", "output")
INFO_IGNORED = frozenset({"backend", "extra"})


@dataclass
class StepDiff:
    step: int
    machine: str
    command: str
    what: str  # one of ASPECTS
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

    def disagrees_on(self) -> set[str]:
        return {d.what for d in self.diffs}


class EnvPair:
    """Two envs of one level: ``sim`` on the simulator, ``real`` on ``real_backend`` (a
    started backend instance, e.g. :class:`~netarena_gym.routing.backends.mininet.MininetBackend`,
    reused across episodes; it is given the profile's missing programs). No step timeout on either, so that wall-clock time never
    decides a result; ``max_steps`` bounds every sequence. ``topology``: the envs' option
    (size ranges, a ``shape`` of up to 64 routers), as the scenarios were generated with."""

    def __init__(self, level, real_backend, *, max_steps: int = 60, compat_profile: str = "paper",
                 topology: dict | None = None):
        from netarena_gym.routing.env import RoutingEnv
        kw = dict(level=level, max_steps=max_steps, step_timeout=None,
                  compat_profile=compat_profile, topology=topology)
        self.sim = RoutingEnv(**kw)
        self.real = RoutingEnv(**kw)
        self.real.backend.close()
        real_backend.missing_programs = self.real.profile.missing_programs
        self.real.backend = real_backend
        for env in (self.sim, self.real):
            env.step_timeout = None  # the env defaults the simulator's to 5 s
        self.real.generator.capabilities = real_backend.capabilities

    def close(self) -> None:
        self.sim.close()  # the real backend belongs to the caller


def _info_diff(a: dict, b: dict) -> str | None:
    keys = sorted((set(a) | set(b)) - INFO_IGNORED)
    bad = []
    for k in keys:
        x, y = a.get(k), b.get(k)
        same = np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        if not same:
            bad.append(f"{k}: {x!r} != {y!r}")
    return "; ".join(bad) if bad else None


def run_both(scenario: Scenario, commands: list[tuple[str, str]], pair: EnvPair,
             *, compare_outputs: bool = True) -> EpisodeDiff:
    """Reset both envs of ``pair`` to ``scenario``, then step ``commands`` on both until
    either episode ends; every aspect in :data:`ASPECTS` is compared after every step."""
    sim, real = pair.sim, pair.real
    rep = EpisodeDiff(scenario.to_dict(), 0)
    oa, ia = sim.reset(options={"scenario": scenario})
    ob, ib = real.reset(options={"scenario": scenario})
    _compare_matrix(rep, -1, "", "(after injection)", oa, ob)
    why = _info_diff(ia, ib)
    if why:
        rep.diffs.append(StepDiff(-1, "", "(reset)", "info", why, ""))
    for k, (machine, cmd) in enumerate(commands):
        act = {"machine": machine, "command": cmd}
        oa, ra, ta, ua, ia = sim.step(act)
        ob, rb, tb, ub, ib = real.step(act)
        rep.steps = k + 1
        out_a, out_b = last_output(oa), last_output(ob)
        ka = (ia["command_status"], ia["command_kind"])
        kb = (ib["command_status"], ib["command_kind"])
        if ka != kb:
            rep.diffs.append(StepDiff(k, machine, cmd, "outcome", f"{ka[0]} {ka[1]}\n{out_a}",
                                      f"{kb[0]} {kb[1]}\n{out_b}"))
        elif compare_outputs and DIAGNOSTIC.match(cmd):
            na, nb = normalise(out_a), normalise(out_b)
            if UNORDERED.match(cmd):
                na, nb = "\n".join(sorted(na.splitlines())), "\n".join(sorted(nb.splitlines()))
            if na != nb:
                rep.diffs.append(StepDiff(k, machine, cmd, "output", na, nb))
        _compare_matrix(rep, k, machine, cmd, oa, ob)
        if ra != rb:
            rep.diffs.append(StepDiff(k, machine, cmd, "reward", f"{ra!r} {ia['reward_components']}",
                                      f"{rb!r} {ib['reward_components']}"))
        why = _info_diff(ia, ib)
        if why:
            rep.diffs.append(StepDiff(k, machine, cmd, "info", why, ""))
        if (ta, ua) != (tb, ub):
            rep.diffs.append(StepDiff(k, machine, cmd, "done", f"terminated={ta} truncated={ua}",
                                      f"terminated={tb} truncated={ub}"))
        if ta or ua or tb or ub:
            break
    return rep


def pingall_section(observation: str) -> str:
    """The pingall matrix at the head of a text observation (history off)."""
    return observation.split("\n\n", 1)[0]


def _compare_matrix(rep, k, machine, cmd, obs_sim: str, obs_real: str) -> None:
    a, b = pingall_section(obs_sim), pingall_section(obs_real)
    if a != b:
        rep.diffs.append(StepDiff(k, machine, cmd, "matrix", a, b))


# ------------------------------------------------------------- command sequences
def expert_commands(scenario: Scenario, max_steps: int | None = 40,
                    topology: dict | None = None) -> list[tuple[str, str]]:
    """The expert's commands for ``scenario``, as it plays it on the simulator
    (``topology``: the env option the scenario was generated with)."""
    import gymnasium as gym

    import netarena_gym  # noqa: F401
    from netarena_gym.routing.expert import RoutingExpert
    env = gym.make("NetArena-Routing-v0", level=scenario.level, max_steps=max_steps,
                   topology=topology)
    obs, info = env.reset(options={"scenario": scenario})
    agent, out = RoutingExpert(), []
    while True:
        a = agent.act(obs, info)
        out.append((a["machine"], a["command"]))
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            return out


def episode_catalogue(scenario: Scenario, topology: dict | None = None):
    """The episode's discrete action catalogue, as the env lays it out (``topology``: the
    env option the scenario was generated with)."""
    from netarena_gym.core.actions import Catalogue
    from netarena_gym.routing.catalogue import Dims, fill
    from netarena_gym.routing.generator import level_config
    lay = Layout(TopologySpec.from_dict(scenario.params["topology"]))
    dims = Dims.of(level_config(scenario.level, topology))
    cat = Catalogue(dims.size)
    fill(cat, lay, dims)
    return cat


def random_commands(scenario: Scenario, n: int, seed: int,
                    topology: dict | None = None) -> list[tuple[str, str]]:
    """``n`` uniformly drawn entries of the episode's action catalogue (``topology``: the
    env option the scenario was generated with)."""
    cat = episode_catalogue(scenario, topology)
    valid = np.flatnonzero(cat.mask)
    rng = rng_from_seed(seed)
    picks = [cat.entries[int(valid[rng.integers(len(valid))])].action for _ in range(n)]
    return [(p["machine"], p["command"]) for p in picks]


def wrong_fixes(scenario: Scenario, n: int, seed: int) -> list[tuple[str, str]]:
    """Plausible wrong repairs: the right kind of command aimed at the wrong target (a
    LAN's or a transit link's route, address, interface or filter)."""
    lay = Layout(TopologySpec.from_dict(scenario.params["topology"]))
    rng = rng_from_seed(seed)
    cands = []
    for r in lay.routers:
        for itf in lay.router_ifaces[r]:
            cands += [(r, f"ip link set {itf} down"), (r, f"ip addr flush dev {itf}"),
                      (r, f"ip link set {itf} mtu 1400"), (r, f"ifconfig {itf} down"),
                      (r, f"ip route del 192.168.1.0/24 dev {itf}")]
        for s in lay.subnets:
            net = f"{int_to_ip(s.net)}/24"
            cands += [(r, f"ip route del {net}"), (r, f"iptables -A FORWARD -d {net} -j DROP"),
                      (r, f"iptables -I INPUT -s {net} -j REJECT"),
                      (r, f"ip route add blackhole {int_to_ip(s.net + 100)}/32"),
                      (r, f"ip route replace {net} via 10.9.9.9")]
        for ln in lay.links:
            net = f"{int_to_ip(ln.net)}/30"
            cands += [(r, f"ip route del {net}"), (r, f"iptables -A FORWARD -s {net} -j DROP"),
                      (r, f"ip route replace {net} via {int_to_ip(ln.b_ip)}")]
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


def grammar_commands(scenario: Scenario, n: int, seed: int) -> list[tuple[str, str]]:
    """``n`` commands from a random agent over the full command grammar of the allow-list
    (every program family, its subcommands, option spellings and argument forms, with
    real targets of the episode and deliberate mistakes: wrong objects, abbreviations,
    missing or malformed arguments, unknown programs, pipes into filters and redirects),
    on any router or host; not only the catalogue."""
    lay = Layout(TopologySpec.from_dict(scenario.params["topology"]))
    rng = rng_from_seed(seed)

    def pick(xs):
        return xs[int(rng.integers(len(xs)))]

    machines = list(lay.routers) + [h for s in lay.subnets for h in s.hosts]
    out = []
    for _ in range(n):
        m = pick(machines) if rng.random() < 0.3 else pick(lay.routers)
        itfs = lay.router_ifaces.get(m) or [f"{m}-eth0"]
        itf = pick(itfs + ["eth9", "lo"]) if rng.random() < 0.2 else pick(itfs)
        s = pick(lay.subnets)
        net = f"{int_to_ip(s.net)}/24"
        gw = int_to_ip(s.gateway)
        host = int_to_ip(s.net + 100 + int(rng.integers(len(s.hosts))))
        addr = pick([f"{gw}/24", f"{gw}/{pick(['8', '16', '30', '32'])}", f"10.{int(rng.integers(1, 255))}.0.1/24",
                     f"{host}/24", "192.168.300.1/24", gw])
        prefix = pick([net, f"{host}/32", "10.0.0.0/8", "default", "192.168.1", "0.0.0.0/0"])
        ipopt = pick(["", "", "", "-4 ", "-s ", "-d ", "-o ", "-br ", "-c "])
        fam = pick([
            lambda: f"ip {ipopt}{pick(['a', 'addr', 'address', 'ad'])} {pick(['', 'show', 'list', 'sh'])}"
                    f"{pick(['', f' dev {itf}', f' {itf}'])}",
            lambda: f"ip addr {pick(['add', 'del', 'replace', 'change'])} {addr} dev {itf}"
                    f"{pick(['', ' brd +', ' label ' + itf])}",
            lambda: f"ip addr flush dev {itf}",
            lambda: f"ip {ipopt}{pick(['l', 'link', 'li'])} {pick(['', 'show', f'show dev {itf}', f'show {itf}'])}",
            lambda: f"ip link set {pick(['', 'dev '])}{itf} {pick(['up', 'down', 'mtu 1500', 'mtu 68', 'mtu 70000', 'promisc off', 'promisc on', 'arp off', 'arp on', 'bogus'])}",
            lambda: f"ip {ipopt}{pick(['r', 'route', 'ro'])} {pick(['', 'show', 'list', 'show table main', 'show table local', f'show dev {itf}', 'show table all'])}",
            lambda: f"ip route {pick(['add', 'del', 'replace', 'change', 'append'])} {prefix}"
                    f"{pick(['', f' dev {itf}', f' via {gw}', f' via {host}', ' via 10.9.9.9', f' dev {itf} metric 100', ' blackhole', f' dev {itf} src {gw}', f' dev {itf} proto kernel scope link src {gw}'])}",
            lambda: f"ip route get {pick([host, gw, '8.8.8.8', '192.168.1.100', 'x'])}",
            lambda: f"ip route flush {pick(['table main', 'cache', f'dev {itf}', ''])}",
            lambda: f"ip {pick(['ru', 'rule'])} {pick(['', 'show', 'list'])}",
            lambda: f"ip rule {pick(['add', 'del'])} {pick(['prohibit pref 0', 'pref 0 prohibit', 'from all lookup main pref 100', f'from {net} table 100', 'pref 32766', 'blackhole'])}",
            lambda: f"ip {pick(['n', 'neigh', 'neighbour'])} {pick(['', 'show', 'flush all', f'flush dev {itf}', f'add {host} lladdr 02:00:00:00:00:01 dev {itf}', f'del {host} dev {itf}'])}",
            lambda: pick(["ip", "ip help", "ip foo", "ip route sho", "ip addr add", "ip link set", "ip -6 route",
                          "ip -j addr", "ip route add", "ip r a 10.0.0.0/8"]),
            lambda: f"ifconfig{pick(['', ' -a', f' {itf}', f' {itf} up', f' {itf} down', f' {itf} {gw} netmask 255.255.255.0', f' {itf} mtu 1500', ' eth9', f' {itf} bogus', f' {itf} 10.{int(rng.integers(1, 255))}.0.1/33', f' {itf} 10.1/0x18'])}",
            lambda: f"route{pick([' -n', '', f' add -net {net[:-3]} netmask 255.255.255.0 dev {itf}', f' del -net {net[:-3]} netmask 255.255.255.0', f' add default gw {gw}', ' -z'])}",
            lambda: f"arp{pick([' -n', ' -a', '', f' -d {host}', f' -n {host}', ' -x'])}",
            lambda: f"sysctl {pick(['net.ipv4.ip_forward', '-w net.ipv4.ip_forward=1', '-w net.ipv4.ip_forward=0', '-w net.ipv4.ip_forward=2', f'net.ipv4.conf.{itf}.forwarding', '-w net.ipv4.conf.all.forwarding=1', 'net.ipv4.icmp_echo_ignore_all', 'net.bogus', '-q -w net.ipv4.ip_forward=1', ''])}",
            lambda: f"iptables {pick(['-S', '-L', '-L -n', '-L -n -v', '-L FORWARD -n', '-t nat -S', '-F', '-X', '-P FORWARD ACCEPT', '-P FORWARD DROP', '-P INPUT ACCEPT', f'-A FORWARD -s {net} -j DROP', f'-D FORWARD -s {net} -j DROP', f'-I INPUT -s {net} -j REJECT', f'-D INPUT -s {net} -j DROP', '-D FORWARD 1', '-A FORWARD -j BOGUS', '-Z', '--bogus', '-L NOCHAIN'])}",
            lambda: pick(["iptables-save", "tc qdisc show", f"tc qdisc show dev {itf}", f"tc qdisc del dev {itf} root",
                          "tc qdisc", "tc qdisc help", f"tc qdisc add dev {itf} root pfifo", "tc filter show", "tc"]),
            lambda: f"ping -c 1 -W 1 {pick([host, gw, '10.9.9.9'])}",
            lambda: pick(["cat /proc/sys/net/ipv4/ip_forward", f"cat /proc/sys/net/ipv4/conf/{itf}/forwarding",
                          "cat /proc/net/route", "cat /proc/net/arp", "echo 1 > /proc/sys/net/ipv4/ip_forward",
                          "echo 0 > /proc/sys/net/ipv4/ip_forward", "echo hello", "cat /proc/sys/net/ipv4/nope",
                          "echo 1 > /proc/sys/net/ipv4/nope > /dev/null"]),
            lambda: pick(["ip route | grep 192.168", "ip addr show | head -n 5", "ip -o link | wc -l",
                          "iptables -S | grep DROP", "ip rule | sort", "route -n | tail -n 2",
                          "ip route show; ip rule show", "ip link show && ip addr show",
                          "ip addr show nosuch || echo missing"]),
            lambda: pick(["ifconfg", "iproute", "netstat -rn", "foo --help", "ip6 route"]),
        ])
        out.append((m, fam()))
    return out
