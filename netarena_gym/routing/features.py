"""Fixed-size numeric observation of the routing task (the discrete interface).

Everything except the reachability matrix comes from parsed inspection output (see
:mod:`netarena_gym.routing.views`), compared with the intended configuration of the
topology. With ``observability="partial"`` a router's features are what its last
inspection showed (``inspected`` says whether there was one); with ``"full"`` they are
refreshed after every change."""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from gymnasium import spaces

from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.routing.catalogue import Dims, subnet_slot
from netarena_gym.routing.topology import Layout
from netarena_gym.routing.views import DEFAULT_RULES, RouterView

ROUTER_FEATURES = ("inspected", "forwarding_off", "input_drop", "forward_drop", "output_drop",
                   "filter_rules", "extra_ip_rules", "bad_route_types")
IFACE_FEATURES = ("present", "down", "mtu_wrong", "address_missing", "address_extra",
                  "qdisc", "promisc")
ROUTE_FEATURES = ("wrong_or_missing", "extra")
_HARMLESS = ("noqueue", "pfifo_fast", "fq_codel", "mq")


def feature_spaces(d: Dims) -> dict[str, spaces.Space]:
    return {
        "reachability": spaces.MultiBinary([d.nodes, d.nodes]),
        "node_present": spaces.MultiBinary(d.nodes),
        "router_features": spaces.Box(0.0, 1.0, (d.routers, len(ROUTER_FEATURES)), np.float32),
        "iface_features": spaces.Box(0.0, 1.0, (d.routers, d.ifaces, len(IFACE_FEATURES)), np.float32),
        "route_features": spaces.Box(0.0, 1.0, (d.routers, d.subnet_slots + d.link_slots,
                                                len(ROUTE_FEATURES)), np.float32),
    }


class _Maps(NamedTuple):
    """What a FeatureBuilder derives from the layout and node names alone (read-only)."""
    slots: np.ndarray
    present: np.ndarray
    iface: np.ndarray
    intent: tuple


@lru_cache(maxsize=32)
def _episode_maps(lay: Layout, dims: Dims, names: tuple[str, ...]) -> _Maps:
    """The slot maps and the intended configuration, memoised: ``lay`` comes from
    :func:`~netarena_gym.routing.topology.layout_of`, one object per spec, so a fixed
    topology (64 routers: about 20 ms of a reset) derives them once."""
    slots = []
    for n in names:
        if n.startswith("r"):
            slots.append(dims.routers * dims.subnets * dims.hosts + int(n[1:]))
        else:
            s = lay.subnet_of_host[n]
            r = int(s.router[1:])
            local = int(s.iface.rsplit("eth", 1)[1]) - 1
            h = s.hosts.index(n)
            slots.append((r * dims.subnets + local) * dims.hosts + h)
    slots = np.asarray(slots, dtype=np.intp)
    present = np.zeros(dims.nodes, dtype=np.int8)
    present[slots] = 1
    iface = np.zeros((dims.routers, dims.ifaces, len(IFACE_FEATURES)), np.float32)
    for ri, r in enumerate(lay.routers):
        for ii, _ in enumerate(lay.router_ifaces[r]):
            iface[ri, ii, 0] = 1.0
    for a in (slots, present, iface):
        a.setflags(write=False)
    return _Maps(slots, present, iface, _layout_intent(lay, dims))


def _layout_intent(lay: Layout, dims: Dims):
    addrs = {}
    for s in lay.subnets:
        addrs[s.iface] = (int_to_ip(s.gateway), 24)
    for ln in lay.links:
        addrs[ln.a_iface] = (int_to_ip(ln.a_ip), 30)
        addrs[ln.b_iface] = (int_to_ip(ln.b_ip), 30)
    # the slot of each routed prefix: subnets by their global index (past subnet 255 the
    # third octet no longer is the index), transit links by theirs
    slot_of = {(s.net, 24): subnet_slot(lay, dims, s.index) for s in lay.subnets}
    slot_of.update({(ln.net, 30): dims.subnet_slots + ln.index for ln in lay.links})
    routes = {}
    for r in lay.routers:
        table = {}
        for net, plen, dev, gw in lay.intended_routes(r):
            table[f"{int_to_ip(net)}/{plen}"] = (slot_of[(net, plen)], dev,
                                                 int_to_ip(gw) if gw else None)
        routes[r] = table
    return addrs, routes


class FeatureBuilder:
    """Holds the per-episode slot maps and the current feature arrays."""

    def __init__(self, lay: Layout, dims: Dims, names: list[str]):
        self.lay, self.dims = lay, dims
        maps = _episode_maps(lay, dims, tuple(names))
        self.slots = maps.slots
        self.present = maps.present.copy()
        self.router = np.zeros((dims.routers, len(ROUTER_FEATURES)), np.float32)
        self.iface = maps.iface.copy()
        self.route = np.zeros((dims.routers, dims.subnet_slots + dims.link_slots,
                               len(ROUTE_FEATURES)), np.float32)
        self._reach = np.zeros((dims.nodes, dims.nodes), np.int8)
        self._reach_src = None
        self._intent = maps.intent

    def reachability(self, m: np.ndarray) -> np.ndarray:
        if m is not self._reach_src:
            self._reach[:] = 0
            self._reach[np.ix_(self.slots, self.slots)] = m
            self._reach_src = m
        return self._reach

    def update_router(self, router: str, v: RouterView) -> None:
        ri = int(router[1:])
        addrs, routes = self._intent
        f = self.router[ri]
        f[:] = 0.0
        f[0] = 1.0
        f[1] = float(v.ip_forward is False)
        f[2] = float(v.policies.get("INPUT", "ACCEPT") != "ACCEPT")
        f[3] = float(v.policies.get("FORWARD", "ACCEPT") != "ACCEPT")
        f[4] = float(v.policies.get("OUTPUT", "ACCEPT") != "ACCEPT")
        f[5] = float(bool(v.filter_rules))
        f[6] = float(any(r not in DEFAULT_RULES for r in v.rules))
        f[7] = float(any(rv.type != "unicast" for rv in v.routes))
        for ii, name in enumerate(self.lay.router_ifaces[router]):
            row = self.iface[ri, ii]
            itf = v.ifaces.get(name)
            if itf is None:
                continue
            want = addrs[name]
            row[1] = float(not itf.up)
            row[2] = float(itf.mtu != 1500)
            row[3] = float(want not in itf.addrs)
            row[4] = float(any(a != want for a in itf.addrs))
            q = v.qdiscs.get(name)
            row[5] = float(q is not None and q[0] not in _HARMLESS)
            row[6] = float(itf.promisc)
        rt = self.route[ri]
        rt[:] = 0.0
        by_prefix = {}
        for rv in v.routes:
            if rv.type == "unicast":
                by_prefix.setdefault(rv.prefix, []).append(rv)
        for prefix, (slot, dev, via) in routes[router].items():
            got = by_prefix.get(prefix, [])
            best = min(got, key=lambda x: x.metric) if got else None
            rt[slot, 0] = float(best is None or best.dev != dev or best.via != via)
            rt[slot, 1] = float(len(got) > 1)

    def arrays(self, m: np.ndarray) -> dict[str, np.ndarray]:
        return {"reachability": self.reachability(m).copy(), "node_present": self.present.copy(),
                "router_features": self.router.copy(), "iface_features": self.iface.copy(),
                "route_features": self.route.copy()}
