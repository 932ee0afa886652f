"""Linux networking state of every node, and the kernel rules that tie it together.

The simulator keeps, per node, what ``ip``, ``iptables``, ``tc`` and ``sysctl`` show on a
real Linux box: interfaces (admin state, MTU, addresses, promisc, alias), routing tables,
policy rules, ``net.ipv4.ip_forward``, the iptables filter table and root qdiscs.

The neighbour (ARP) cache is dynamic (see :mod:`netarena_gym.routing.neigh`): the network
keeps the tables that the agent's own traffic or a flush made explicit during the current
traffic round, and forgets a device's entries when the link goes down or loses its last
address, as ``neigh_ifdown`` does.

The records (addresses, interfaces, routes, rules, iptables, qdiscs) are in
:mod:`netarena_gym.routing.state_records`; this module re-exports them. Mutations go through :class:`Node` methods that reproduce what the kernel does around them
(connected routes appear with a primary address on an up interface; routes through an
interface are flushed when it goes down or loses its last address; ...). Every change bumps
``Node.version`` so that the reachability engine can cache per node.

Unchanged nodes of the same content share their route lookups across networks
(:func:`lookup_caches`): copies of a pristine node, and hosts of the same addressing
(:meth:`Node.host`, which a reset calls for every host; it sets the fields directly and
shares the immutable records). :func:`clear_shared` forgets what is shared.
"""
from __future__ import annotations

from netarena_gym.core.ipv4 import mask_of
# the records, re-exported: callers import every state name from this module
from netarena_gym.routing.state_records import (BUILTIN_CHAINS, DEFAULT_SYSCTL,  # noqa: F401
                                                DEFAULT_TABLE, LOCAL, MAIN, ROUTE_TYPES,
                                                RULE_ACTIONS, TABLE_IDS, TABLE_NAMES, Address,
                                                Interface, IptRule, Iptables, KERNEL_RULES,
                                                LO_ADDRESS, LO_MAC, Lookup, NeighEntry, Qdisc,
                                                Route, Rule, default_rules, natural_key,
                                                new_interface, new_iptables)

_MASKS = tuple(mask_of(n) for n in range(33))
_new = object.__new__
_NO_IPS: frozenset[int] = frozenset()
LPM_SCAN = 16  # tables of at most this many routes are scanned; longer ones are indexed


# route lookup caches shared by nodes of the same content: id(fingerprint) -> (the
# fingerprint, route cache, prefix index); see lookup_caches
_SHARED_LOOKUPS: dict[int, tuple] = {}
SHARED_LOOKUPS_MAX = 8192
# hosts' shared parts, see Node.host: (ifname, ip, plen, gateway) -> (routes, fingerprint)
_HOSTS: dict[tuple, tuple] = {}
HOSTS_MAX = 4096


def clear_shared() -> None:
    """Forget the lookups and host parts shared across networks."""
    _SHARED_LOOKUPS.clear()
    _HOSTS.clear()


def lookup_caches(node: "Node") -> tuple[dict, dict]:
    """Fresh route lookup caches for ``node``'s current version: its route cache and
    prefix index. A node never changed since it was built (version 0) whose fingerprint
    is known shares them with every node holding the very same fingerprint object
    (copies of one pristine node, :mod:`netarena_gym.routing.clone`, and hosts of the
    same addressing, :meth:`Node.host`, share it while unchanged): same content, same
    lookups, so the copies of a network start with the lookups of those before them.
    Any change bumps the version, and the next lookup takes new caches."""
    if node.version or node._fp_version:
        return {}, {}
    fp = node._fingerprint
    ent = _SHARED_LOOKUPS.get(id(fp))
    if ent is None or ent[0] is not fp:
        if len(_SHARED_LOOKUPS) >= SHARED_LOOKUPS_MAX:
            _SHARED_LOOKUPS.pop(next(iter(_SHARED_LOOKUPS)))
        ent = _SHARED_LOOKUPS[id(fp)] = (fp, {}, {})
    return ent[1], ent[2]


class Node:
    """One Linux network namespace: a router or a host."""

    def __init__(self, name: str, kind: str):
        self.name = name
        self.kind = kind  # "router" | "host"
        self.interfaces: dict[str, Interface] = {}
        self.tables: dict[int, list[Route]] = {MAIN: [], DEFAULT_TABLE: []}
        self.rules: list[Rule] = list(KERNEL_RULES)
        self.sysctl: dict[str, str] = dict(DEFAULT_SYSCTL)
        self.iptables = new_iptables()
        # permanent neighbour entries (``ip neigh add``): (device, address) -> MAC
        self.static_neigh: dict[tuple[str, int], str] = {}
        self.version = 0
        self._next_ifindex = 1
        self._cache_version = -1
        self._local_ips: frozenset[int] = _NO_IPS
        self._local_nets: tuple[tuple[int, int], ...] = ()  # prefixes of addresses on lo
        self._route_cache: dict = {}
        self._lpm_index: dict = {}  # table id -> prefix index (see _lpm_indexed)
        self._dst_only = True
        self._fingerprint: tuple | None = None
        self._fp_version = -1
        self.network: "Network | None" = None
        self.interfaces["lo"] = new_interface("lo", 1, LO_MAC, 65536, [LO_ADDRESS], None,
                                              True)
        self._next_ifindex = 2

    @classmethod
    def host(cls, name: str, ifname: str, *, mac: str, peer_ifindex: int, ip: int, plen: int,
             gateway: int) -> "Node":
        """A host with one interface, one address and a default route, set directly:
        what ``Node(name, "host")``, ``add_interface``, ``add_address`` and ``ip route add
        default`` leave (tests/routing/test_state.py). Hosts of the same ``ifname``,
        ``ip``, ``plen`` and ``gateway`` (all a fingerprint and a lookup read) recur across
        episodes: they share their routes and fingerprint, hence their lookups."""
        key = (ifname, ip, plen, gateway)
        proto = _HOSTS.get(key)
        routes = (proto[0] if proto is not None else
                  (Route(0, 0, "unicast", ifname, gateway),
                   Route(ip & _MASKS[plen], plen, "unicast", ifname, None, 0, "kernel", "link",
                         ip)))
        node = _new(cls)
        node.__dict__.update(
            name=name, kind="host",
            interfaces={"lo": new_interface("lo", 1, LO_MAC, 65536, [LO_ADDRESS], None, True),
                        ifname: new_interface(ifname, 2, mac, 1500, [Address(ip, plen)],
                                              peer_ifindex, False)},
            tables={MAIN: list(routes), DEFAULT_TABLE: []},
            rules=list(KERNEL_RULES), sysctl=dict(DEFAULT_SYSCTL), iptables=new_iptables(),
            static_neigh={}, version=0, _next_ifindex=3, _cache_version=-1,
            _local_ips=_NO_IPS, _local_nets=(), _route_cache={}, _lpm_index={},
            _dst_only=True, _fingerprint=None, _fp_version=-1, network=None)
        if proto is None:
            if len(_HOSTS) >= HOSTS_MAX:
                _HOSTS.pop(next(iter(_HOSTS)))
            proto = _HOSTS[key] = (routes, node.fingerprint())
        else:
            node._fingerprint, node._fp_version = proto[1], 0
        return node

    # ----------------------------------------------------------------- bookkeeping
    def touch(self) -> None:
        """Record a state change (invalidates caches here and in the network)."""
        self.version += 1
        net = self.network
        if net is not None:
            net.version += 1

    def _refresh(self) -> None:
        if self._cache_version != self.version:
            # an address stays local while its link is down (the kernel keeps the local
            # route), so other interfaces still answer for it
            ips = set()
            for itf in self.interfaces.values():
                for a in itf.addresses:
                    ips.add(a.ip)
            self._local_ips = frozenset(ips)
            # an address on a loopback device makes its whole prefix local (fib_add_ifaddr
            # adds the prefix route as RTN_LOCAL): 127.0.0.1/8, or 192.168.2.1/24 after
            # "ifconfig lo 192.168.2.1 netmask 255.255.255.0"
            self._local_nets = tuple((a.net, a.plen) for itf in self.interfaces.values()
                                     if itf.loopback and itf.up for a in itf.addresses)
            self._route_cache, self._lpm_index = lookup_caches(self)
            # with selector-free rules a lookup depends on the destination alone
            self._dst_only = all(r.src is None and r.dst is None and r.iif is None
                                 and r.oif is None and not r.invert for r in self.rules)
            self._cache_version = self.version

    def fingerprint(self) -> tuple:
        """Content signature of everything that affects forwarding (cached per version)."""
        if self._fp_version != self.version:
            self._fingerprint = (
                tuple(i.signature() for i in self.interfaces.values()),
                tuple((t, tuple(r.signature() for r in rs))
                      for t, rs in sorted(self.tables.items())),
                tuple(r.signature() for r in self.rules),
                tuple(sorted(self.sysctl.items())),
                self.iptables.signature(),
                tuple(sorted(self.static_neigh.items())),
            )
            self._fp_version = self.version
        return self._fingerprint

    # ------------------------------------------------------------------ properties
    @property
    def ip_forward(self) -> bool:
        return self.sysctl.get("net.ipv4.ip_forward", "0") != "0"

    @ip_forward.setter
    def ip_forward(self, on: bool) -> None:
        self.set_sysctl("net.ipv4.ip_forward", "1" if on else "0")

    def set_sysctl(self, key: str, value: str) -> None:
        if self.sysctl.get(key) != value:
            self.sysctl[key] = value
            if key == "net.ipv4.ip_forward":  # inet_forward_change: every device follows
                for k in [k for k in self.sysctl if k.endswith(".forwarding")
                          and k.startswith("net.ipv4.conf.")]:
                    del self.sysctl[k]
            self.touch()

    def forwards_on(self, ifname: str) -> bool:
        """``IN_DEV_FORWARD``: packets arriving on ``ifname`` are forwarded if its
        ``net.ipv4.conf.IF.forwarding`` is non-zero (unwritten: ``ip_forward``'s value)."""
        sysctl = self.sysctl
        v = sysctl.get("net.ipv4.conf." + ifname + ".forwarding")
        if v is None:
            return sysctl.get("net.ipv4.ip_forward", "0") != "0"  # ip_forward, inlined
        return v != "0"

    def local_ips(self) -> frozenset[int]:
        if self._cache_version != self.version:
            self._refresh()
        return self._local_ips

    def is_local(self, dst: int) -> bool:
        """Does table ``local`` deliver ``dst`` to this node?"""
        if self._cache_version != self.version:
            self._refresh()
        if dst in self._local_ips:
            return True
        for n, p in self._local_nets:
            m = _MASKS[p]
            if (dst & m) == (n & m):  # in_prefix, inlined
                return True
        return False

    def dst_only(self) -> bool:
        """Do route lookups here depend on the destination alone (no policy rule selects
        by source, destination, incoming or outgoing interface, and none is inverted)?"""
        if self._cache_version != self.version:
            self._refresh()
        return self._dst_only

    def iface(self, name: str) -> Interface | None:
        return self.interfaces.get(name)

    def table(self, tid: int, create: bool = False) -> list[Route]:
        t = self.tables.get(tid)
        if t is None:
            t = []
            if create:
                self.tables[tid] = t
        return t

    # -------------------------------------------------------------- interfaces
    def add_interface(self, name: str, *, mac: str, mtu: int = 1500, up: bool = True,
                      loopback: bool = False, alias: str | None = None,
                      peer_ifindex: int | None = None) -> Interface:
        itf = Interface(name=name, ifindex=self._next_ifindex, mac=mac, mtu=mtu, up=up,
                        loopback=loopback, alias=alias, peer_ifindex=peer_ifindex)
        self._next_ifindex += 1
        self.interfaces[name] = itf
        self.touch()
        return itf

    def set_link(self, name: str, *, up: bool | None = None, mtu: int | None = None,
                 promisc: bool | None = None, alias: str | None = None,
                 noarp: bool | None = None) -> bool:
        """Change link attributes like ``ip link set``. Returns True if anything changed."""
        itf = self.interfaces[name]
        changed = False
        if noarp is not None and itf.noarp != noarp:
            itf.noarp = noarp
            changed = True
            self._forget_neighbours(name)  # NETDEV_CHANGE of IFF_NOARP: neigh_changeaddr
        if mtu is not None and itf.mtu != mtu:
            itf.mtu = mtu
            changed = True
        if promisc is not None and itf.promisc != promisc:
            itf.promisc = promisc
            changed = True
        if alias is not None and itf.alias != (alias or None):
            itf.alias = alias or None
            changed = True
        if up is not None and itf.up != up:
            itf.up = up
            changed = True
            if up:
                for a in itf.addresses:
                    if not itf.is_secondary(a):
                        self._add_connected(itf, a)
            else:
                self._flush_dev_routes(name)
                self._forget_neighbours(name)
        if changed:
            self.touch()
        return changed

    def _forget_neighbours(self, ifname: str) -> None:
        net = self.network
        if net is not None:
            net.forget_neighbours(self.name, ifname)

    # --------------------------------------------------------------- addresses
    def find_address(self, ifname: str, ip: int, plen: int) -> Address | None:
        for a in self.interfaces[ifname].addresses:
            if a.ip == ip and a.plen == plen:
                return a
        return None

    def add_address(self, ifname: str, ip: int, plen: int) -> str | None:
        """``ip addr add``. Returns an error message (kernel wording) or None."""
        itf = self.interfaces[ifname]
        new = Address(ip, plen)
        for a in itf.addresses:
            if a.ip == ip and a.plen == plen:  # Linux 6.18 inet_rtm_newaddr's extack
                return "Error: ipv4: Address already assigned."
        itf.addresses.append(new)
        if itf.up and not itf.is_secondary(new):
            self._add_connected(itf, new)
        self.touch()
        return None

    def del_address(self, ifname: str, ip: int, plen: int | None) -> str | None:
        """``ip addr del``: a primary takes its secondaries with it (no promotion)."""
        itf = self.interfaces[ifname]
        victim = None
        for a in itf.addresses:
            if a.ip == ip and (plen is None or a.plen == plen):
                victim = a
                break
        if victim is None:  # Linux 6.18 inet_rtm_deladdr's extack
            return "Error: ipv4: Address not found."
        removed = [victim]
        if not itf.is_secondary(victim):
            removed += [a for a in itf.addresses if a is not victim and a.same_subnet(victim)]
        for a in removed:
            itf.addresses.remove(a)
        for a in removed:
            self._drop_address_routes(itf, a)
        if not itf.addresses and not itf.loopback:
            self._flush_dev_routes(ifname)
            self._forget_neighbours(ifname)
        self.touch()
        return None

    def flush_addresses(self, ifname: str) -> bool:
        itf = self.interfaces[ifname]
        if not itf.addresses:
            return False
        for a in list(itf.addresses):
            self._drop_address_routes(itf, a)
        itf.addresses.clear()
        if not itf.loopback:
            self._flush_dev_routes(ifname)
            self._forget_neighbours(ifname)
        self.touch()
        return True

    def _add_connected(self, itf: Interface, a: Address) -> None:
        """``fib_add_ifaddr``'s prefix route; none for a prefix of 0.0.0.0 (zeronet:
        ``10.1.2.3/1``, ``0.1.2.3/8``), as on Linux 6.18."""
        if a.plen == 32 or itf.loopback or a.net == 0:
            return
        self.tables[MAIN].append(Route(dst=a.net, plen=a.plen, dev=itf.name, proto="kernel",
                                       scope="link", src=a.ip, table=MAIN))
        self._sort_table(MAIN)

    def _drop_address_routes(self, itf: Interface, a: Address) -> None:
        still_local = any(x.ip == a.ip for i in self.interfaces.values() for x in i.addresses
                          if x is not a)
        for tid, routes in self.tables.items():
            keep = []
            for r in routes:
                if (r.proto == "kernel" and r.dev == itf.name and r.src == a.ip
                        and r.dst == a.net and r.plen == a.plen):
                    continue
                if r.src == a.ip and not still_local:
                    continue
                keep.append(r)
            routes[:] = keep

    def _flush_dev_routes(self, ifname: str) -> None:
        for routes in self.tables.values():
            routes[:] = [r for r in routes if r.dev != ifname]

    # ------------------------------------------------------------------ routes
    def _sort_table(self, tid: int) -> None:
        # kernel dump order: by destination, then prefix length, then metric (stable)
        self.tables[tid].sort(key=lambda r: (r.dst, r.plen, r.metric))

    def insert_route(self, r: Route) -> None:
        self.table(r.table, create=True).append(r)
        self._sort_table(r.table)
        self.touch()

    def remove_route(self, r: Route) -> None:
        self.tables[r.table].remove(r)
        self.touch()

    def replace_rules(self, rules: list[Rule]) -> None:
        self.rules = sorted(rules, key=lambda r: r.pref)
        self.touch()

    def add_rule(self, rule: Rule) -> None:
        # the kernel inserts after every rule whose pref is <= the new one
        idx = len(self.rules)
        for i, r in enumerate(self.rules):
            if r.pref > rule.pref:
                idx = i
                break
        self.rules.insert(idx, rule)
        self.touch()

    # ------------------------------------------------------------- route lookup
    def lookup(self, dst: int, src: int = 0, iif: str | None = None,
               oif: str | None = None) -> "Lookup":
        """Policy routing lookup (``ip route get``): rules in order, then each table."""
        if self._cache_version != self.version:
            self._refresh()
        key = dst if (self._dst_only and oif is None) else (dst, src, iif, oif)
        hit = self._route_cache.get(key)
        if hit is not None:
            return hit
        res = self._lookup(dst, src, iif, oif)
        self._route_cache[key] = res
        return res

    def _lookup(self, dst: int, src: int, iif: str | None, oif: str | None) -> "Lookup":
        any_rule = self._dst_only  # selector-free rules match every packet
        for rule in self.rules:
            if not any_rule and not rule.matches(src, dst, iif, oif):
                continue
            if rule.action != "table":
                return Lookup(rule.action, rule=rule)
            if rule.table == LOCAL:
                if self.is_local(dst):
                    return Lookup("local", dev="lo")
                continue
            routes = self.tables.get(rule.table, ())
            best = (self._lpm(routes, dst, oif) if oif is not None or len(routes) <= LPM_SCAN
                    else self._lpm_indexed(rule.table, routes, dst))
            if best is None or best.type == "throw":
                continue
            if best.type != "unicast":
                return Lookup(best.type, route=best)
            return Lookup("unicast", dev=best.dev, gateway=best.next_hop, route=best)
        return Lookup("unreachable")

    def _lpm_indexed(self, tid: int, routes, dst: int) -> Route | None:
        """:meth:`_lpm` without an ``oif``, through an index of the table by prefix length
        (longest first) and network, built once per version: the same route (longest prefix,
        then lowest metric, then first in table order)."""
        idx = self._lpm_index.get(tid)
        if idx is None:
            by_len: dict[int, dict[int, Route]] = {}
            for r in routes:
                best = by_len.setdefault(r.plen, {})
                cur = best.get(r.dst)
                if cur is None or r.metric < cur.metric:
                    best[r.dst] = r
            idx = self._lpm_index[tid] = [(mask_of(pl), by_len[pl])
                                          for pl in sorted(by_len, reverse=True)]
        for mask, nets in idx:
            r = nets.get(dst & mask)
            if r is not None:
                return r
        return None

    @staticmethod
    def _lpm(routes, dst: int, oif: str | None) -> Route | None:
        best = None
        masks = _MASKS
        for r in routes:
            if (dst & masks[r.plen]) != r.dst:
                continue
            if oif is not None and r.dev is not None and r.dev != oif:
                continue
            if best is None or r.plen > best.plen or (r.plen == best.plen and r.metric < best.metric):
                best = r
        return best

    def select_source(self, dev: str | None, toward: int) -> int | None:
        """``inet_select_addr``: an address on ``dev`` in ``toward``'s subnet, else the first
        primary on ``dev``, else the first global address anywhere on the node."""
        if dev is not None:
            itf = self.interfaces.get(dev)
            if itf is not None:
                addrs = itf.addresses
                if addrs:
                    for a in addrs:
                        if not (toward ^ a.ip) & _MASKS[a.plen]:  # in_prefix, inlined
                            return a.ip
                    if not itf.loopback:
                        return addrs[0].ip
        for itf in self.interfaces.values():
            if itf.loopback or not itf.up:
                continue
            for a in itf.addresses:
                return a.ip
        return None


# the network of nodes, re-exported: callers import every state name from this module
from netarena_gym.routing.state_network import Network  # noqa: E402,F401
