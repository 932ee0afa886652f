"""``tc qdisc`` (root qdiscs only), as iproute2 6.1 prints it against a Linux 6.1 kernel.

Supported kinds: ``netem`` (limit, delay [jitter [corr]], loss [random] P [corr], corrupt,
duplicate), ``tbf``, ``pfifo``, ``bfifo``, ``pfifo_fast``, ``fq_codel`` and ``noqueue``. Values
go through the same integer conversions as tc and the kernel (psched ticks, rate tables), so
``tc qdisc show`` prints what the real tool prints (``delay 2s``, ``loss 50%``,
``rate 1Mbit burst 4Kb lat 400ms``). The add/replace/change/del decisions follow the kernel's
``tc_modify_qdisc``/``tc_get_qdisc`` of Linux 6.1 (``Exclusivity flag on, cannot modify.``
for an ``add`` over any non-default root; newer kernels, e.g. 6.18, graft a different kind
instead and say ``Invalid qdisc name: must match existing qdisc``).

Capability switch: a backend without the netem module sets ``ctx.capabilities`` to a collection
of supported optional features that lacks ``"netem"`` (e.g. ``frozenset()``); ``tc qdisc add ...
netem`` then fails with ``Error: Specified qdisc kind is unknown.`` like a kernel without
``sch_netem``. ``None`` (or no attribute, the simulator default) means everything is supported.

Simulator limits: one root qdisc per interface (no classes, ``parent``/``ingress`` qdiscs are
refused as the kernel refuses an unknown parent or kind); netem correlations, ``rate``,
``reorder``, ``slot`` and ``distribution`` are not stored (correlations are accepted and not
shown; the others are refused as unknown parameters). Handles are allocated per node from
``8001:`` upward; the kernel's counter is machine-wide, so real handles depend on history and a
differential comparison must treat ``8xxx:`` handles loosely. ``refcnt`` of a non-default root
is ``1 + TX queues`` on Linux (veth gets one queue per CPU); :data:`ROOT_REFCNT` assumes one.

The family: this module holds the command, ``tc qdisc show`` and the kernel's decisions;
option parsing per kind is in :mod:`~netarena_gym.routing.commands.tc_parse`, and the number
conversions and round trips behind what is printed in
:mod:`~netarena_gym.routing.commands.tc_units`.
"""
from __future__ import annotations

import re

from netarena_gym.shell.parser import ERROR, INVALID, CommandResult
from netarena_gym.routing.commands import CommandContext, register
from netarena_gym.routing.commands.tc_parse import (
    Args, TcExit, has_opts, matches, parse_kind)
from netarena_gym.routing.commands.tc_units import (
    U32, sprint_percent, sprint_rate, sprint_size, sprint_time, tbf_view, tick2time, time2tick,
    us_of_ms)
from netarena_gym.routing.state import Interface, Qdisc

__all__ = ["NETEM", "ROOT_REFCNT", "format_qdisc", "netem_supported", "tc_cmd"]

NETEM = "netem"
ROOT_REFCNT = 2
_SIM_KINDS = ("netem", "tbf", "pfifo", "bfifo", "pfifo_fast", "fq_codel", "noqueue")
_QDISC_USAGE = (
    "Usage: tc qdisc [ add | del | replace | change | show ] dev STRING\n"
    "       [ handle QHANDLE ] [ root | ingress | clsact | parent CLASSID ]\n"
    "       [ estimator INTERVAL TIME_CONSTANT ]\n"
    "       [ stab [ help | STAB_OPTIONS] ]\n"
    "       [ ingress_block BLOCK_INDEX ] [ egress_block BLOCK_INDEX ]\n"
    "       [ [ QDISC_KIND ] [ help | OPTIONS ] ]\n\n"
    "       tc qdisc { show | list } [ dev STRING ] [ QDISC_ID ] [ invisible ]\n"
    "Where:\nQDISC_KIND := { [p|b]fifo | tbf | prio | cbq | red | etc. }\n"
    "OPTIONS := ... try tc qdisc add <desired QDISC_KIND> help\n"
    "STAB_OPTIONS := ... try tc qdisc add stab help\n"
    "QDISC_ID := { root | ingress | handle QHANDLE | parent CLASSID }\n")
_TC_USAGE = (
    "Usage:\ttc [ OPTIONS ] OBJECT { COMMAND | help }\n\ttc [-force] -batch filename\n"
    "where  OBJECT := { qdisc | class | filter | chain |\n"
    "\t\t    action | monitor | exec }\n"
    "       OPTIONS := { -V[ersion] | -s[tatistics] | -d[etails] | -r[aw] |\n"
    "\t\t    -o[neline] | -j[son] | -p[retty] | -c[olor]\n"
    "\t\t    -b[atch] [filename] | -n[etns] name | -N[umeric] |\n"
    "\t\t     -nm | -nam[es] | { -cf | -conf } path\n"
    "\t\t     -br[ief] }\n")


def _kernel(msg: str) -> TcExit:
    return TcExit(f"Error: {msg}{'' if msg.endswith('.') else '.'}\n", 2, ERROR)


def netem_supported(ctx: CommandContext) -> bool:
    caps = getattr(ctx, "capabilities", None)
    return caps is None or NETEM in caps


# -------------------------------------------------------------------------- printing
def _opts(q: Qdisc, itf: Interface, details: bool) -> str:
    k = q.kind
    if k == "pfifo":
        return f"limit {q.limit}p"
    if k == "bfifo":
        return f"limit {sprint_size(q.limit)}"
    if k == "pfifo_fast":
        return "bands 3 priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1"
    if k == "fq_codel":
        return (f"limit {q.limit}p flows 1024 quantum {itf.mtu + 14} target 5ms interval 100ms "
                "memory_limit 32Mb ecn drop_batch 64 ")
    if k == "tbf":
        rate, burst, lat = tbf_view(q)
        s = f"rate {sprint_rate(rate)} burst {sprint_size(burst)}"
        s += "/1 mpu 0b " if details else " "
        s += (f"lat {sprint_time(int(lat) & U32)} " if lat >= 0
              else f"limit {sprint_size(q.limit)} ")
        return s + ("linklayer ethernet " if details else "")
    if k == "netem":
        s = f"limit {q.limit}"
        if q.delay_ms:
            s += f" delay {sprint_time(tick2time(time2tick(us_of_ms(q.delay_ms))))}"
            if q.jitter_ms:
                s += f"  {sprint_time(tick2time(time2tick(us_of_ms(q.jitter_ms))))}"
        for name, pct in (("loss", q.loss_pct), ("duplicate", q.duplicate_pct),
                          ("corrupt", q.corrupt_pct)):
            if round(pct / 100 * U32):
                s += f" {name} {sprint_percent(pct)}"
        return s
    return ""


def format_qdisc(itf: Interface, with_dev: bool = True, stats: bool = False,
                 details: bool = False) -> str:
    """One ``tc qdisc show`` entry (with ``-s`` statistics lines when asked)."""
    q = itf.qdisc
    dev = f"dev {itf.name} " if with_dev else ""
    if q is None:
        line = f"qdisc noqueue 0: {dev}root refcnt 2 \n"
    else:
        opts = _opts(q, itf, details)
        line = f"qdisc {q.kind} {q.handle} {dev}root refcnt {ROOT_REFCNT} {opts}\n"
    if stats:
        line += " Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n"
        line += " backlog 0b 0p requeues 0\n"
        if q is not None and q.kind == "fq_codel":
            line += ("  maxpacket 0 drop_overlimit 0 new_flow_count 0 ecn_mark 0\n"
                     "  new_flows_len 0 old_flows_len 0\n")
    return line


# ---------------------------------------------------------------------- kernel side
def _hnum(handle: str) -> int:
    return int(handle.rstrip(":"), 16)


def _parse_handle(text: str) -> int:
    if text == "none":
        return 0
    m = re.match(r"[0-9a-fA-F]+", text)
    if not m or int(m.group(), 16) >= 1 << 16 or text[m.end():m.end() + 1] not in ("", ":"):
        raise TcExit(f'Error: argument "{text}" is wrong: invalid qdisc ID\n', 255)
    return int(m.group(), 16)


def _auto_handle(ctx: CommandContext, itf: Interface) -> str:
    """The kernel's ``qdisc_alloc_handle``: next free ``8001:..ffff:`` (a per-node counter)."""
    node = ctx.node
    n = getattr(node, "_tc_autohandle", 0x8000)
    while True:
        n = n + 1 if n < 0xFFFF else 0x8001
        if itf.qdisc is None or _hnum(itf.qdisc.handle) != n:
            break
    node._tc_autohandle = n
    return f"{n:x}:"


def _kernel_knows(ctx: CommandContext, kind: str | None) -> bool:
    return kind in _SIM_KINDS and (kind != NETEM or netem_supported(ctx))


def _modify(ctx: CommandContext, itf: Interface, mode: str, req: dict) -> None:
    create, excl = mode in ("add", "replace"), mode == "add"
    replace = mode in ("replace", "link")
    handle, kind, new = req["handle"], req["kind"], req["qdisc"]
    q = itf.qdisc
    if req["parent"] is None:
        if not handle:
            raise _kernel("Handle cannot be zero")
        if q is None or _hnum(q.handle) != handle:
            raise _kernel("Specified qdisc not found")
    elif req["parent"] != "root":
        raise _kernel("Failed to find specified qdisc")
    elif q is None or not handle or _hnum(q.handle) != handle:
        if handle and q is not None and not replace:
            raise _kernel("NLM_F_REPLACE needed to override")
        if handle or q is None or (create and replace and (excl or kind != q.kind)):
            if not create:
                raise _kernel("Qdisc not found. To create specify NLM_F_CREATE flag.")
            if not _kernel_knows(ctx, kind) or new is None:
                raise _kernel("Specified qdisc kind is unknown")
            new.handle = f"{handle:x}:" if handle else _auto_handle(ctx, itf)
            itf.qdisc = new
            ctx.node.touch()
            return
    if excl:
        raise _kernel("Exclusivity flag on, cannot modify")
    if kind is not None and kind != q.kind:
        raise _kernel("Invalid qdisc name")
    if new is not None and req["has_opts"] and new.signature()[2:] != q.signature()[2:]:
        new.handle = q.handle
        itf.qdisc = new
        ctx.node.touch()


def _delete(ctx: CommandContext, itf: Interface, req: dict) -> None:
    q, handle, kind = itf.qdisc, req["handle"], req["kind"]
    if req["parent"] is None:
        if not handle or q is None or _hnum(q.handle) != handle:
            raise _kernel("Failed to find qdisc with specified handle")
        if kind is not None and kind != q.kind:
            raise _kernel("Invalid qdisc name")
        raise _kernel("Classid cannot be zero")
    if req["parent"] != "root":
        raise _kernel("Failed to find qdisc with specified classid")
    if handle and (_hnum(q.handle) if q else 0) != handle:
        raise _kernel("Invalid handle")
    if kind is not None and kind != (q.kind if q else "noqueue"):
        raise _kernel("Invalid qdisc name")
    if q is None:
        raise _kernel("Cannot delete qdisc with handle of zero")
    itf.qdisc = None
    ctx.node.touch()


# ------------------------------------------------------------------------- commands
def _parse_modify(words: list[str]) -> dict:
    req = {"dev": None, "handle": 0, "parent": None, "kind": None, "opts": []}
    a = Args(words)
    while a.i < len(words):
        w = words[a.i]
        if w in ("dev", "handle"):
            v = a.next()
            if req[w]:
                raise TcExit(f'Error: duplicate "{w}": "{v}" is the second value.\n', 255)
            req[w] = v if w == "dev" else _parse_handle(v)
        elif w in ("root", "parent"):
            v = a.next() if w == "parent" else "root"
            if req["parent"] is not None:
                raise TcExit('Error: "root" is duplicate parent ID\n' if w == "root" else
                             f'Error: duplicate "parent": "{v}" is the second value.\n', 255)
            req["parent"] = v
        elif w in ("ingress", "clsact"):
            req["parent"], req["kind"] = w, w
            req["opts"] = words[a.i + 1:]
            break
        elif matches(w, "help"):
            raise TcExit(_QDISC_USAGE, 0)
        else:
            req["kind"], req["opts"] = w, words[a.i + 1:]
            break
        a.i += 1
    return req


def _qdisc_modify(ctx: CommandContext, mode: str, words: list[str]) -> CommandResult:
    req = _parse_modify(words)
    itf = ctx.node.interfaces.get(req["dev"] or "")
    probe = itf or Interface(name="", ifindex=0, mac="")
    req["qdisc"] = parse_kind(req["kind"], req["opts"], probe)
    req["has_opts"] = has_opts(req["kind"], req["opts"])
    if req["dev"] is None:
        return CommandResult("RTNETLINK answers: No such device\n", 2, ERROR)
    if itf is None:
        return CommandResult(f'Cannot find device "{req["dev"]}"\n', 1, ERROR)
    if mode == "delete":
        _delete(ctx, itf, req)
    else:
        _modify(ctx, itf, mode, req)
    return CommandResult("")


def _qdisc_show(ctx: CommandContext, words: list[str], stats: bool,
                details: bool) -> CommandResult:
    dev, a = None, Args(words)
    while a.i < len(words):
        w = words[a.i]
        if w == "dev":
            dev = a.next()
        elif w in ("handle", "parent"):
            a.next()
        elif matches(w, "help"):
            raise TcExit(_QDISC_USAGE, 0)
        elif w not in ("root", "invisible", "ingress", "clsact"):
            raise TcExit(f'What is "{w}"? Try "tc qdisc help".\n', 255)
        a.i += 1
    if "ingress" in words or "clsact" in words:
        return CommandResult("")
    itfs = sorted(ctx.node.interfaces.values(), key=lambda i: i.ifindex)
    if dev is not None:
        itfs = [i for i in itfs if i.name == dev]
        if not itfs:
            return CommandResult(f'Cannot find device "{dev}"\n', 1, ERROR)
    return CommandResult("".join(format_qdisc(i, dev is None, stats, details) for i in itfs))


def _class_show(ctx: CommandContext, words: list[str], stats: bool) -> CommandResult:
    """Only tbf roots have a (built-in) class; ``tc class show`` needs ``dev``."""
    dev = words[words.index("dev") + 1] if "dev" in words[:-1] else None
    if dev is None:
        return CommandResult("")
    itf = ctx.node.interfaces.get(dev)
    if itf is None:
        return CommandResult(f'Cannot find device "{dev}"\n', 1, ERROR)
    q = itf.qdisc
    if q is None or q.kind != "tbf":
        return CommandResult("")
    line = f"class tbf {q.handle[:-1]}:1 parent {q.handle} \n"
    return CommandResult(line + ("\n" if stats else ""))


def _do_qdisc(ctx: CommandContext, words: list[str], stats: bool, details: bool) -> CommandResult:
    if not words:
        return _qdisc_show(ctx, [], stats, details)
    sub, rest = words[0], words[1:]
    if matches(sub, "add"):
        return _qdisc_modify(ctx, "add", rest)
    if matches(sub, "change"):
        return _qdisc_modify(ctx, "change", rest)
    if sub in ("replace", "link"):
        return _qdisc_modify(ctx, sub, rest)
    if matches(sub, "delete"):
        return _qdisc_modify(ctx, "delete", rest)
    if matches(sub, "list") or matches(sub, "show") or matches(sub, "lst"):
        return _qdisc_show(ctx, rest, stats, details)
    if matches(sub, "help"):
        return CommandResult(_QDISC_USAGE, 0, INVALID)
    return CommandResult(f'Command "{sub}" is unknown, try "tc qdisc help".\n', 255, INVALID)


@register("tc")
def tc_cmd(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    stats = details = False
    args = argv[1:]
    try:
        while args and args[0].startswith("-") and len(args[0]) > 1:
            opt = args.pop(0)
            if matches(opt, "-stats") or matches(opt, "-statistics"):
                stats = True
            elif matches(opt, "-details"):
                details = True
            elif matches(opt, "-Version"):
                return CommandResult("tc utility, iproute2-6.1.0, libbpf 1.1.2\n")
            elif matches(opt, "-help"):
                return CommandResult(_TC_USAGE, 0, INVALID)
            elif not any(matches(opt, o) for o in ("-raw", "-pretty", "-iec", "-force",
                                                     "-oneline", "-brief", "-graph")):
                return CommandResult(f'Option "{opt}" is unknown, try "tc -help".\n', 255,
                                     INVALID)
        if not args:
            return CommandResult(_TC_USAGE, 0, INVALID)
        obj = args[0]
        if matches(obj, "qdisc"):
            return _do_qdisc(ctx, args[1:], stats, details)
        if matches(obj, "class") or matches(obj, "filter"):
            if len(args) < 2 or any(matches(args[1], w) for w in ("show", "list", "lst")):
                return _class_show(ctx, args[2:], stats) if matches(obj, "class") else \
                    CommandResult("")
            return CommandResult(f"netarena: tc {obj} changes are not simulated\n", 2, INVALID)
        if matches(obj, "help"):
            return CommandResult(_TC_USAGE, 0, INVALID)
        return CommandResult(f'Object "{obj}" is unknown, try "tc help".\n', 255, INVALID)
    except TcExit as e:
        return e.result
