"""``traceroute``'s command line as traceroute 2.1.2 (Debian 12, Mininet's hosts) reads it
with its ``clif`` parser.

Short options may be clustered (``-nI``) and take their argument attached (``-m3``) or
from the next word, whatever it looks like (``-m 192.168.2.100`` takes the address);
long ones take it after ``=`` (``--max-hops=3``). Errors name the word's index
(``argc``): ``Bad option `-x' (argc N)``, ``Option `-m' (argc N) requires an argument:
`-m max_ttl'``, ``Cannot handle `-m' option with arg `V' (argc N)``; the positional
arguments are the host then the packet length (``Cannot handle "packetlen" cmdline arg
`V' on position 2 (argc N)``, ``Extra arg `V' (position 3, argc N)``). Numbers are C's
``strtoul``/``strtod`` with base 0 (``0x10``, ``010`` octal) and nothing after them.
Then ``main`` checks the ranges, in this order: ``first hop out of range`` (``-f`` 0 or
above ``-m``), ``max hops cannot be more than 255``, ``no more than 10 probes per hop``
(``-q`` 0 too), ``bad wait specifications `MAX,HERE,NEAR' used`` (a ``-w`` value below 0;
the parts ``-w`` leaves out are 0), ``too big packetlen N specified`` (above 65535), all
exit 2. A packet length below the headers' 28 bytes is raised to 28. With no argument at
all traceroute prints its usage and exits 0.

Modelled: ``-n``, ``-I``/``--icmp``, ``-m``/``--max-hops``, ``-q``/``--queries``,
``-w``/``--wait`` (only MAX matters to the simulator), ``-f``/``--first``, ``-4``,
``-i``/``--interface`` (the device, checked when the probes start), ``-s``/``--source``
(an address, resolved as it is read, like the host) and the packet length. Left out:
traceroute's other options (``-F``, ``-p``, ``-z``, ``-T``, ``-U``, ``--mtu``, ...), which
the simulator reports as ``Bad option`` where traceroute would run them.
"""
from __future__ import annotations

import re

from netarena_gym.routing.commands.tool_help import TRACEROUTE_VERSION

__all__ = ["TraceArgs", "parse_traceroute", "TRACEROUTE_USAGE"]

MAX_HOPS = 255
MAX_PROBES = 10
MAX_PACKET_LEN = 65535
MIN_PACKET_LEN = 28  # IP and UDP (or ICMP echo) headers
_UINT = re.compile(r"[ \t\n\v\f\r]*\+?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


class TraceArgs:
    """What traceroute's command line asks for (``wait``: MAX, seconds)."""

    __slots__ = ("host", "numeric", "icmp", "max_hops", "queries", "wait", "first", "packetlen",
                 "device", "source")

    def __init__(self):
        self.host: str | None = None
        self.numeric = False
        self.icmp = False
        self.max_hops = 30
        self.queries = 3
        self.wait = 5.0
        self.first = 1
        self.packetlen = 60
        self.device: str | None = None  # -i: the socket is bound to it (SO_BINDTODEVICE)
        self.source: str | None = None  # -s: the address the socket is bound to


class _Exit(Exception):
    def __init__(self, text: str, status: int = 2):
        self.text, self.status = text, status


def _uint(v: str) -> int | None:
    """C ``strtoul(v, &end, 0)`` with nothing left after the number; None otherwise."""
    m = _UINT.match(v)
    if m is None:
        return None
    digits = m.group(1)
    if digits[:2] in ("0x", "0X"):
        return int(digits, 16)
    return int(digits, 8) if digits.startswith("0") else int(digits)


def _set_int(attr: str):
    def handler(opts: TraceArgs, v: str) -> bool:
        n = _uint(v)
        if n is None:
            return False
        setattr(opts, attr, n)
        return True
    return handler


def _set_wait(opts: TraceArgs, v: str) -> bool:
    parts = v.split(",")
    if len(parts) > 3 or not all(_FLOAT.match(p) for p in parts):
        return False
    nums = [float(p) for p in parts] + [0.0] * (3 - len(parts))
    if min(nums) < 0:
        raise _Exit("bad wait specifications `" + ",".join(f"{x:g}" for x in nums) + "' used")
    opts.wait = nums[0]
    return True


def _set_str(attr: str):
    def handler(opts: TraceArgs, v: str) -> bool:
        setattr(opts, attr, v)
        return True
    return handler


def _flag(attr: str):
    def handler(opts: TraceArgs) -> None:
        setattr(opts, attr, True)
    return handler


# short letter -> (long name, metavar or None for a flag, handler)
_OPTIONS = {
    "n": (None, None, _flag("numeric")),
    "I": ("icmp", None, _flag("icmp")),
    "4": (None, None, lambda opts: None),
    "m": ("max-hops", "max_ttl", _set_int("max_hops")),
    "q": ("queries", "nqueries", _set_int("queries")),
    "f": ("first", "first_ttl", _set_int("first")),
    "w": ("wait", "MAX,HERE,NEAR", _set_wait),
    "i": ("interface", "device", _set_str("device")),
    "s": ("source", "src_addr", _set_str("source")),  # resolved by parse_traceroute
}
_LONG = {spec[0]: short for short, spec in _OPTIONS.items() if spec[0]}


def _take(opts: TraceArgs, name: str, short: str, value: str, argc: int, resolve) -> None:
    bad = f"Cannot handle `{name}' option with arg `{value}' (argc {argc})"
    if short == "s":  # getaddr: the resolver's complaint first
        err = resolve(value)
        if err is not None:
            raise _Exit(f"{err}\n{bad}")
    if not _OPTIONS[short][2](opts, value):
        raise _Exit(bad)


def _long(opts: TraceArgs, word: str, argc: int, resolve) -> None:
    name, eq, value = word[2:].partition("=")
    if name in ("help", "version"):  # printed on stderr, exit 0
        raise _Exit((TRACEROUTE_USAGE if name == "help" else TRACEROUTE_VERSION).rstrip("\n"), 0)
    short = _LONG.get(name)
    if short is None:
        raise _Exit(f"Bad option `{word}' (argc {argc})")
    metavar = _OPTIONS[short][1]
    if metavar is None:
        _OPTIONS[short][2](opts)
    elif not eq:
        raise _Exit(f"Option `--{name}' (argc {argc}) requires an argument: "
                    f"`--{name}={metavar}'")
    else:
        _take(opts, f"--{name}", short, value, argc, resolve)


def _positional(opts: TraceArgs, position: int, word: str, argc: int) -> None:
    if position == 1:
        opts.host = word
    elif position == 2:
        n = _uint(word)
        if n is None:
            raise _Exit(f"Cannot handle \"packetlen\" cmdline arg `{word}' on position 2 "
                        f"(argc {argc})")
        opts.packetlen = n
    else:
        raise _Exit(f"Extra arg `{word}' (position {position}, argc {argc})")


def parse_traceroute(argv: list[str], resolve) -> tuple[TraceArgs | None, str, int]:
    """``(args, "", 0)``, or ``(None, text, exit status)``. ``resolve(host)`` is None for a
    host that resolves, else the resolver's message (traceroute resolves it as it reads
    it, so a bad host is reported before later arguments)."""
    opts = TraceArgs()
    if len(argv) < 2:
        return None, TRACEROUTE_USAGE, 0
    try:
        i, position = 1, 0
        while i < len(argv):
            word = argv[i]
            if word.startswith("--") and len(word) > 2:
                _long(opts, word, i, resolve)
            elif word.startswith("-") and len(word) > 1:
                k = 1
                while k < len(word):
                    short = word[k]
                    spec = _OPTIONS.get(short)
                    if short == "V":
                        raise _Exit(TRACEROUTE_VERSION.rstrip("\n"), 0)
                    if spec is None:
                        raise _Exit(f"Bad option `-{short}' (argc {i})")
                    if spec[1] is None:
                        spec[2](opts)
                        k += 1
                        continue
                    if k + 1 < len(word):
                        _take(opts, f"-{short}", short, word[k + 1:], i, resolve)
                    elif i + 1 < len(argv):
                        i += 1
                        _take(opts, f"-{short}", short, argv[i], i, resolve)
                    else:
                        raise _Exit(f"Option `-{short}' (argc {i}) requires an argument: "
                                    f"`-{short} {spec[1]}'")
                    break
            else:
                position += 1
                if position == 1:
                    err = resolve(word)
                    if err is not None:
                        raise _Exit(f"{err}\nCannot handle \"host\" cmdline arg `{word}' on "
                                    f"position 1 (argc {i})")
                _positional(opts, position, word, i)
            i += 1
        if opts.host is None:
            raise _Exit("Specify \"host\" missing argument.")
        if not opts.first or opts.first > opts.max_hops:
            raise _Exit("first hop out of range")
        if opts.max_hops > MAX_HOPS:
            raise _Exit(f"max hops cannot be more than {MAX_HOPS}")
        if not opts.queries or opts.queries > MAX_PROBES:
            raise _Exit(f"no more than {MAX_PROBES} probes per hop")
        if opts.packetlen > MAX_PACKET_LEN:
            raise _Exit(f"too big packetlen {opts.packetlen} specified")
    except _Exit as e:
        return None, e.text + "\n", e.status
    opts.packetlen = max(opts.packetlen, MIN_PACKET_LEN)
    return opts, "", 0


# traceroute 2.1.2's usage, printed (to stderr) when it is run with no argument
TRACEROUTE_USAGE = ("Usage:\n"
                    '  traceroute [ -46dFITnreAUDV ] [ -f first_ttl ] [ -g gate,... ] [ -i device ] '
                    '[ -m max_ttl ] [ -N squeries ] [ -p port ] [ -t tos ] [ -l flow_label ] '
                    '[ -w MAX,HERE,NEAR ] [ -q nqueries ] [ -s src_addr ] [ -z sendwait ] '
                    '[ --fwmark=num ] host [ packetlen ]\n'
                    + """Options:
  -4                          Use IPv4
  -6                          Use IPv6
  -d  --debug                 Enable socket level debugging
  -F  --dont-fragment         Do not fragment packets
  -f first_ttl  --first=first_ttl
                              Start from the first_ttl hop (instead from 1)
  -g gate,...  --gateway=gate,...
                              Route packets through the specified gateway
                              (maximum 8 for IPv4 and 127 for IPv6)
  -I  --icmp                  Use ICMP ECHO for tracerouting
  -T  --tcp                   Use TCP SYN for tracerouting (default port is 80)
  -i device  --interface=device
                              Specify a network interface to operate with
  -m max_ttl  --max-hops=max_ttl
                              Set the max number of hops (max TTL to be
                              reached). Default is 30
  -N squeries  --sim-queries=squeries
                              Set the number of probes to be tried
                              simultaneously (default is 16)
  -n                          Do not resolve IP addresses to their domain names
  -p port  --port=port        Set the destination port to use. It is either
                              initial udp port value for "default" method
                              (incremented by each probe, default is 33434), or
                              initial seq for "icmp" (incremented as well,
                              default from 1), or some constant destination
                              port for other methods (with default of 80 for
                              "tcp", 53 for "udp", etc.)
  -t tos  --tos=tos           Set the TOS (IPv4 type of service) or TC (IPv6
                              traffic class) value for outgoing packets
  -l flow_label  --flowlabel=flow_label
                              Use specified flow_label for IPv6 packets
  -w MAX,HERE,NEAR  --wait=MAX,HERE,NEAR
                              Wait for a probe no more than HERE (default 3)
                              times longer than a response from the same hop,
                              or no more than NEAR (default 10) times than some
                              next hop, or MAX (default 5.0) seconds (float
                              point values allowed too)
  -q nqueries  --queries=nqueries
                              Set the number of probes per each hop. Default is
                              3
  -r                          Bypass the normal routing and send directly to a
                              host on an attached network
  -s src_addr  --source=src_addr
                              Use source src_addr for outgoing packets
  -z sendwait  --sendwait=sendwait
                              Minimal time interval between probes (default 0).
                              If the value is more than 10, then it specifies a
                              number in milliseconds, else it is a number of
                              seconds (float point values allowed too)
  -e  --extensions            Show ICMP extensions (if present), including MPLS
  -A  --as-path-lookups       Perform AS path lookups in routing registries and
                              print results directly after the corresponding
                              addresses
  -M name  --module=name      Use specified module (either builtin or external)
                              for traceroute operations. Most methods have
                              their shortcuts (`-I' means `-M icmp' etc.)
  -O OPTS,...  --options=OPTS,...
                              Use module-specific option OPTS for the
                              traceroute module. Several OPTS allowed,
                              separated by comma. If OPTS is "help", print info
                              about available options
  --sport=num                 Use source port num for outgoing packets. Implies
                              `-N 1'
  --fwmark=num                Set firewall mark for outgoing packets
  -U  --udp                   Use UDP to particular port for tracerouting
                              (instead of increasing the port per each probe),
                              default port is 53
  -UL                         Use UDPLITE for tracerouting (default dest port
                              is 53)
  -D  --dccp                  Use DCCP Request for tracerouting (default port
                              is 33434)
  -P prot  --protocol=prot    Use raw packet of protocol prot for tracerouting
  --mtu                       Discover MTU along the path being traced. Implies
                              `-F -N 1'
  --back                      Guess the number of hops in the backward path and
                              print if it differs
  -V  --version               Print version info and exit
  --help                      Read this help and exit

Arguments:
+     host          The host to traceroute to
      packetlen     The full packet length (default is the length of an IP
                    header plus 40). Can be ignored or increased to a minimal
                    allowed value
""")
