"""Upstream NetArena's route queries: the 15 compat categories with upstream's level labels,
and the import of upstream ``error_config.json`` files (or a run's results) as scenarios
(docs/spec: upstream-route.md section 2.1). Re-exported by
:mod:`netarena_gym.routing.generator`."""
from __future__ import annotations

import ipaddress
import itertools
import json
import re
from pathlib import Path

from netarena_gym.core.ipv4 import int_to_ip
from netarena_gym.core.scenario import Scenario, category_name
from netarena_gym.core.seeding import choice, rng_from_seed
from netarena_gym.routing.faults import TYPES, UPSTREAM_METHODS, Fault
from netarena_gym.routing.topology import Layout, TopologySpec

COMPAT_CATEGORIES: tuple[tuple[str, ...], ...] = tuple(
    [(t,) for t in TYPES] + list(itertools.combinations(TYPES, 2)))
# upstream's plot labels for the 15 categories
_UPSTREAM_L2 = {("disable_routing", "disable_interface"), ("disable_routing", "remove_ip"),
                ("disable_routing", "wrong_routing_table"),
                ("disable_interface", "drop_traffic_to_from_subnet"),
                ("remove_ip", "wrong_routing_table"),
                ("drop_traffic_to_from_subnet", "wrong_routing_table")}


def compat_category_level(types: tuple[str, ...]) -> int:
    if len(types) == 1:
        return 1
    return 2 if tuple(types) in _UPSTREAM_L2 else 3


# --------------------------------------------------------------- upstream import
# Field formats of upstream's ``get_detail`` (docs/spec: upstream-route.md section 2.1):
#   disable_routing   {"action": "Disable IP forwarding", "method": 1..4[, "subnet": "192.168.k.0/24"]}
#   disable_interface {"interface": "r0-ethK", "method": 1..3}
#   remove_ip         {"interface": "r0-ethK", "method": 1..4[, "wrong_mask": 8|16|30|31|32]}
#   drop_traffic_...  {"subnet": "192.168.k.0/24", "method": 1..4[, "delay_ms": 1000..5000]}
#   wrong_routing_... {"from": "192.168.f.0/24", "to": "192.168.t.0/24", "del_interface":
#                      "r0-ethF", "add_interface": "r0-ethT", "method": 1..4,
#                      "to_ip": "192.168.t.1"[, "metric": 5000..20000 (method 4 only)]}
# Interface names may carry the run prefix ``pNN_``; subnets may also be given as an index
# (our own older export) or as upstream's (router IP, host IP, network) tuple.
_PREFIX = re.compile(r"^p\d+_")
_UPSTREAM_MASKS = (8, 16, 30, 31, 32)


def _iface_name(v) -> str:
    if isinstance(v, int) or (isinstance(v, str) and v.isdigit()):
        return f"r0-eth{int(v)}"
    return _PREFIX.sub("", str(v))


def _subnet(v) -> str:
    """``192.168.k.0/24`` from an index, a prefix, an address or upstream's subnet tuple."""
    if isinstance(v, (list, tuple)):
        return _subnet(v[-1])
    if isinstance(v, int) or (isinstance(v, str) and v.isdigit()):
        return f"192.168.{int(v)}.0/24"
    s = str(v).strip()
    try:
        return str(ipaddress.ip_interface(s if "/" in s else f"{s}/24").network)
    except ValueError:
        raise ValueError(f"not a subnet: {v!r}") from None


def _third_octet(prefix: str) -> int:
    return int(prefix.split(".")[2])


def _subnet_iface(prefix: str, n_sub: int, fallback: int = 1) -> str:
    """The router interface of upstream's subnet ``192.168.k.0/24``: ``r0-eth{k}``."""
    k = _third_octet(prefix)
    return f"r0-eth{k if 1 <= k <= n_sub else fallback}"


def _iface_index(itf: str) -> int:
    try:
        return int(itf.rsplit("eth", 1)[1])
    except (IndexError, ValueError):
        raise ValueError(f"not a router interface: {itf!r}") from None


def _upstream_fault(t: str, d: dict, lay: Layout, rng) -> Fault:
    """One upstream ``errordetail`` as the fault upstream's injector applied. Values that
    upstream drew at injection time (or when a field is absent) are drawn from ``rng``."""
    if t not in UPSTREAM_METHODS:
        raise ValueError(f"unknown upstream error type {t!r}; known: {TYPES}")
    if not isinstance(d, dict):
        raise ValueError(f"{t}: errordetail must be an object, got {type(d).__name__}")
    m = int(d["method"]) if "method" in d else choice(rng, UPSTREAM_METHODS[t])
    if m not in UPSTREAM_METHODS[t]:
        raise ValueError(f"{t}: upstream's injector has no method {m} "
                         f"(it knows {UPSTREAM_METHODS[t]})")
    n_sub = len(lay.subnets)
    if t == "disable_routing":
        p = {}
        if m == 4:
            p["subnet"] = (_subnet(d["subnet"]) if "subnet" in d
                           else f"{int_to_ip(choice(rng, lay.subnets).net)}/24")
    elif t == "disable_interface":
        p = {"interface": _iface_name(d["interface"])}
    elif t == "remove_ip":
        itf = _iface_name(d["interface"])
        p = {"interface": itf}
        k = _iface_index(itf)
        own = f"192.168.{k}.1" if 1 <= k <= n_sub else "192.168.1.1"  # upstream's fallback
        if m == 2:  # upstream drew this at injection time; we draw it once, here
            p["address"] = f"10.{int(rng.integers(1, 255))}.{int(rng.integers(1, 255))}.1/24"
        elif m == 3:
            mask = int(d["wrong_mask"]) if "wrong_mask" in d else choice(rng, _UPSTREAM_MASKS)
            p["address"] = f"{own}/{mask}"
        elif m == 4:
            others = [s for s in lay.subnets if int_to_ip(s.gateway) != own]
            p["address"] = (f"{int_to_ip(choice(rng, others).gateway)}/24" if others
                            else "10.0.0.1/24")
    elif t == "drop_traffic_to_from_subnet":
        sub = _subnet(d["subnet"])
        p = {"subnet": sub}
        if m == 4:
            k = _third_octet(sub)
            delay = int(d["delay_ms"]) if "delay_ms" in d else int(rng.integers(1000, 5001))
            p.update(interface=f"r0-eth{k if 1 <= k <= n_sub else 1}", delay_ms=delay)
    else:  # wrong_routing_table
        src = _subnet(d["from"])
        to = _subnet(d.get("to", "192.168.1.0/24"))
        # upstream stores both interfaces with every record (r0-eth{f}, r0-eth{t} of the
        # from and to subnets); one a hand-written record leaves out is the subnet's own,
        # not a fixed r0-eth1 whose route to `from` is not there to delete (a fault that
        # breaks nothing)
        p = {"subnet": src, "dev": _iface_name(d.get("del_interface", _subnet_iface(src, n_sub))),
             "via": None,
             "wrong_dev": _iface_name(d.get("add_interface", _subnet_iface(to, n_sub, 2))),
             # upstream's fallback is the network address of "to", not its router address
             "wrong_ip": str(d.get("to_ip", to.split("/")[0]))}
        if m == 3:  # upstream stores "metric" only with method 4, so method 3 gets 10000
            p["metric"] = int(d.get("metric", 10000))
    return Fault(t, m, "r0", p)


def _query_fields(q: dict, i: int) -> tuple[list, list]:
    """``errortype``/``errordetail`` (error_config.json) or ``error_type``/``error_detail``
    (the results of a run), single or paired, as two equal-length lists."""
    types = q.get("errortype", q.get("error_type"))
    details = q.get("errordetail", q.get("error_detail"))
    if types is None or details is None:
        raise ValueError(f"query {i}: no errortype/errordetail")
    if isinstance(types, str):
        types = [types]
        details = [details] if isinstance(details, dict) else list(details)
    types, details = list(types), list(details)
    if len(types) != len(details):
        raise ValueError(f"query {i}: errortype and errordetail lengths differ")
    if "errornumber" in q and int(q["errornumber"]) != len(types):
        raise ValueError(f"query {i}: errornumber {q['errornumber']} but {len(types)} errors "
                         "(upstream skips such a query)")
    return types, details


def import_upstream(source: str | Path | dict | list) -> list[Scenario]:
    """Convert upstream queries into scenarios: an ``error_config.json`` (``{"queries":
    [...]}`` with ``errortype``/``errordetail``/``num_switches``/``num_hosts_per_subnet``),
    a list of such queries, or a run's ``{"results": [...]}`` whose entries carry
    ``error_type``/``error_detail`` (entries without them, like the final averages, are
    skipped). A missing topology is upstream's default (2 switches, 1 host each).
    Parameters upstream drew at injection time are drawn here from a per-query seed (the
    query's index), so an import is reproducible."""
    if isinstance(source, (str, Path)):
        data = json.loads(Path(source).read_text())
    else:
        data = source
    if isinstance(data, dict):
        if "queries" in data:
            queries = data["queries"]
        elif "results" in data:
            queries = [r for r in data["results"]
                       if isinstance(r, dict) and ("error_type" in r or "errortype" in r)]
        else:
            raise ValueError("expected {'queries': [...]} or {'results': [...]}")
    else:
        queries = data
    out = []
    for i, q in enumerate(queries):
        types, details = _query_fields(q, i)
        spec = TopologySpec.uniform(int(q.get("num_switches", 2)), int(q.get("num_hosts_per_subnet", 1)))
        lay = Layout(spec)
        rng = rng_from_seed(i)
        try:
            faults = [_upstream_fault(t, d, lay, rng) for t, d in zip(types, details)]
        except (KeyError, ValueError, TypeError) as e:
            what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
            raise ValueError(f"query {i}: {what}") from None
        cat = tuple(types)
        out.append(Scenario(task="routing", level="compat", params={"topology": spec.to_dict()},
                            faults=tuple(f.to_dict() for f in faults), seed=None,
                            meta={"category": category_name(cat), "source": "upstream",
                                  "query_index": i,
                                  "upstream_level": compat_category_level(cat) if len(cat) <= 2 else 3,
                                  "labels": [f.label for f in faults]}))
    return out


__all__ = ["COMPAT_CATEGORIES", "compat_category_level", "import_upstream"]
