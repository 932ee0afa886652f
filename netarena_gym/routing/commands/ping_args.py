"""``ping``'s command line as iputils 20221126 reads it (Debian 12, Mininet's hosts).

Numbers go through iputils' own helpers, whose texts and exit statuses an agent sees:

* ``-c`` (1 to ``LONG_MAX``), ``-s`` and ``-w`` (0 to ``INT_MAX``) and ``-t`` (0 to 255)
  through ``strtol_or_err``: base 10 after optional blanks and a sign, nothing after the
  digits; ``ping: invalid argument: 'V'`` (``: Numerical result out of range`` past a
  ``long``) or ``...: out of range: LO <= value <= HI``, exit 1. ``-w 0`` is no deadline.
* ``-W`` and ``-i`` through ``ping_strtod`` (C ``strtod``): text after the number only
  warns (``option argument contains garbage``, the number read so far is used, 0 when
  none); an infinite, NaN or subnormal value, or an empty argument, is ``bad linger
  time`` / ``bad timing interval`` (exit 2), as is ``-W`` below 0 or either above
  ``INT_MAX / 1000`` s. A wait that rounds to 0 ms waits for ever.
* more than one host is a source route (the last is the destination): every host is
  resolved, ``connect()`` goes to the first, then ``setsockopt(IP_OPTIONS)`` fails
  (``record route: Operation not permitted``, exit 2).
* getopt's own errors (an unknown option, a missing argument) print ``Usage`` (exit 2);
  no destination is ``usage error: Destination address required`` (exit 1).

Left out: clustered short options (``-qc1``), options ping takes but the simulator does
not model (see :mod:`netarena_gym.routing.commands.ping`), hexadecimal ``strtod``
numbers (``0x1p3`` reads as 0 followed by garbage here) and ``-i`` below 2 ms for a
user other than root (Mininet's commands run as root).
"""
from __future__ import annotations

import math
import re

from netarena_gym.routing.commands.tool_help import PING_VERSION
from netarena_gym.routing.grader import MAX_TTL

__all__ = ["PingArgs", "parse_ping", "PING_USAGE"]

LONG_MAX = 2 ** 63 - 1
INT_MAX = 2 ** 31 - 1
# iputils 20221126's usage(), printed after getopt's complaint
PING_USAGE = """
Usage
  ping [options] <destination>

Options:
  <destination>      dns name or ip address
  -a                 use audible ping
  -A                 use adaptive ping
  -B                 sticky source address
  -c <count>         stop after <count> replies
  -C                 call connect() syscall on socket creation
  -D                 print timestamps
  -d                 use SO_DEBUG socket option
  -e <identifier>    define identifier for ping session, default is random for
                     SOCK_RAW and kernel defined for SOCK_DGRAM
                     Imply using SOCK_RAW (for IPv4 only for identifier 0)
  -f                 flood ping
  -h                 print help and exit
  -I <interface>     either interface name or address
  -i <interval>      seconds between sending each packet
  -L                 suppress loopback of multicast packets
  -l <preload>       send <preload> number of packages while waiting replies
  -m <mark>          tag the packets going out
  -M <pmtud opt>     define mtu discovery, can be one of <do|dont|want>
  -n                 no dns name resolution
  -O                 report outstanding replies
  -p <pattern>       contents of padding byte
  -q                 quiet output
  -Q <tclass>        use quality of service <tclass> bits
  -s <size>          use <size> as number of data bytes to be sent
  -S <size>          use <size> as SO_SNDBUF socket option value
  -t <ttl>           define time to live
  -U                 print user-to-user latency
  -v                 verbose output
  -V                 print version and exit
  -w <deadline>      reply wait <deadline> in seconds
  -W <timeout>       time to wait for response

IPv4 options:
  -4                 use IPv4
  -b                 allow pinging broadcast
  -R                 record route
  -T <timestamp>     define timestamp, can be one of <tsonly|tsandaddr|tsprespec>

IPv6 options:
  -6                 use IPv6
  -F <flowlabel>     define flow label, default is random
  -N <nodeinfo opt>  use icmp6 node info query, try <help> as argument

For more details see ping(8).
"""
_ERANGE = "Numerical result out of range"
_BLANKS = " \t\n\v\f\r"  # C isspace()
_STRTOL = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+\Z")
_STRTOD = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                     r"|(?i:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?))")
_DBL_MIN = 2.2250738585072014e-308  # the smallest normal double


class PingArgs:
    """What ping's command line asks for. ``wait`` and ``interval`` in seconds (``wait``
    is ``math.inf`` for ``-W`` rounding to 0 ms); ``deadline`` None for none."""

    __slots__ = ("target", "hosts", "count", "wait", "deadline", "interval", "size", "pmtu",
                 "iface", "quiet", "ttl", "warnings")

    def __init__(self):
        self.target: str | None = None  # the last of ``hosts``
        self.hosts: list[str] = []  # more than one: a source route through the others
        self.count: int | None = None
        self.wait = 10.0  # MAXWAIT
        self.deadline: int | None = None
        self.interval = 1.0
        self.size = 56
        self.pmtu: str | None = None
        self.iface: str | None = None
        self.quiet = False
        self.ttl = MAX_TTL
        self.warnings: list[str] = []  # ping_strtod's garbage lines, printed first


class _Exit(Exception):
    def __init__(self, text: str, status: int):
        self.text, self.status = text, status


def _strtol(val: str, lo: int, hi: int) -> int:
    """iputils ``strtol_or_err(val, "invalid argument", lo, hi)``."""
    if not _STRTOL.match(val):
        raise _Exit(f"ping: invalid argument: '{val}'", 1)
    num = int(val.lstrip(_BLANKS))
    if not -LONG_MAX - 1 <= num <= LONG_MAX:
        raise _Exit(f"ping: invalid argument: '{val}': {_ERANGE}", 1)
    if not lo <= num <= hi:
        raise _Exit(f"ping: invalid argument: '{val}': out of range: {lo} <= value <= {hi}", 1)
    return num


def _strtod(val: str, what: str, warnings: list[str]) -> float:
    """iputils ``ping_strtod(val, what)``: C ``strtod``, warning about trailing text."""
    if val == "":
        raise _Exit(f"ping: {what}: ", 2)
    m = _STRTOD.match(val)
    num, end = (float(m.group().strip(_BLANKS)), val[m.end():]) if m else (0.0, val)
    literal = m.group().strip(_BLANKS).lstrip("+-").lower() if m else ""
    from_digits = not literal.startswith(("inf", "nan"))
    erange = from_digits and (math.isinf(num) or (
        abs(num) < _DBL_MIN and any(c in "123456789" for c in literal.split("e")[0])))
    if erange or end:  # strtod's ERANGE is reported as garbage too (iputils 20221126)
        warnings += [f"ping: option argument contains garbage: {end}",
                     "ping: this will become fatal error in the future"]
    if math.isinf(num) or math.isnan(num) or 0.0 < abs(num) < _DBL_MIN:
        raise _Exit(f"ping: {what}: {val}: {_ERANGE}", 2)
    return num


# option -> what it takes ("i": strtol, "d": strtod, "s": a string)
_TAKES = {"-c": "i", "-W": "d", "-w": "i", "-i": "d", "-s": "i", "-M": "s", "-I": "s", "-t": "i"}
_INT_RANGES = {"-c": (1, LONG_MAX), "-w": (0, INT_MAX), "-s": (0, INT_MAX), "-t": (0, 255)}
_IGNORED = ("-n", "-4", "-v", "-D", "-O", "-U")


def _apply(opts: PingArgs, flag: str, val: str) -> None:
    kind = _TAKES[flag]
    if kind == "i":
        num = _strtol(val, *_INT_RANGES[flag])
        if flag == "-c":
            opts.count = num
        elif flag == "-w":
            opts.deadline = num or None
        elif flag == "-s":
            opts.size = num
        else:
            opts.ttl = num
    elif flag == "-W":
        w = _strtod(val, "bad linger time", opts.warnings)
        if w < 0 or w > INT_MAX // 1000:
            raise _Exit(f"ping: bad linger time: {val}", 2)
        opts.wait = w if int(w * 1000) else math.inf
    elif flag == "-i":
        i = _strtod(val, "bad timing interval", opts.warnings)
        if i > INT_MAX // 1000:
            raise _Exit(f"ping: bad timing interval: {val}", 2)
        opts.interval = max(i, 0.0)
    elif flag == "-M":
        if val not in ("do", "want", "dont", "probe"):
            raise _Exit(f"ping: invalid -M argument: {val}", 2)
        opts.pmtu = val
    else:
        opts.iface = val


def parse_ping(argv: list[str]) -> tuple[PingArgs | None, str, int]:
    """``(args, "", 0)``, or ``(None, text, exit status)`` where ping stops before sending
    (``text`` includes the garbage warnings printed before it)."""
    opts = PingArgs()
    try:
        i = 1
        while i < len(argv):
            a = argv[i]
            if a in _TAKES or (a[:2] in _TAKES and len(a) > 2):
                flag, val = (a, None) if a in _TAKES else (a[:2], a[2:])
                if val is None:
                    if i + 1 >= len(argv):
                        raise _Exit(f"ping: option requires an argument -- '{flag[1]}'\n"
                                    + PING_USAGE.rstrip("\n"), 2)
                    val = argv[i + 1]
                    i += 1
                _apply(opts, flag, val)
            elif a == "-q":
                opts.quiet = True
            elif a == "-V":  # printed on stdout, exit 0
                raise _Exit(PING_VERSION.rstrip("\n"), 0)
            elif a == "-h":  # the usage alone, on stderr, exit 2
                raise _Exit(PING_USAGE.rstrip("\n"), 2)
            elif a in _IGNORED:
                pass
            elif a.startswith("-") and len(a) > 1:
                raise _Exit(f"ping: invalid option -- '{a[1]}'\n" + PING_USAGE.rstrip("\n"), 2)
            else:
                opts.hosts.append(a)
            i += 1
        if not opts.hosts:
            raise _Exit("ping: usage error: Destination address required", 1)
        opts.target = opts.hosts[-1]
    except _Exit as e:
        return None, "".join(f"{w}\n" for w in opts.warnings) + e.text + "\n", e.status
    return opts, "", 0
