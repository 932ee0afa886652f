"""Fast structural copies of simulated networks (:class:`~netarena_gym.routing.state.Network`).

A reset copies a pristine network instead of building it again (see
:func:`netarena_gym.routing.topology.build_network`). The copy is structural, not
``copy.deepcopy``: every container (interface map, route tables, rule list, sysctls,
iptables chains, segments) and every record the simulator changes in place (interfaces,
qdiscs, iptables rules) is new; the records the simulator only ever replaces (addresses,
routes, policy rules) are shared with the source, as are strings, numbers and tuples.
The copy's caches start empty, as a freshly built network's do.

The attribute sets of ``Node`` and ``Network`` are checked against the ones this module
knows before a source is kept (:func:`clonable`): with an attribute added to the state
model and no rule here, nothing is copied (networks are built from nothing, a warning is
logged once) rather than the attribute shared; tests/routing/test_clone.py fails on it.
"""
from __future__ import annotations

import dataclasses
import logging
from operator import attrgetter

from netarena_gym.errors import NetArenaError
from netarena_gym.routing.state import Interface, IptRule, Iptables, Network, Node, Qdisc

__all__ = ["clone_network", "clone_node", "check_clonable", "clonable", "CloneError"]

log = logging.getLogger(__name__)


class CloneError(NetArenaError, TypeError):
    """The state model has an attribute this module does not know how to copy."""


# how each attribute is copied: "share" (immutable, or a cache rebuilt from the version),
# or a named rule below
_NODE_ATTRS = {
    "name": "share", "kind": "share", "version": "share", "_next_ifindex": "share",
    "_local_ips": "share", "_local_nets": "share", "_dst_only": "share",
    "interfaces": "interfaces", "tables": "tables", "rules": "list", "sysctl": "dict",
    "iptables": "iptables", "static_neigh": "dict", "network": "network",
    "_cache_version": "stale", "_route_cache": "empty", "_fingerprint": "share",
    "_fp_version": "share", "_lpm_index": "empty", "_memo": "empty",
    # set by ``ip addr``/``ifconfig`` (commands/ip_addr.py): a list replaced, never changed
    # in place, of records naming the (shared) addresses they describe
    "_ip_addr_meta": "list",
    "_tc_autohandle": "share",  # an int, set by tc (commands/tc.py)
}
_LISTS = tuple(k for k, rule in _NODE_ATTRS.items() if rule == "list" and k != "rules")
_EMPTY = tuple(k for k, rule in _NODE_ATTRS.items() if rule == "empty")  # caches: start empty
_NETWORK_ATTRS = {
    "nodes", "segments", "segment_of", "probe_ip", "version", "_nb_cache", "_nb_version",
    "arp_log", "neigh_tables", "neigh_forgotten", "traffic_rounds", "neigh_cache",
}
_ITF_FIELDS = tuple(f.name for f in dataclasses.fields(Interface))
_KNOWN_ITF = ("name", "ifindex", "mac", "mtu", "up", "promisc", "addresses", "alias", "qdisc",
              "peer_ifindex", "loopback", "noarp", "peer")
_QDISC_GET = attrgetter(*(f.name for f in dataclasses.fields(Qdisc)))
_IPTRULE_GET = attrgetter(*(f.name for f in dataclasses.fields(IptRule)))


def check_clonable(net: Network) -> None:
    """Raise :class:`CloneError` if ``net`` has attributes this module does not copy."""
    if set(_ITF_FIELDS) != set(_KNOWN_ITF):
        raise CloneError(f"Interface fields changed: {sorted(set(_ITF_FIELDS) ^ set(_KNOWN_ITF))}")
    extra = set(vars(net)) - _NETWORK_ATTRS
    if extra:
        raise CloneError(f"Network attributes unknown to clone.py: {sorted(extra)}")
    if {f.name for f in dataclasses.fields(Iptables)} != {"policies", "chains"}:
        raise CloneError("Iptables fields changed")
    for node in net.nodes.values():
        _check_node(node)


def _check_node(node: Node) -> None:
    extra = set(vars(node)) - set(_NODE_ATTRS)
    if extra:
        raise CloneError(f"Node attributes unknown to clone.py: {sorted(extra)}")


_warned: set[str] = set()


def clonable(net: Network, node: Node | None = None) -> bool:
    """Whether ``net`` (or only ``node`` of it) may be copied: :func:`check_clonable`'s
    verdict, logged once per reason as a warning when it refuses (the caller then keeps
    nothing and builds from nothing)."""
    try:
        if node is None:
            check_clonable(net)
        else:
            _check_node(node)
    except CloneError as e:
        if str(e) not in _warned:
            _warned.add(str(e))
            log.warning("routing state built from nothing, not copied: %s", e)
        return False
    return True


def _copy_interface(itf: Interface, new=object.__new__) -> Interface:
    c = new(Interface)  # every field of _KNOWN_ITF, assigned directly (dataclass init is slower)
    c.name = itf.name
    c.ifindex = itf.ifindex
    c.mac = itf.mac
    c.mtu = itf.mtu
    c.up = itf.up
    c.promisc = itf.promisc
    c.addresses = itf.addresses.copy()
    c.alias = itf.alias
    c.qdisc = None if itf.qdisc is None else Qdisc(*_QDISC_GET(itf.qdisc))
    c.peer_ifindex = itf.peer_ifindex
    c.loopback = itf.loopback
    c.noarp = itf.noarp
    c.peer = None  # re-linked by clone_network
    return c


def _copy_iptables(ipt: Iptables, new=object.__new__) -> Iptables:
    c = new(Iptables)
    c.policies = ipt.policies.copy()
    c.chains = {ch: [IptRule(*_IPTRULE_GET(r)) for r in rules] if rules else []
                for ch, rules in ipt.chains.items()}
    return c


def clone_node(src: Node, itf_map: dict | None = None) -> Node:
    """A copy of one node (see the module doc), in no network yet (``Network.add_node``
    puts it in one). Its interfaces' ``peer`` links are cleared; ``itf_map`` (when given)
    maps ``id(old interface)`` to the copy of every interface that had one, for
    :func:`clone_network` to re-link."""
    node = Node.__new__(Node)
    d = node.__dict__
    d.update(src.__dict__)
    itfs = {}
    for name, itf in src.interfaces.items():
        new = itfs[name] = _copy_interface(itf)
        if itf.peer is not None and itf_map is not None:
            itf_map[id(itf)] = new
    d["interfaces"] = itfs
    d["tables"] = {t: list(rs) for t, rs in src.tables.items()}
    d["rules"] = list(src.rules)
    d["sysctl"] = dict(src.sysctl)
    d["iptables"] = _copy_iptables(src.iptables)
    d["static_neigh"] = dict(src.static_neigh)
    d["network"] = None
    d["_cache_version"] = -1
    for name in _EMPTY:
        if name in d:
            d[name] = {}
    for name in _LISTS:
        if name in d:
            d[name] = list(d[name])
    return node


def clone_network(src: Network) -> Network:
    """A copy of ``src`` that shares no mutable state with it (see the module doc), for
    a network between traffic rounds (as built, before any probe: the neighbour round
    state and ARP log are not copied). ``src`` should have passed :func:`clonable`."""
    net = Network()
    itf_map: dict[int, Interface] = {}
    nodes = net.nodes
    for node in src.nodes.values():
        net.add_node(clone_node(node, itf_map))  # as the model holds its network
    for node in src.nodes.values():
        for name, itf in node.interfaces.items():
            if itf.peer is not None:
                nodes[node.name].interfaces[name].peer = itf_map[id(itf.peer)]
    net.segments = {k: list(v) for k, v in src.segments.items()}
    net.segment_of = dict(src.segment_of)
    net.probe_ip = dict(src.probe_ip)
    net.version = src.version
    net.traffic_rounds = src.traffic_rounds
    for key, value in src.neigh_tables.items():
        net.neigh_tables[key] = {k: dataclasses.replace(e) for k, e in value.items()}
    for key, value in src.neigh_forgotten.items():
        net.neigh_forgotten[key] = set(value)
    return net
