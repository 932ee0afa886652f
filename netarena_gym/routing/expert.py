"""A deterministic expert for the routing task.

It sees only what any agent sees: the pingall matrix in the observation and the outputs of
its own commands. It inspects every router once (one chained diagnostic command each),
derives the intended configuration from the interface labels (or, without labels, from the
single-router addressing plan: :func:`~netarena_gym.routing.views.derive_intent`), and repairs every deviation
in an order that never takes away working connectivity:

1. forwarding switch, filter policies and rules, policy-routing rules (only ever open);
2. links up, MTU, promiscuous mode;
3. missing addresses added (before any wrong one is removed);
4. qdiscs removed;
5. routes replaced with the intended ones;
6. clean-up: wrong addresses and wrong routes deleted (the correct ones are in place).

The episode ends as soon as every pair works, so clean-up only runs when still needed. If
the network is still broken after the plan, it inspects again and plans again. On networks
of more than four routers, consecutive route commands (phases 5 and 6) for one router are
chained into one command line (``a; b; ...``), as an operator would paste them: a link
that comes back up has lost every route through it, and a leaf of a 64-router network
has some two hundred.
"""
from __future__ import annotations

import re

from netarena_gym.core.observation import last_output as _last_output
from netarena_gym.routing.catalogue import LARGE_ABOVE_ROUTERS
from netarena_gym.routing.state import natural_key
from netarena_gym.routing.views import (
    DEFAULT_RULES, INSPECT, RouterView, derive_intent, parse_inspection)

_ROW = re.compile(r"^(\S+) -> ", re.M)
_ROUTER = re.compile(r"^r\d+$")
_HARMLESS_QDISCS = ("noqueue", "pfifo_fast", "fq_codel", "mq")
_TRAILERS = ("\n\nConfiguration of every node:", "\n\nSteps left:")
BATCH_ABOVE_ROUTERS = LARGE_ABOVE_ROUTERS
BATCH_CHARS = 3500  # a chained command line stays well inside the 4096-character action


def routers_in(observation: str) -> list[str]:
    return sorted({n for n in _ROW.findall(observation) if _ROUTER.match(n)}, key=natural_key)


def last_output(observation: str) -> str:
    return _last_output(observation, _TRAILERS)


def plan_repairs(views: dict[str, RouterView], batch: bool = False) -> list[dict[str, str]]:
    """The ordered repair commands that bring every router to its intended state
    (``batch``: route commands chained per router)."""
    intent = derive_intent(views)
    phases: list[list[tuple[str, str]]] = [[] for _ in range(6)]
    for r in sorted(views, key=natural_key):
        v = views[r]
        _open_filters(r, v, phases[0])
        _links(r, v, intent, phases[1])
        wrong_addrs = _addresses(r, v, intent, phases[2], phases[5])
        for dev, (kind, _) in v.qdiscs.items():
            if kind not in _HARMLESS_QDISCS and dev in v.ifaces:
                phases[3].append((r, f"tc qdisc del dev {dev} root"))
        _routes(r, v, intent, wrong_addrs, phases[4], phases[5])
    if batch:
        phases[4], phases[5] = _chain(phases[4]), _chain(phases[5])
    return [{"machine": m, "command": c} for ph in phases for m, c in ph]


def _chain(cmds: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Consecutive commands of one router joined with ``; `` (at most BATCH_CHARS each)."""
    out: list[tuple[str, str]] = []
    for m, c in cmds:
        if out and out[-1][0] == m and len(out[-1][1]) + 2 + len(c) <= BATCH_CHARS:
            out[-1] = (m, f"{out[-1][1]}; {c}")
        else:
            out.append((m, c))
    return out


def _open_filters(r: str, v: RouterView, out: list) -> None:
    if v.ip_forward is False:
        out.append((r, "sysctl -w net.ipv4.ip_forward=1"))
    for chain in ("INPUT", "FORWARD", "OUTPUT"):
        if v.policies.get(chain, "ACCEPT") != "ACCEPT":
            out.append((r, f"iptables -P {chain} ACCEPT"))
    if v.filter_rules:
        out.append((r, "iptables -F"))
    for chain in v.user_chains:
        out.append((r, f"iptables -X {chain}"))
    if "rule" in v.sections:
        for pref, text in DEFAULT_RULES[1:]:
            if (pref, text) not in v.rules:
                out.append((r, f"ip rule add pref {pref} {text}"))
        for pref, text in v.rules:
            if (pref, text) not in DEFAULT_RULES:
                out.append((r, f"ip rule del pref {pref} {text}"))


def _links(r: str, v: RouterView, intent, out: list) -> None:
    for name, itf in v.ifaces.items():
        if (r, name) not in intent.addrs:
            continue
        if not itf.up:
            out.append((r, f"ip link set {name} up"))
        if itf.mtu != 1500:
            out.append((r, f"ip link set {name} mtu 1500"))
        if itf.promisc:
            out.append((r, f"ip link set {name} promisc off"))


def _addresses(r: str, v: RouterView, intent, adds: list, cleanup: list) -> set[tuple[str, str]]:
    wrong = set()
    for name, itf in v.ifaces.items():
        want = intent.addrs.get((r, name))
        if want is None:
            continue
        if want not in itf.addrs:
            adds.append((r, f"ip addr add {want[0]}/{want[1]} dev {name}"))
        for a in itf.addrs:
            if a != want:
                wrong.add((name, a[0]))
                cleanup.append((r, f"ip addr del {a[0]}/{a[1]} dev {name}"))
    return wrong


def _routes(r: str, v: RouterView, intent, wrong_addrs, fixes: list, cleanup: list) -> None:
    if not any(router == r for router, _ in intent.addrs):
        # nothing says what this router should hold (no labels on a network of several
        # routers): every route would look wrong, and deleting them breaks working pairs
        return
    want = intent.routes.get(r, {})
    consumed: set[int] = set()
    for prefix, (dev, via) in want.items():
        actual = [i for i, rv in enumerate(v.routes) if rv.prefix == prefix and rv.type == "unicast"]
        best = min(actual, key=lambda i: v.routes[i].metric) if actual else None
        if best is not None and v.routes[best].dev == dev and v.routes[best].via == via:
            consumed.add(best)
            continue
        if via is not None:
            fixes.append((r, f"ip route replace {prefix} via {via} dev {dev}"))
        else:
            src = intent.addrs[(r, dev)][0]
            fixes.append((r, f"ip route replace {prefix} dev {dev} proto kernel scope link src {src}"))
        zero = [i for i in actual if v.routes[i].metric == 0]
        if zero:
            consumed.add(zero[0])  # replace rewrites the first metric-0 route in place
    for i, rv in enumerate(v.routes):
        if i in consumed or rv.prefix == "default":
            continue
        if rv.type != "unicast":
            cleanup.append((r, f"ip route del {rv.type} {rv.prefix}"))
            continue
        if rv.proto == "kernel" and rv.dev is not None and (rv.dev, rv.src) in wrong_addrs:
            continue  # goes away with its address
        spec = f"ip route del {rv.prefix}"
        if rv.via:
            spec += f" via {rv.via}"
        if rv.dev:
            spec += f" dev {rv.dev}"
        if rv.metric:
            spec += f" metric {rv.metric}"
        cleanup.append((r, spec))


class RoutingExpert:
    """Observation-only expert (text interface)."""

    def __init__(self, max_rounds: int = 3):
        self.max_rounds = max_rounds
        self.reset()

    def reset(self) -> None:
        self.views: dict[str, RouterView] = {}
        self.pending: str | None = None
        self.queue: list[dict[str, str]] = []
        self.planned = False
        self.rounds = 0
        self.routers: list[str] | None = None

    def act(self, observation: str, info: dict | None = None) -> dict[str, str]:
        if self.routers is None:
            self.routers = routers_in(observation)
        if self.pending is not None:
            self.views[self.pending] = parse_inspection(last_output(observation))
            self.pending = None
        todo = [r for r in self.routers if r not in self.views]
        if todo:
            self.pending = todo[0]
            return {"machine": todo[0], "command": INSPECT}
        if not self.planned:
            self.queue = plan_repairs(self.views,
                                      batch=len(self.routers) > BATCH_ABOVE_ROUTERS)
            self.planned = True
        if self.queue:
            return self.queue.pop(0)
        # the plan ran and the network is still broken: look again
        self.rounds += 1
        self.views, self.planned = {}, False
        self.pending = self.routers[0] if self.routers else None
        return {"machine": self.pending or "r0", "command": INSPECT}
