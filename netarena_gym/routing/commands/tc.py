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
"""
from __future__ import annotations

import re

from netarena_gym.shell.parser import ERROR, INVALID, CommandResult
from netarena_gym.routing.commands import CommandContext, register
from netarena_gym.routing.state import Interface, Qdisc

__all__ = ["NETEM", "ROOT_REFCNT", "format_qdisc", "netem_supported", "tc_cmd"]

NETEM = "netem"
ROOT_REFCNT = 2
TXQUEUELEN = 1000
_U32 = 0xFFFFFFFF
_TICKS_PER_US = 15.625  # /proc/net/psched: 1000/64 ticks per microsecond
_SIM_KINDS = ("netem", "tbf", "pfifo", "bfifo", "pfifo_fast", "fq_codel", "noqueue")
_TC_KINDS = {"htb", "prio", "sfq", "red", "hfsc", "cbq", "drr", "fq", "cake", "codel", "choke",
             "sfb", "qfq", "mqprio", "multiq", "pie", "fq_pie", "hhf", "taprio", "etf", "gred",
             "skbprio", "cbs", "ets", "plug", "mq", "pfifo_head_drop"}
_NUM = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_TIME_UNITS = {"": 1, "s": 1e6, "sec": 1e6, "secs": 1e6, "ms": 1e3, "msec": 1e3, "msecs": 1e3,
               "us": 1, "usec": 1, "usecs": 1}
_RATE_UNITS = {"": 1, "bit": 1, "kibit": 1024, "kbit": 1e3, "mibit": 1024 ** 2, "mbit": 1e6,
               "gibit": 1024 ** 3, "gbit": 1e9, "tibit": 1024 ** 4, "tbit": 1e12, "bps": 8,
               "kibps": 8 * 1024, "kbps": 8e3, "mibps": 8 * 1024 ** 2, "mbps": 8e6,
               "gibps": 8 * 1024 ** 3, "gbps": 8e9, "tibps": 8 * 1024 ** 4, "tbps": 8e12}
_SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "m": 1024 ** 2, "mb": 1024 ** 2,
               "g": 1024 ** 3, "gb": 1024 ** 3, "gbit": 1024 ** 3 / 8, "mbit": 1024 ** 2 / 8,
               "kbit": 1024 / 8}
_NETEM_USAGE = (
    "Usage: ... netem [ limit PACKETS ]\n"
    "                 [ delay TIME [ JITTER [CORRELATION]]]\n"
    "                 [ distribution {uniform|normal|pareto|paretonormal} ]\n"
    "                 [ corrupt PERCENT [CORRELATION]]\n"
    "                 [ duplicate PERCENT [CORRELATION]]\n"
    "                 [ loss random PERCENT [CORRELATION]]\n"
    "                 [ loss state P13 [P31 [P32 [P23 P14]]]\n"
    "                 [ loss gemodel PERCENT [R [1-H [1-K]]]\n"
    "                 [ ecn ]\n"
    "                 [ reorder PERCENT [CORRELATION] [ gap DISTANCE ]]\n"
    "                 [ rate RATE [PACKETOVERHEAD] [CELLSIZE] [CELLOVERHEAD]]\n"
    "                 [ slot MIN_DELAY [MAX_DELAY] [packets MAX_PACKETS] [bytes MAX_BYTES]]\n"
    "                 [ slot distribution {uniform|normal|pareto|paretonormal|custom}\n"
    "                   DELAY JITTER [packets MAX_PACKETS] [bytes MAX_BYTES]]\n")
_TBF_USAGE = ("Usage: ... tbf limit BYTES burst BYTES[/BYTES] rate KBPS [ mtu BYTES[/BYTES] ]\n"
              "\t[ peakrate KBPS ] [ latency TIME ] [ overhead BYTES ] [ linklayer TYPE ]\n")
_FIFO_USAGE = "Usage: ... <[p|b]fifo | pfifo_head_drop> [ limit NUMBER ]\n"
_FQ_CODEL_USAGE = ("Usage: ... fq_codel\t[ limit PACKETS ] [ flows NUMBER ]\n"
                   "[ memory_limit BYTES ]\n"
                   "[ target TIME ] [ interval TIME ]\n[ quantum BYTES ] [ [no]ecn ]\n"
                   "[ ce_threshold TIME ]\n[ ce_threshold_selector VALUE/MASK ]\n"
                   "[ drop_batch SIZE ]\n")
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
_INCOMPLETE = 'Command line is not complete. Try option "help"\n'


class _Fail(Exception):
    def __init__(self, text: str, status: int = 1, kind: str = INVALID):
        super().__init__(text)
        self.result = CommandResult(text, status, kind)


def _kernel(msg: str) -> _Fail:
    return _Fail(f"Error: {msg}{'' if msg.endswith('.') else '.'}\n", 2, ERROR)


def netem_supported(ctx: CommandContext) -> bool:
    caps = getattr(ctx, "capabilities", None)
    return caps is None or NETEM in caps


def _matches(word: str, pattern: str) -> bool:
    """iproute2's ``matches()``: ``word`` is a non-empty prefix of ``pattern``."""
    return 0 < len(word) <= len(pattern) and pattern.startswith(word)


# ------------------------------------------------------------------- number conversions
def _strtod(text: str) -> tuple[float, str] | None:
    m = _NUM.match(text)
    return (float(m.group()), text[m.end():]) if m else None


def _scaled(text: str, units: dict) -> float | None:
    got = _strtod(text)
    if got is None or got[1].lower() not in units:
        return None
    return got[0] * units[got[1].lower()]


def get_time_us(text: str) -> int | None:
    v = _scaled(text, _TIME_UNITS)
    return None if v is None or not 0 <= v <= _U32 else int(v)


def get_rate_bytes(text: str) -> int | None:
    v = _scaled(text, _RATE_UNITS)
    return None if v is None or v < 0 else int(v / 8)


def get_size(text: str) -> int | None:
    v = _scaled(text, _SIZE_UNITS)
    return None if v is None or not 0 <= v <= _U32 or v != int(v) else int(v)


def _percent(text: str) -> float | None:
    got = _strtod(text)
    if got is None or got[1] not in ("", "%") or not 0 <= got[0] <= 100:
        return None
    return got[0]


def _ticks(us: int) -> int:
    return int(us * _TICKS_PER_US) & _U32


def _tick2time(ticks: int) -> int:
    return int(ticks / _TICKS_PER_US)


def sprint_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3g}s"
    if us >= 1e3:
        return f"{us / 1e3:.3g}ms"
    return f"{int(us)}us"


def sprint_size(sz: int) -> str:
    if sz >= 1 << 20 and abs((1 << 20) * round(sz / (1 << 20)) - sz) < 1024:
        return f"{round(sz / (1 << 20)):g}Mb"
    if sz >= 1024 and abs(1024 * round(sz / 1024) - sz) < 16:
        return f"{round(sz / 1024):g}Kb"
    return f"{sz}b"


def sprint_rate(rate_bytes: int) -> str:
    bits, units, i = rate_bytes * 8, ("", "K", "M", "G", "T"), 0
    while i < 4 and bits >= 1000 and not (bits % 1000 and bits < 1000 * 1000):
        bits //= 1000
        i += 1
    return f"{bits}{units[i]}bit"


def _print_percent(pct: float) -> str:
    per = round(pct / 100 * _U32)  # rint(): half to even, as Python's round
    return f"{100.0 * per / _U32:g}%"


def _ms(us: int) -> float:
    return us / 1000.0


def _us(ms: float) -> int:
    return int(round(ms * 1000, 6))


# -------------------------------------------------------------------- tbf arithmetic
def _ratecfg(rate: int) -> tuple[int, int]:
    """The kernel's ``psched_ratecfg_precompute__``: (mult, shift) for ns per byte."""
    if rate <= 0:
        return 1, 0
    factor, shift = 10 ** 9, 0
    while True:
        mult = factor // rate
        if mult & (1 << 31) or factor & (1 << 63):
            return mult, shift
        factor <<= 1
        shift += 1


def _tbf_view(q: Qdisc) -> tuple[int, int, float]:
    """(rate B/s, burst bytes as printed, latency us as printed) after the kernel round trip."""
    rate = q.rate_bps // 8
    mult, shift = _ratecfg(rate)
    buffer_ticks = ((q.burst_bytes * mult) >> shift) >> 6
    t = _tick2time(buffer_ticks)
    burst = int(rate * t / 1e6) & _U32 if rate else 0
    latency = 1e6 * (q.limit / rate) - t if rate else -1.0
    return rate, burst, latency


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
        rate, burst, lat = _tbf_view(q)
        s = f"rate {sprint_rate(rate)} burst {sprint_size(burst)}"
        s += "/1 mpu 0b " if details else " "
        s += (f"lat {sprint_time(int(lat) & _U32)} " if lat >= 0
              else f"limit {sprint_size(q.limit)} ")
        return s + ("linklayer ethernet " if details else "")
    if k == "netem":
        s = f"limit {q.limit}"
        if q.delay_ms:
            s += f" delay {sprint_time(_tick2time(_ticks(_us(q.delay_ms))))}"
            if q.jitter_ms:
                s += f"  {sprint_time(_tick2time(_ticks(_us(q.jitter_ms))))}"
        for name, pct in (("loss", q.loss_pct), ("duplicate", q.duplicate_pct),
                          ("corrupt", q.corrupt_pct)):
            if round(pct / 100 * _U32):
                s += f" {name} {_print_percent(pct)}"
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


# --------------------------------------------------------------------- kind parsers
class _Args:
    """Cursor over a qdisc's option words with iproute2's NEXT_ARG semantics."""

    def __init__(self, words: list[str]):
        self.words, self.i = words, 0

    def next(self) -> str:
        self.i += 1
        if self.i >= len(self.words):
            raise _Fail(_INCOMPLETE, 255)
        return self.words[self.i]

    def next_is_number(self) -> bool:
        return self.i + 1 < len(self.words) and _strtod(self.words[self.i + 1]) is not None


def _illegal(what: str) -> _Fail:
    return _Fail(f'Illegal "{what}"\n')


def _parse_netem(words: list[str], itf: Interface) -> Qdisc:
    q, a = Qdisc("netem", limit=1000), _Args(words)
    while a.i < len(words):
        w = words[a.i]
        if _matches(w, "limit"):
            v = get_size(a.next())
            if v is None:
                raise _illegal("limit")
            q.limit = v
        elif _matches(w, "latency") or _matches(w, "delay"):
            q.delay_ms = _netem_time(a.next())
            if a.next_is_number():
                q.jitter_ms = _netem_time(a.next())
                if a.next_is_number() and _percent(a.next()) is None:
                    raise _illegal("latency")
        elif _matches(w, "loss") or _matches(w, "drop"):
            if q.loss_pct:
                raise _illegal("duplicate loss argument\n")
            v = a.next()
            if v == "random":
                v = a.next()
            elif not v[:1].isdigit():
                raise _Fail(f"Unknown loss parameter: {v}\n")
            q.loss_pct = _pct_arg(v, "loss percent")
            if a.next_is_number():
                _pct_arg(a.next(), "loss correlation")
        elif _matches(w, "corrupt") or _matches(w, "duplicate"):
            name = "corrupt" if _matches(w, "corrupt") else "duplicate"
            setattr(q, f"{name}_pct", _pct_arg(a.next(), name))
            if a.next_is_number():
                _pct_arg(a.next(), name)
        else:
            raise _Fail(("" if w == "help" else f'What is "{w}"?\n') + _NETEM_USAGE)
        a.i += 1
    return q


def _netem_time(text: str) -> float:
    us = get_time_us(text)
    if us is None:
        raise _illegal("latency")
    if int(us * _TICKS_PER_US) >> 32:
        raise _Fail(f"Illegal {us} time (too large)\n")
    return _ms(us)


def _pct_arg(text: str, what: str) -> float:
    v = _percent(text)
    if v is None:
        raise _illegal(what)
    return v


def _parse_tbf(words: list[str], itf: Interface) -> Qdisc:
    vals: dict[str, int] = {}
    a = _Args(words)
    while a.i < len(words):
        w = words[a.i]
        key = ("limit" if _matches(w, "limit") else "latency" if _matches(w, "latency") else
               "burst" if _matches(w, "burst") or w in ("buffer", "maxburst") else
               "rate" if w == "rate" else None)
        if key is None:
            raise _Fail(("" if w == "help" else f'tbf: unknown parameter "{w}"\n') + _TBF_USAGE)
        v = a.next()
        if key in vals:
            label = "buffer/burst/maxburst" if key == "burst" else key
            raise _Fail(f'tbf: duplicate "{label}" specification\n')
        if key in ("limit", "latency") and ({"limit", "latency"} - {key}) & vals.keys():
            raise _Fail('tbf: specifying both "latency" and "limit" is not allowed\n'
                        if key == "limit" else
                        'tbf: specifying both "limit" and "/latency" is not allowed\n')
        size, _, cell = v.partition("/") if key == "burst" else (v, "", "")
        num = {"limit": get_size, "latency": get_time_us, "burst": get_size,
               "rate": get_rate_bytes}[key](size)
        if num is None or (cell and not (cell.isdigit() and int(cell) & (int(cell) - 1) == 0)):
            raise _Fail(f'tbf: illegal value for "{w}": "{v}"\n')
        vals[key] = num
        a.i += 1
    errs = []
    if not vals.get("rate"):
        errs.append('tbf: the "rate" parameter is mandatory.\n')
    if not vals.get("burst"):
        errs.append('tbf: the "burst" parameter is mandatory.\n')
    if not vals.get("limit") and not vals.get("latency"):
        errs.append('tbf: either "limit" or "latency" is required.\n')
    if errs:
        raise _Fail("".join(errs) + _TBF_USAGE)
    rate, burst, lat = vals["rate"], vals["burst"], vals.get("latency", 0)
    limit = vals.get("limit") or int(rate * lat / 1e6 + burst) & _U32
    return Qdisc("tbf", rate_bps=rate * 8, burst_bytes=burst, limit=limit, latency_ms=_ms(lat))


def _parse_fifo(kind: str, words: list[str], itf: Interface) -> Qdisc:
    """A fifo with the kernel's default limit when none is given (``limit`` is then absent
    from the request, so ``change``/``replace`` keep the current one: see ``_has_opts``)."""
    limit = TXQUEUELEN * (itf.mtu + 14 if kind == "bfifo" else 1)
    a = _Args(words)
    while a.i < len(words):
        w = words[a.i]
        if w != "limit":
            raise _Fail(("" if w == "help" else f'{kind}: unknown parameter "{w}"\n') + _FIFO_USAGE)
        v = a.next()
        limit = get_size(v)
        if limit is None:
            raise _Fail(f'{kind}: Illegal value for "limit": "{v}"\n')
        a.i += 1
    return Qdisc(kind, limit=limit)


def _parse_fq_codel(words: list[str], itf: Interface) -> Qdisc:
    q, a = Qdisc("fq_codel", limit=10240), _Args(words)
    while a.i < len(words):
        w = words[a.i]
        if w != "limit":
            raise _Fail(("" if w == "help" else f'What is "{w}"?\n') + _FQ_CODEL_USAGE)
        v = a.next()
        if not v.isdigit() or int(v) > _U32:
            raise _illegal("limit")
        q.limit = int(v)
        a.i += 1
    return q


def _has_opts(kind: str | None, words: list[str]) -> bool:
    """Does the request carry options the kernel applies on change? (tc sends none for fifos
    without ``limit``; fq_codel changes only what is given, and we hold only its limit.)"""
    if kind in ("netem", "tbf"):
        return True
    return kind in ("pfifo", "bfifo", "fq_codel") and "limit" in words


def _parse_kind(kind: str | None, words: list[str], itf: Interface) -> Qdisc | None:
    """Userspace option parsing of ``kind`` (None for kinds the simulator does not hold)."""
    if kind == "netem":
        return _parse_netem(words, itf)
    if kind == "tbf":
        return _parse_tbf(words, itf)
    if kind in ("pfifo", "bfifo"):
        return _parse_fifo(kind, words, itf)
    if kind == "fq_codel":
        return _parse_fq_codel(words, itf)
    if words and kind in ("pfifo_fast", "noqueue"):
        raise _Fail(f"qdisc '{kind}' does not support option parsing\n", 255)
    if words and kind is not None and kind not in _TC_KINDS:
        raise _Fail(f'Unknown qdisc "{kind}", hence option "{words[0]}" is unparsable\n')
    return Qdisc(kind) if kind in ("pfifo_fast", "noqueue") else None


# ---------------------------------------------------------------------- kernel side
def _hnum(handle: str) -> int:
    return int(handle.rstrip(":"), 16)


def _parse_handle(text: str) -> int:
    if text == "none":
        return 0
    m = re.match(r"[0-9a-fA-F]+", text)
    if not m or int(m.group(), 16) >= 1 << 16 or text[m.end():m.end() + 1] not in ("", ":"):
        raise _Fail(f'Error: argument "{text}" is wrong: invalid qdisc ID\n', 255)
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
    a = _Args(words)
    while a.i < len(words):
        w = words[a.i]
        if w in ("dev", "handle"):
            v = a.next()
            if req[w]:
                raise _Fail(f'Error: duplicate "{w}": "{v}" is the second value.\n', 255)
            req[w] = v if w == "dev" else _parse_handle(v)
        elif w in ("root", "parent"):
            v = a.next() if w == "parent" else "root"
            if req["parent"] is not None:
                raise _Fail('Error: "root" is duplicate parent ID\n' if w == "root" else
                            f'Error: duplicate "parent": "{v}" is the second value.\n', 255)
            req["parent"] = v
        elif w in ("ingress", "clsact"):
            req["parent"], req["kind"] = w, w
            req["opts"] = words[a.i + 1:]
            break
        elif _matches(w, "help"):
            raise _Fail(_QDISC_USAGE, 0)
        else:
            req["kind"], req["opts"] = w, words[a.i + 1:]
            break
        a.i += 1
    return req


def _qdisc_modify(ctx: CommandContext, mode: str, words: list[str]) -> CommandResult:
    req = _parse_modify(words)
    itf = ctx.node.interfaces.get(req["dev"] or "")
    probe = itf or Interface(name="", ifindex=0, mac="")
    req["qdisc"] = _parse_kind(req["kind"], req["opts"], probe)
    req["has_opts"] = _has_opts(req["kind"], req["opts"])
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
    dev, a = None, _Args(words)
    while a.i < len(words):
        w = words[a.i]
        if w == "dev":
            dev = a.next()
        elif w in ("handle", "parent"):
            a.next()
        elif _matches(w, "help"):
            raise _Fail(_QDISC_USAGE, 0)
        elif w not in ("root", "invisible", "ingress", "clsact"):
            raise _Fail(f'What is "{w}"? Try "tc qdisc help".\n', 255)
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
    if _matches(sub, "add"):
        return _qdisc_modify(ctx, "add", rest)
    if _matches(sub, "change"):
        return _qdisc_modify(ctx, "change", rest)
    if sub in ("replace", "link"):
        return _qdisc_modify(ctx, sub, rest)
    if _matches(sub, "delete"):
        return _qdisc_modify(ctx, "delete", rest)
    if _matches(sub, "list") or _matches(sub, "show") or _matches(sub, "lst"):
        return _qdisc_show(ctx, rest, stats, details)
    if _matches(sub, "help"):
        return CommandResult(_QDISC_USAGE, 0, INVALID)
    return CommandResult(f'Command "{sub}" is unknown, try "tc qdisc help".\n', 255, INVALID)


@register("tc")
def tc_cmd(ctx: CommandContext, argv: list[str], stdin: str) -> CommandResult:
    stats = details = False
    args = argv[1:]
    try:
        while args and args[0].startswith("-") and len(args[0]) > 1:
            opt = args.pop(0)
            if _matches(opt, "-stats") or _matches(opt, "-statistics"):
                stats = True
            elif _matches(opt, "-details"):
                details = True
            elif _matches(opt, "-Version"):
                return CommandResult("tc utility, iproute2-6.1.0, libbpf 1.1.2\n")
            elif _matches(opt, "-help"):
                return CommandResult(_TC_USAGE, 0, INVALID)
            elif not any(_matches(opt, o) for o in ("-raw", "-pretty", "-iec", "-force",
                                                     "-oneline", "-brief", "-graph")):
                return CommandResult(f'Option "{opt}" is unknown, try "tc -help".\n', 255,
                                     INVALID)
        if not args:
            return CommandResult(_TC_USAGE, 0, INVALID)
        obj = args[0]
        if _matches(obj, "qdisc"):
            return _do_qdisc(ctx, args[1:], stats, details)
        if _matches(obj, "class") or _matches(obj, "filter"):
            if len(args) < 2 or any(_matches(args[1], w) for w in ("show", "list", "lst")):
                return _class_show(ctx, args[2:], stats) if _matches(obj, "class") else \
                    CommandResult("")
            return CommandResult(f"netarena: tc {obj} changes are not simulated\n", 2, INVALID)
        if _matches(obj, "help"):
            return CommandResult(_TC_USAGE, 0, INVALID)
        return CommandResult(f'Object "{obj}" is unknown, try "tc help".\n', 255, INVALID)
    except _Fail as e:
        return e.result
