"""Fault types, their methods, how each is sampled and the real commands that inject it.

One table is the single source of truth: a method's parameters are all drawn when the
scenario is generated and stored in the record; injecting it only renders commands from
those parameters (nothing is drawn at injection time). The same commands run on the
simulator and on Mininet.

Which methods are drawn depends on the generator's settings only, never on the backend
(:func:`methods_for`'s ``drawable``): the methods that need netem are drawn only when the
generator opts in, and :func:`check_supported` refuses a scenario a backend cannot run.

Types and methods (upstream's five types with their methods, plus the extra variants):

=========================== == =========================================================
type                        m  injected on the router
=========================== == =========================================================
disable_routing             1  ``sysctl -w net.ipv4.ip_forward=0``
                            2  ``iptables -P FORWARD DROP``
                            3  ``ip rule add prohibit pref 0``
                            4  ``iptables -A FORWARD -s SUBNET -j DROP``
                            5  ``ip rule add from all prohibit`` (prohibit-all rule)
disable_interface           1  ``ifconfig IF down``
                            2  ``ip link set IF down``
                            3  ``ip link set IF mtu 68``
                            4  ``tc qdisc add dev IF root netem loss P%`` (needs netem)
remove_ip                   1  ``ip addr flush dev IF``
                            2  flush, then a foreign ``10.a.b.1/24``
                            3  flush, then the right address with a wrong mask
                            4  flush, then another interface's address (a duplicate)
drop_traffic_to_from_subnet 1  ``iptables -A INPUT -s SUB -j DROP`` + ``-A OUTPUT -d SUB``
                            2  the same with ``-j REJECT``
                            3  the same with ``-p icmp``
                            4  ``tc qdisc add dev IF root netem delay Dms`` (needs netem)
                            5  the same rules with ``-p tcp`` (invisible to ping: a
                               distractor, only drawn beside an observable fault)
                            6  ``tc qdisc add dev IF root netem corrupt P%`` (needs netem)
wrong_routing_table         1  delete the route to SUB, add it ``dev`` a wrong interface
                            2  delete, add ``via 10.255.255.254`` (rejected: route missing)
                            3  delete, add ``dev`` a wrong interface ``metric M``
                            4  delete, add ``via`` the router's own address
                            5  ``ip route add blackhole HOST/32`` for one host
=========================== == =========================================================
"""
from __future__ import annotations

import bisect
import ipaddress
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.core.seeding import choice
from netarena_gym.errors import ScenarioError
from netarena_gym.routing.topology import Layout

TYPES = ("disable_routing", "disable_interface", "remove_ip",
         "drop_traffic_to_from_subnet", "wrong_routing_table")
ABBREV = {"disable_routing": "DR", "disable_interface": "DI", "remove_ip": "RI",
          "drop_traffic_to_from_subnet": "DT", "wrong_routing_table": "WR"}


@dataclass(frozen=True)
class Fault:
    type: str
    method: int
    router: str
    params: dict[str, Any] = field(default_factory=dict)

    def commands(self) -> list[str]:
        return METHODS[self.type][self.method].render(self.params)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "method": self.method, "router": self.router,
                "params": dict(self.params)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Fault":
        t, m = d["type"], int(d["method"])
        if t not in METHODS or m not in METHODS[t]:
            raise ScenarioError(f"unknown fault {t!r} method {m}")
        return cls(type=t, method=m, router=d["router"], params=dict(d.get("params", {})))

    @property
    def label(self) -> str:
        return f"{ABBREV[self.type]}{self.method}"


@dataclass(frozen=True)
class Method:
    sample: Callable[[np.random.Generator, Layout, str], dict]
    render: Callable[[dict], list[str]]
    needs: frozenset[str] = frozenset()  # backend capabilities, e.g. {"netem"}
    observable_alone: bool = True


# ------------------------------------------------------------------ samplers
def _subnet_prefix(rng, lay: Layout, router: str) -> dict:
    s = choice(rng, lay.subnets)
    return {"subnet": f"{int_to_ip(s.net)}/24"}


def _iface(rng, lay: Layout, router: str) -> dict:
    return {"interface": choice(rng, lay.router_ifaces[router])}


def _intended_addr(lay: Layout, iface: str) -> tuple[str, int]:
    alias = lay.iface_alias(iface.split("-")[0], iface)
    ip, _, plen = alias.split()[-1].partition("/")
    return ip, int(plen)


def _iface_and(extra: Callable) -> Callable:
    def sample(rng, lay, router):
        d = _iface(rng, lay, router)
        d.update(extra(rng, lay, router, d["interface"]))
        return d
    return sample


def _foreign(rng, lay, router, iface):
    return {"address": f"10.{int(rng.integers(1, 255))}.{int(rng.integers(1, 255))}.1/24"}


def _wrong_mask(rng, lay, router, iface):
    ip, plen = _intended_addr(lay, iface)
    masks = [m for m in (8, 16, 24, 30, 31, 32) if m != plen]
    return {"address": f"{ip}/{choice(rng, masks)}"}


def _duplicate(rng, lay, router, iface):
    others = [i for i in lay.router_ifaces[router] if i != iface]
    ip, plen = _intended_addr(lay, choice(rng, others))
    return {"address": f"{ip}/{plen}"}


def _iface_toward(lay: Layout, router: str, subnet_index: int) -> str:
    s = lay.subnets[subnet_index - 1]
    if s.router == router:
        return s.iface
    return lay.next_hops(router)[s.router][0]


def _subnet_and_iface(extra: Callable | None = None) -> Callable:
    def sample(rng, lay, router):
        s = choice(rng, lay.subnets)
        d = {"subnet": f"{int_to_ip(s.net)}/24",
             "interface": _iface_toward(lay, router, s.index)}
        if extra:
            d.update(extra(rng))
        return d
    return sample


def _route_fault(extra: Callable | None = None) -> Callable:
    """Pick the subnet whose route is corrupted and the wrong interface to use."""
    def sample(rng, lay, router):
        s = choice(rng, lay.subnets)
        hops = lay.next_hops(router)
        if s.router == router:
            dev, via = s.iface, None
        else:
            dev, gw = hops[s.router]
            via = int_to_ip(gw)
        wrong = choice(rng, [i for i in lay.router_ifaces[router] if i != dev])
        wrong_ip, _ = _intended_addr(lay, wrong)
        d = {"subnet": f"{int_to_ip(s.net)}/24", "dev": dev, "via": via,
             "wrong_dev": wrong, "wrong_ip": wrong_ip}
        if extra:
            d.update(extra(rng, s))
        return d
    return sample


def _blackhole(rng, lay, router):
    s = choice(rng, lay.subnets)
    j = int(rng.integers(0, len(s.hosts)))
    return {"host": s.hosts[j], "address": f"{int_to_ip(s.net + 100 + j)}/32"}


def _del_route(p) -> str:
    via = f" via {p['via']}" if p.get("via") else ""
    return f"ip route del {p['subnet']}{via} dev {p['dev']}"


def _rules(target: str, proto: str = ""):
    def render(p):
        return [f"iptables -A INPUT{proto} -s {p['subnet']} -j {target}",
                f"iptables -A OUTPUT{proto} -d {p['subnet']} -j {target}"]
    return render


NETEM = frozenset({"netem"})

METHODS: dict[str, dict[int, Method]] = {
    "disable_routing": {
        1: Method(lambda r, l, x: {}, lambda p: ["sysctl -w net.ipv4.ip_forward=0"]),
        2: Method(lambda r, l, x: {}, lambda p: ["iptables -P FORWARD DROP"]),
        3: Method(lambda r, l, x: {}, lambda p: ["ip rule add prohibit pref 0"]),
        4: Method(_subnet_prefix, lambda p: [f"iptables -A FORWARD -s {p['subnet']} -j DROP"]),
        5: Method(lambda r, l, x: {}, lambda p: ["ip rule add from all prohibit"]),
    },
    "disable_interface": {
        1: Method(_iface, lambda p: [f"ifconfig {p['interface']} down"]),
        2: Method(_iface, lambda p: [f"ip link set {p['interface']} down"]),
        3: Method(_iface, lambda p: [f"ip link set {p['interface']} mtu 68"]),
        4: Method(_iface_and(lambda r, l, x, i: {"loss_pct": int(r.integers(50, 96))}),
                  lambda p: [f"tc qdisc add dev {p['interface']} root netem loss {p['loss_pct']}%"],
                  needs=NETEM),
    },
    "remove_ip": {
        1: Method(_iface, lambda p: [f"ip addr flush dev {p['interface']}"]),
        2: Method(_iface_and(_foreign), lambda p: [
            f"ip addr flush dev {p['interface']}", f"ip addr add {p['address']} dev {p['interface']}"]),
        3: Method(_iface_and(_wrong_mask), lambda p: [
            f"ip addr flush dev {p['interface']}", f"ip addr add {p['address']} dev {p['interface']}"]),
        4: Method(_iface_and(_duplicate), lambda p: [
            f"ip addr flush dev {p['interface']}", f"ip addr add {p['address']} dev {p['interface']}"]),
    },
    "drop_traffic_to_from_subnet": {
        1: Method(_subnet_prefix, _rules("DROP")),
        2: Method(_subnet_prefix, _rules("REJECT")),
        3: Method(_subnet_prefix, _rules("DROP", " -p icmp")),
        4: Method(_subnet_and_iface(lambda r: {"delay_ms": int(r.integers(1000, 5001))}),
                  lambda p: [f"tc qdisc add dev {p['interface']} root netem delay {p['delay_ms']}ms"],
                  needs=NETEM),
        5: Method(_subnet_prefix, _rules("DROP", " -p tcp"), observable_alone=False),
        6: Method(_subnet_and_iface(lambda r: {"corrupt_pct": int(r.integers(20, 51))}),
                  lambda p: [f"tc qdisc add dev {p['interface']} root netem corrupt {p['corrupt_pct']}%"],
                  needs=NETEM),
    },
    "wrong_routing_table": {
        1: Method(_route_fault(), lambda p: [
            _del_route(p), f"ip route add {p['subnet']} dev {p['wrong_dev']}"]),
        2: Method(_route_fault(), lambda p: [
            _del_route(p), f"ip route add {p['subnet']} via 10.255.255.254"]),
        3: Method(_route_fault(lambda r, s: {"metric": int(r.integers(5000, 20001))}), lambda p: [
            _del_route(p), f"ip route add {p['subnet']} dev {p['wrong_dev']} metric {p['metric']}"]),
        4: Method(_route_fault(), lambda p: [
            _del_route(p), f"ip route add {p['subnet']} via {p['wrong_ip']}"]),
        5: Method(_blackhole, lambda p: [f"ip route add blackhole {p['address']}"]),
    },
}

# the parameters that name what a fault breaks (its target); the others say how
TARGET_PARAMS = {"disable_routing": ("subnet",), "disable_interface": ("interface",),
                 "remove_ip": ("interface",), "drop_traffic_to_from_subnet": ("subnet",),
                 "wrong_routing_table": ("subnet", "host")}
ROOT_QDISC = {("disable_interface", 4), ("drop_traffic_to_from_subnet", 4),
              ("drop_traffic_to_from_subnet", 6)}


def target(f: Fault) -> tuple:
    """What ``f`` breaks: its type, router and target (an interface, a subnet's route, a
    host's, a subnet's traffic, the router's forwarding). Two faults of one target undo or
    refuse one another (a second flush of one interface, a second ``ip route del`` of one
    route answers ``No such process``), so a scenario draws each target once."""
    return (f.type, f.router) + tuple(f.params.get(k) for k in TARGET_PARAMS[f.type])


def clash(f: Fault, g: Fault) -> bool:
    """Whether ``f`` and ``g`` both add a root qdisc to one interface (the second ``tc qdisc
    add ... root`` is refused: the recorded fault would not be injected)."""
    return ((f.type, f.method) in ROOT_QDISC and (g.type, g.method) in ROOT_QDISC
            and f.router == g.router and f.params["interface"] == g.params["interface"])


def inert(lay: Layout, f: Fault) -> bool:
    """Whether ``f`` changes nothing a probe sees on the intact network. Alone it is
    resampled with the scenario (nothing is broken); beside other faults it would be a
    fault that is not there, so it is not drawn there:

    * the right address with a *wider* mask (``remove_ip`` method 3) where every route
      through the interface stays covered: the wider connected route is shadowed by the
      intended, more specific ones (a LAN's ``/8``, ``/16``), and a transit interface
      whose routes all fall inside it reaches them on-link (a second spine's link of a
      leaf-spine: the spine answers ARP for its own addresses);
    * forwarding off, a FORWARD ``DROP`` policy or rule (``disable_routing`` 1, 2, 4) on a
      router that forwards nothing: a leaf-spine's spines past the first carry no path
      (every leaf routes through the first)."""
    if (f.type, f.method) in {("disable_routing", 1), ("disable_routing", 2),
                              ("disable_routing", 4)}:
        return not _forwards(lay, f.router)
    if (f.type, f.method) != ("remove_ip", 3):
        return False
    itf = f.params["interface"]
    _, plen = _intended_addr(lay, itf)
    ip, _, mask = str(f.params["address"]).partition("/")
    if int(mask) >= plen:
        return False
    wide = ipaddress.ip_network(f"{ip}/{mask}", strict=False)
    lo, hi = int(wide.network_address), int(wide.broadcast_address)
    peer = next((nb for nb, i, _ in lay.neighbors(f.router) if i == itf), None)
    owners = _probed(lay)
    keys = sorted(owners)
    for net, n, dev, gw in lay.intended_routes(f.router):
        if dev != itf or gw is None:
            continue
        # the probed addresses this route reaches must stay on-link, and be the peer's
        for a in keys[bisect.bisect_left(keys, net):bisect.bisect_left(keys, net + (1 << (32 - n)))]:
            if not lo <= a <= hi or owners[a] != peer:
                return False
    return True


def _probed(lay: Layout) -> dict[int, str]:
    """Every probed address of ``lay`` and its node: the hosts, each router's first
    subnet gateway, or for a router without subnets its first transit address."""
    out = {}
    for s in lay.subnets:
        out.setdefault(s.gateway, s.router)
        for j, h in enumerate(s.hosts):
            out[s.net + 100 + j] = h
    routers = {s.router for s in lay.subnets}
    for ln in lay.links:
        for r, a in ((ln.a, ln.a_ip), (ln.b, ln.b_ip)):
            if r not in routers:
                routers.add(r)
                out[a] = r
    return out


def _forwards(lay: Layout, router: str) -> bool:
    """Whether ``router`` forwards any probe: it has subnets (its hosts' traffic), or it is
    another router's first hop toward a third."""
    if any(s.router == router for s in lay.subnets):
        return True
    mine = {ln.a_ip for ln in lay.links if ln.a == router}
    mine |= {ln.b_ip for ln in lay.links if ln.b == router}
    return any(gw in mine for x in lay.routers if x != router
               for y, (_, gw) in lay.next_hops(x).items() if y != router)


# upstream's get_detail draws methods 1-4 (1-3 for disable_interface)
UPSTREAM_METHODS = {"disable_routing": (1, 2, 3, 4), "disable_interface": (1, 2, 3),
                    "remove_ip": (1, 2, 3, 4), "drop_traffic_to_from_subnet": (1, 2, 3, 4),
                    "wrong_routing_table": (1, 2, 3, 4)}


def methods_for(ftype: str, drawable: frozenset[str], *, alone: bool,
                allowed: tuple[int, ...] | None = None) -> list[int]:
    """The methods of ``ftype`` that may be drawn. ``drawable`` is the set of capabilities
    whose methods are in the draw (e.g. ``{"netem"}`` when netem faults are opted in); it is
    a property of the generator's settings, never of the backend, so that one seed draws
    one scenario on every backend."""
    out = []
    for m, spec in METHODS[ftype].items():
        if allowed is not None and m not in allowed:
            continue
        if not spec.needs <= drawable:
            continue
        if alone and not spec.observable_alone:
            continue
        out.append(m)
    return out


def sample_fault(rng: np.random.Generator, lay: Layout, ftype: str, router: str,
                 drawable: frozenset[str], *, alone: bool,
                 allowed: tuple[int, ...] | None = None) -> Fault:
    method = choice(rng, methods_for(ftype, drawable, alone=alone, allowed=allowed))
    params = METHODS[ftype][method].sample(rng, lay, router)
    return Fault(ftype, method, router, params)


def needed_capabilities(faults) -> frozenset[str]:
    """The backend capabilities the faults (``Fault`` objects or their dicts) need."""
    out: set[str] = set()
    for f in faults:
        f = f if isinstance(f, Fault) else Fault.from_dict(f)
        out |= METHODS[f.type][f.method].needs
    return frozenset(out)


def check_supported(faults, capabilities: frozenset[str], backend: str = "the backend") -> None:
    """Raise :class:`~netarena_gym.errors.ScenarioError` when ``faults`` need a capability
    the backend lacks (such an episode is refused, never swapped for another)."""
    fs = [f if isinstance(f, Fault) else Fault.from_dict(f) for f in faults]
    missing = needed_capabilities(fs) - frozenset(capabilities)
    if missing:
        labels = sorted({f.label for f in fs if METHODS[f.type][f.method].needs & missing})
        raise ScenarioError(
            f"{backend} cannot run this scenario: fault(s) {', '.join(labels)} need "
            f"{', '.join(sorted(missing))}, which {backend} lacks (capabilities: "
            f"{', '.join(sorted(capabilities)) or 'none'}); draw without netem faults "
            f"(netem_faults=False) or use a backend that has {', '.join(sorted(missing))}")
