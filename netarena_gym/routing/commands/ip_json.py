"""``ip -json`` (iproute2 6.1): the JSON that ``ip -j`` prints for ``address``, ``link``,
``route``, ``rule`` and ``neighbour`` listings (``-br`` too), on one line, keys in
iproute2's order.

iproute2 prints text and JSON from the same ``print_*`` calls, field by field; the simulator
does the same in two steps: the text printers make the records and this module reads them
back field by field into JSON (an interface record's header, ``link/`` line, ``alias`` and
``inet`` lines; a route's type, destination and ``key value`` fields with its flags gathered
into ``flags``; a rule's selectors and action; a neighbour's address, device, ``lladdr`` and
state). Value types are iproute2's: numbers for ``ifindex``, ``mtu``, ``txqlen``,
``prefixlen``, ``metric``, ``priority``; strings for tables.

Left out (refused as not simulated): ``-j`` with ``-s``, ``-d`` or ``-o``, ``-pretty``, and
for ``ip route get``. IPv6 entries are absent, as everywhere in the simulator.
"""
from __future__ import annotations

import json
import re

__all__ = ["addr_json", "link_json", "neigh_json", "route_json", "rule_json"]

_FOREVER = 4294967295
_HEAD = re.compile(r"^(\d+): ([^:@]+)(?:@([^:]+))?: <([^>]*)> mtu (\d+) qdisc (\S+) state (\S+) "
                   r"(?:mode (\S+) )?group (\S+) qlen (\d+)(?: link-netnsid (\d+))?$")
_LINKLINE = re.compile(r"^    link/(\S+) (\S+) brd (\S+)(?: link-netnsid (\d+))?$")
_INET = re.compile(r"^    inet (\S+)/(\d+) (?:brd (\S+) )?scope (\S+) (secondary )?(.*)$")


def _dump(items: list) -> str:
    return json.dumps(items, separators=(",", ":")) + "\n"


def _link_of(peer: str | None) -> dict:
    if peer is None:
        return {}
    if peer.startswith("if") and peer[2:].isdigit():
        return {"link_index": int(peer[2:])}
    return {"link": peer}


def _records(text: str, with_addrs: bool, link_mode: bool) -> list[dict]:
    out: list[dict] = []
    cur: dict | None = None
    for line in text.splitlines():
        m = _HEAD.match(line)
        if m is not None:
            idx, name, peer, flags, mtu, qdisc, state, mode, group, qlen, nsid = m.groups()
            cur = {"ifindex": int(idx), **_link_of(peer), "ifname": name,
                   "flags": flags.split(",") if flags else [], "mtu": int(mtu),
                   "qdisc": qdisc, "operstate": state}
            if link_mode:
                cur["linkmode"] = mode or "DEFAULT"
            cur.update(group=group, txqlen=int(qlen))
            if nsid is not None:
                cur["link_netnsid"] = int(nsid)
            if with_addrs:
                cur["addr_info"] = []
            out.append(cur)
            continue
        if cur is None:
            continue
        m = _LINKLINE.match(line)
        if m is not None:
            addr_info = cur.pop("addr_info", None)
            cur.update(link_type=m[1], address=m[2], broadcast=m[3])
            if m[4] is not None:
                cur["link_netnsid"] = int(m[4])
            if addr_info is not None:
                cur["addr_info"] = addr_info
            continue
        if line.startswith("    alias "):
            cur["ifalias"] = line[len("    alias "):]
            continue
        m = _INET.match(line)
        if m is not None:
            a = {"family": "inet", "local": m[1], "prefixlen": int(m[2])}
            if m[3] is not None:
                a["broadcast"] = m[3]
            a["scope"] = m[4]
            if m[5]:
                a["secondary"] = True
            a.update(label=m[6].strip(), valid_life_time=_FOREVER, preferred_life_time=_FOREVER)
            cur["addr_info"].append(a)
    return out


def _brief(text: str, addrs: bool) -> list[dict]:
    out = []
    for line in text.splitlines():
        name, state, rest = line[:16].rstrip(), line[17:31].rstrip(), line[32:].split()
        name, _, peer = name.partition("@")
        item = {**_link_of(peer or None), "ifname": name, "operstate": state}
        if addrs:
            item["addr_info"] = [{"local": a.split("/")[0], "prefixlen": int(a.split("/")[1])}
                                 for a in rest]
        else:
            item["address"] = rest[0] if rest else ""
            item["flags"] = rest[1].strip("<>").split(",") if len(rest) > 1 and rest[1] != "<>" else []
        out.append(item)
    return out


def addr_json(text: str, brief: bool) -> str:
    return _dump(_brief(text, True) if brief else _records(text, True, False))


def link_json(text: str, brief: bool) -> str:
    return _dump(_brief(text, False) if brief else _records(text, False, True))


_ROUTE_TYPES = ("unicast", "local", "broadcast", "multicast", "blackhole", "prohibit",
                "unreachable", "throw", "nat", "anycast")
_ROUTE_KEYS = {"via": "gateway", "dev": "dev", "table": "table", "proto": "protocol",
               "scope": "scope", "src": "prefsrc", "metric": "metric", "mtu": "mtu"}


def route_json(text: str) -> str:
    out = []
    for line in text.splitlines():
        tok = line.split()
        if not tok:
            continue
        r: dict = {}
        if tok[0] in _ROUTE_TYPES:
            r["type"] = tok.pop(0)
        r["dst"] = tok.pop(0)
        flags = []
        while tok:
            t = tok.pop(0)
            key = _ROUTE_KEYS.get(t)
            if key is not None and tok:
                v = tok.pop(0)
                r[key] = int(v) if key in ("metric", "mtu") else v
            else:
                flags.append(t)
        r["flags"] = flags
        out.append(r)
    return _dump(out)


def _sel(r: dict, key: str, value: str) -> None:
    if value == "all":
        r[key] = "all"
        return
    addr, _, plen = value.partition("/")
    r[key] = addr
    if plen:
        r[key + "len"] = int(plen)


def rule_json(text: str) -> str:
    out = []
    for line in text.splitlines():
        pref, _, rest = line.partition(":")
        tok = rest.split()
        r: dict = {"priority": int(pref)}
        if tok and tok[0] == "not":
            r["not"] = None
            tok.pop(0)
        while tok:
            t = tok.pop(0)
            if t == "from" and tok:
                _sel(r, "src", tok.pop(0))
            elif t == "to" and tok:
                _sel(r, "dst", tok.pop(0))
            elif t in ("iif", "oif") and tok:
                r[t] = tok.pop(0)
            elif t == "lookup" and tok:
                r["table"] = tok.pop(0)
            else:
                r["action"] = t
        out.append(r)
    return _dump(out)


def neigh_json(text: str) -> str:
    out = []
    for line in text.splitlines():
        tok = line.split()
        if not tok:
            continue
        e: dict = {"dst": tok.pop(0)}
        while len(tok) > 1:
            key = tok.pop(0)
            e[key] = tok.pop(0)
        e["state"] = tok
        out.append(e)
    return _dump(out)
