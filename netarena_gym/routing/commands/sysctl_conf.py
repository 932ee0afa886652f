"""The per-device IPv4 sysctls ``net.ipv4.conf.{all,default,DEV}.*`` (Linux 6.x
``net/ipv4/devinet.c``), as ``sysctl`` and ``/proc/sys/net/ipv4/conf/`` show them.

Every interface of a node (``lo`` included), ``all`` and ``default`` have the kernel's 33
keys, with the values a Mininet node shows on Debian 12 (a new namespace inherits
``init_net``'s ``all`` and ``default``: :data:`DEVICE_DEFAULTS`, with ``accept_source_route``
0 under ``all`` and ``disable_policy``/``disable_xfrm`` 1 on ``lo``). A node stores only the
values written since; every value is an int written with ``proc_dointvec`` (no range).

``forwarding`` is modelled: ``all.forwarding`` is ``net.ipv4.ip_forward``, and writing it
sets every device's and ``default``'s (``inet_forward_change``); a device's own value then
decides whether packets that arrive on it are forwarded (``IN_DEV_FORWARD`` of the input
device, :meth:`netarena_gym.routing.state.Node.forwards_on`). ``mc_forwarding`` is read-only
(``sysctl -w`` says ``Invalid argument`` and exits 0, as procps 4.0.2 does; a shell
redirect is ``Permission denied``).

Left out: the effects of :data:`UNMODELLED` keys (reverse-path filtering, ARP
ignore/announce/filter, proxy ARP, ...). A write that would change one of them is refused
as not simulated; writing the value it already has succeeds. The other keys (redirect,
IGMP, logging and tagging knobs) change nothing the simulator models and are stored.
"""
from __future__ import annotations

__all__ = ["CONF_KEYS", "DEVICE_DEFAULTS", "READ_ONLY", "UNMODELLED", "conf_keys",
           "conf_value", "split_conf_key"]

PREFIX = "net.ipv4.conf."
DEVICE_DEFAULTS = {
    "accept_local": "0", "accept_redirects": "1", "accept_source_route": "1",
    "arp_accept": "0", "arp_announce": "0", "arp_evict_nocarrier": "1", "arp_filter": "0",
    "arp_ignore": "0", "arp_notify": "0", "bc_forwarding": "0", "bootp_relay": "0",
    "disable_policy": "0", "disable_xfrm": "0", "drop_gratuitous_arp": "0",
    "drop_unicast_in_l2_multicast": "0", "force_igmp_version": "0", "forwarding": "0",
    "igmpv2_unsolicited_report_interval": "10000",
    "igmpv3_unsolicited_report_interval": "1000", "ignore_routes_with_linkdown": "0",
    "log_martians": "0", "mc_forwarding": "0", "medium_id": "0", "promote_secondaries": "0",
    "proxy_arp": "0", "proxy_arp_pvlan": "0", "route_localnet": "0", "rp_filter": "0",
    "secure_redirects": "1", "send_redirects": "1", "shared_media": "1",
    "src_valid_mark": "0", "tag": "0",
}
CONF_KEYS = tuple(DEVICE_DEFAULTS)
_OVERRIDES = {"all": {"accept_source_route": "0"},
              "lo": {"disable_policy": "1", "disable_xfrm": "1"}}
READ_ONLY = frozenset({"mc_forwarding"})
UNMODELLED = frozenset({
    "rp_filter", "arp_ignore", "arp_announce", "arp_filter", "proxy_arp", "proxy_arp_pvlan",
    "accept_local", "route_localnet", "ignore_routes_with_linkdown", "promote_secondaries",
    "arp_evict_nocarrier", "arp_accept"})


def split_conf_key(node, key: str) -> tuple[str, str] | None:
    """(device, name) of a ``net.ipv4.conf.DEV.NAME`` key the node has, else None."""
    if not key.startswith(PREFIX):
        return None
    dev, dot, name = key[len(PREFIX):].rpartition(".")
    if not dot or name not in DEVICE_DEFAULTS:
        return None
    if dev not in ("all", "default") and dev not in node.interfaces:
        return None
    return dev, name


def conf_value(node, dev: str, name: str) -> str:
    """The value the node shows for ``net.ipv4.conf.DEV.NAME``."""
    v = node.sysctl.get(f"{PREFIX}{dev}.{name}")
    if v is not None:
        return v
    if name == "forwarding":  # inet_forward_change set every device with ip_forward
        return node.sysctl.get("net.ipv4.ip_forward", "0")
    return _OVERRIDES.get(dev, {}).get(name, DEVICE_DEFAULTS[name])


def conf_keys(node) -> list[str]:
    """Every per-device key of the node (unsorted)."""
    devs = ("all", "default", *node.interfaces)
    return [f"{PREFIX}{d}.{k}" for d in devs for k in CONF_KEYS]


def reset_command(devs) -> str:
    """A ``sysctl`` line that writes every writable per-device key of ``all``, ``default``
    and ``devs`` back to its stock value, ``forwarding`` excepted (a real backend's baseline;
    toggling ``ip_forward`` resets every device's ``forwarding``)."""
    pairs = [f"{PREFIX}{d}.{k}={_OVERRIDES.get(d, {}).get(k, v)}"
             for d in ("all", "default", *devs) for k, v in DEVICE_DEFAULTS.items()
             if k not in READ_ONLY and k != "forwarding"]
    return "sysctl -q -w " + " ".join(pairs)
