"""The number conversions of ``tc`` (iproute2 6.1) and the kernel round trips behind what it prints.

iproute2's ``get_time``, ``get_rate``, ``get_size`` and ``get_percent`` (same units, same
limits) and its ``sprint_time``/``sprint_size``/``sprint_rate``/``print_percent`` printers, with
the Linux 6.1 kernel's conversions in between: psched ticks at 15.625 per microsecond
(``/proc/net/psched``), netem's percentages as 32-bit fractions and tbf's
``psched_ratecfg_precompute``, so that ``tc qdisc show`` prints ``delay 2s``, ``loss 50%``,
``rate 1Mbit burst 4Kb lat 400ms`` as the real tool does.

Left out: the ``-iec`` and ``-raw`` printing modes (``tc`` accepts and ignores them) and the
rate table adjustments of ``mpu``, ``overhead`` and ``linklayer``.
"""
from __future__ import annotations

import re

from netarena_gym.routing.state import Qdisc

__all__ = ["TICKS_PER_US", "U32", "get_percent", "get_rate_bytes", "get_size", "get_time_us",
           "ms_of_us", "sprint_percent", "sprint_rate", "sprint_size", "sprint_time", "strtod",
           "tbf_view", "tick2time", "time2tick", "us_of_ms"]

U32 = 0xFFFFFFFF
TICKS_PER_US = 15.625  # /proc/net/psched: 1000/64 ticks per microsecond
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


def strtod(text: str) -> tuple[float, str] | None:
    m = _NUM.match(text)
    return (float(m.group()), text[m.end():]) if m else None


def _scaled(text: str, units: dict) -> float | None:
    got = strtod(text)
    if got is None or got[1].lower() not in units:
        return None
    return got[0] * units[got[1].lower()]


def get_time_us(text: str) -> int | None:
    v = _scaled(text, _TIME_UNITS)
    return None if v is None or not 0 <= v <= U32 else int(v)


def get_rate_bytes(text: str) -> int | None:
    v = _scaled(text, _RATE_UNITS)
    return None if v is None or v < 0 else int(v / 8)


def get_size(text: str) -> int | None:
    v = _scaled(text, _SIZE_UNITS)
    return None if v is None or not 0 <= v <= U32 or v != int(v) else int(v)


def get_percent(text: str) -> float | None:
    got = strtod(text)
    if got is None or got[1] not in ("", "%") or not 0 <= got[0] <= 100:
        return None
    return got[0]


def time2tick(us: int) -> int:
    return int(us * TICKS_PER_US) & U32


def tick2time(ticks: int) -> int:
    return int(ticks / TICKS_PER_US)


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


def sprint_percent(pct: float) -> str:
    per = round(pct / 100 * U32)  # rint(): half to even, as Python's round
    return f"{100.0 * per / U32:g}%"


def ms_of_us(us: int) -> float:
    return us / 1000.0


def us_of_ms(ms: float) -> int:
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


def tbf_view(q: Qdisc) -> tuple[int, int, float]:
    """(rate B/s, burst bytes as printed, latency us as printed) after the kernel round trip."""
    rate = q.rate_bps // 8
    mult, shift = _ratecfg(rate)
    buffer_ticks = ((q.burst_bytes * mult) >> shift) >> 6
    t = tick2time(buffer_ticks)
    burst = int(rate * t / 1e6) & U32 if rate else 0
    latency = 1e6 * (q.limit / rate) - t if rate else -1.0
    return rate, burst, latency
