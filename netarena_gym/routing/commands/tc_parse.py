"""Option parsing of ``tc qdisc`` as iproute2 6.1 parses it, kind by kind.

The per-kind parsers of ``netem``, ``tbf``, ``pfifo``/``bfifo`` and ``fq_codel`` with
iproute2's ``matches()`` abbreviations, its ``NEXT_ARG`` cursor (:class:`Args`; an incomplete
line exits 255), usage texts and error wording (``Illegal "limit"``, ``What is "x"?``,
``tbf: the "rate" parameter is mandatory.``). Errors are raised as :class:`TcExit`, which
carries the :class:`CommandResult` the command returns.

Left out: netem ``rate``, ``reorder``, ``slot``, ``distribution``, ``ecn`` and ``loss
state``/``gemodel`` are refused as unknown parameters, and correlations are accepted and not
stored; of ``fq_codel`` only ``limit`` is parsed; tbf's ``mtu``, ``peakrate``, ``overhead``
and ``linklayer`` are refused; kinds the simulator does not hold (``htb``, ``prio``, ...) are
not parsed, so the kernel side refuses them.
"""
from __future__ import annotations

from netarena_gym.shell.parser import INVALID, CommandResult
from netarena_gym.routing.commands.tc_units import (
    TICKS_PER_US, U32, get_percent, get_rate_bytes, get_size, get_time_us, ms_of_us, strtod)
from netarena_gym.routing.state import Interface, Qdisc

__all__ = ["TXQUEUELEN", "Args", "TcExit", "has_opts", "matches", "parse_kind"]

TXQUEUELEN = 1000
_TC_KINDS = {"htb", "prio", "sfq", "red", "hfsc", "cbq", "drr", "fq", "cake", "codel", "choke",
             "sfb", "qfq", "mqprio", "multiq", "pie", "fq_pie", "hhf", "taprio", "etf", "gred",
             "skbprio", "cbs", "ets", "plug", "mq", "pfifo_head_drop"}
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
_INCOMPLETE = 'Command line is not complete. Try option "help"\n'


class TcExit(Exception):
    def __init__(self, text: str, status: int = 1, kind: str = INVALID):
        super().__init__(text)
        self.result = CommandResult(text, status, kind)


def matches(word: str, pattern: str) -> bool:
    """iproute2's ``matches()``: ``word`` is a non-empty prefix of ``pattern``."""
    return 0 < len(word) <= len(pattern) and pattern.startswith(word)


class Args:
    """Cursor over a qdisc's option words with iproute2's NEXT_ARG semantics."""

    def __init__(self, words: list[str]):
        self.words, self.i = words, 0

    def next(self) -> str:
        self.i += 1
        if self.i >= len(self.words):
            raise TcExit(_INCOMPLETE, 255)
        return self.words[self.i]

    def next_is_number(self) -> bool:
        return self.i + 1 < len(self.words) and strtod(self.words[self.i + 1]) is not None


def _illegal(what: str) -> TcExit:
    return TcExit(f'Illegal "{what}"\n')


def _parse_netem(words: list[str], itf: Interface) -> Qdisc:
    q, a = Qdisc("netem", limit=1000), Args(words)
    while a.i < len(words):
        w = words[a.i]
        if matches(w, "limit"):
            v = get_size(a.next())
            if v is None:
                raise _illegal("limit")
            q.limit = v
        elif matches(w, "latency") or matches(w, "delay"):
            q.delay_ms = _netem_time(a.next())
            if a.next_is_number():
                q.jitter_ms = _netem_time(a.next())
                if a.next_is_number() and get_percent(a.next()) is None:
                    raise _illegal("latency")
        elif matches(w, "loss") or matches(w, "drop"):
            if q.loss_pct:
                raise _illegal("duplicate loss argument\n")
            v = a.next()
            if v == "random":
                v = a.next()
            elif not v[:1].isdigit():
                raise TcExit(f"Unknown loss parameter: {v}\n")
            q.loss_pct = _pct_arg(v, "loss percent")
            if a.next_is_number():
                _pct_arg(a.next(), "loss correlation")
        elif matches(w, "corrupt") or matches(w, "duplicate"):
            name = "corrupt" if matches(w, "corrupt") else "duplicate"
            setattr(q, f"{name}_pct", _pct_arg(a.next(), name))
            if a.next_is_number():
                _pct_arg(a.next(), name)
        else:
            raise TcExit(("" if w == "help" else f'What is "{w}"?\n') + _NETEM_USAGE)
        a.i += 1
    return q


def _netem_time(text: str) -> float:
    us = get_time_us(text)
    if us is None:
        raise _illegal("latency")
    if int(us * TICKS_PER_US) >> 32:
        raise TcExit(f"Illegal {us} time (too large)\n")
    return ms_of_us(us)


def _pct_arg(text: str, what: str) -> float:
    v = get_percent(text)
    if v is None:
        raise _illegal(what)
    return v


def _parse_tbf(words: list[str], itf: Interface) -> Qdisc:
    vals: dict[str, int] = {}
    a = Args(words)
    while a.i < len(words):
        w = words[a.i]
        key = ("limit" if matches(w, "limit") else "latency" if matches(w, "latency") else
               "burst" if matches(w, "burst") or w in ("buffer", "maxburst") else
               "rate" if w == "rate" else None)
        if key is None:
            raise TcExit(("" if w == "help" else f'tbf: unknown parameter "{w}"\n') + _TBF_USAGE)
        v = a.next()
        if key in vals:
            label = "buffer/burst/maxburst" if key == "burst" else key
            raise TcExit(f'tbf: duplicate "{label}" specification\n')
        if key in ("limit", "latency") and ({"limit", "latency"} - {key}) & vals.keys():
            raise TcExit('tbf: specifying both "latency" and "limit" is not allowed\n'
                         if key == "limit" else
                         'tbf: specifying both "limit" and "/latency" is not allowed\n')
        size, _, cell = v.partition("/") if key == "burst" else (v, "", "")
        num = {"limit": get_size, "latency": get_time_us, "burst": get_size,
               "rate": get_rate_bytes}[key](size)
        if num is None or (cell and not (cell.isdigit() and int(cell) & (int(cell) - 1) == 0)):
            raise TcExit(f'tbf: illegal value for "{w}": "{v}"\n')
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
        raise TcExit("".join(errs) + _TBF_USAGE)
    rate, burst, lat = vals["rate"], vals["burst"], vals.get("latency", 0)
    limit = vals.get("limit") or int(rate * lat / 1e6 + burst) & U32
    return Qdisc("tbf", rate_bps=rate * 8, burst_bytes=burst, limit=limit, latency_ms=ms_of_us(lat))


def _parse_fifo(kind: str, words: list[str], itf: Interface) -> Qdisc:
    """A fifo with the kernel's default limit when none is given (``limit`` is then absent
    from the request, so ``change``/``replace`` keep the current one: see ``has_opts``)."""
    limit = TXQUEUELEN * (itf.mtu + 14 if kind == "bfifo" else 1)
    a = Args(words)
    while a.i < len(words):
        w = words[a.i]
        if w != "limit":
            raise TcExit(("" if w == "help" else f'{kind}: unknown parameter "{w}"\n')
                         + _FIFO_USAGE)
        v = a.next()
        limit = get_size(v)
        if limit is None:
            raise TcExit(f'{kind}: Illegal value for "limit": "{v}"\n')
        a.i += 1
    return Qdisc(kind, limit=limit)


def _parse_fq_codel(words: list[str], itf: Interface) -> Qdisc:
    q, a = Qdisc("fq_codel", limit=10240), Args(words)
    while a.i < len(words):
        w = words[a.i]
        if w != "limit":
            raise TcExit(("" if w == "help" else f'What is "{w}"?\n') + _FQ_CODEL_USAGE)
        v = a.next()
        if not v.isdigit() or int(v) > U32:
            raise _illegal("limit")
        q.limit = int(v)
        a.i += 1
    return q


def has_opts(kind: str | None, words: list[str]) -> bool:
    """Does the request carry options the kernel applies on change? (tc sends none for fifos
    without ``limit``; fq_codel changes only what is given, and we hold only its limit.)"""
    if kind in ("netem", "tbf"):
        return True
    return kind in ("pfifo", "bfifo", "fq_codel") and "limit" in words


def parse_kind(kind: str | None, words: list[str], itf: Interface) -> Qdisc | None:
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
        raise TcExit(f"qdisc '{kind}' does not support option parsing\n", 255)
    if words and kind is not None and kind not in _TC_KINDS:
        raise TcExit(f'Unknown qdisc "{kind}", hence option "{words[0]}" is unparsable\n')
    return Qdisc(kind) if kind in ("pfifo_fast", "noqueue") else None
