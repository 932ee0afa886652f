"""``ping``'s command line, pinned from iputils 20221126 (Debian 12, run as root): the
texts and exit statuses of its number parsers and getopt. test_mininet_icmp.py runs the
same lines on Mininet against the simulator."""
import math

import pytest

from netarena_gym.routing.commands.ping_args import PING_USAGE, parse_ping

GARBAGE = ("ping: option argument contains garbage: {}\n"
           "ping: this will become fatal error in the future\n")


def args(line: str):
    return parse_ping(line.split(" "))


@pytest.mark.parametrize("line, text, status", [
    ("ping -t 256 h", "ping: invalid argument: '256': out of range: 0 <= value <= 255\n", 1),
    ("ping -t -1 h", "ping: invalid argument: '-1': out of range: 0 <= value <= 255\n", 1),
    ("ping -t 1x h", "ping: invalid argument: '1x'\n", 1),
    ("ping -t 0x5 h", "ping: invalid argument: '0x5'\n", 1),
    ("ping -t 1.5 h", "ping: invalid argument: '1.5'\n", 1),
    ("ping -c 0 h",
     "ping: invalid argument: '0': out of range: 1 <= value <= 9223372036854775807\n", 1),
    ("ping -c 9223372036854775808 h",
     "ping: invalid argument: '9223372036854775808': Numerical result out of range\n", 1),
    ("ping -c  h", "ping: invalid argument: ''\n", 1),
    ("ping -w 1.5 h", "ping: invalid argument: '1.5'\n", 1),
    ("ping -s -1 h", "ping: invalid argument: '-1': out of range: 0 <= value <= 2147483647\n", 1),
    ("ping -s 2147483648 h",
     "ping: invalid argument: '2147483648': out of range: 0 <= value <= 2147483647\n", 1),
    ("ping -s 1e3 h", "ping: invalid argument: '1e3'\n", 1),
    ("ping -W -1 h", "ping: bad linger time: -1\n", 2),
    ("ping -W 2147484 h", "ping: bad linger time: 2147484\n", 2),
    ("ping -W  h", "ping: bad linger time: \n", 2),
    ("ping -W inf h", "ping: bad linger time: inf: Numerical result out of range\n", 2),
    ("ping -W nan h", "ping: bad linger time: nan: Numerical result out of range\n", 2),
    ("ping -W 1e999 h", GARBAGE.format("") +
     "ping: bad linger time: 1e999: Numerical result out of range\n", 2),
    ("ping -i 1e999 h", GARBAGE.format("") +
     "ping: bad timing interval: 1e999: Numerical result out of range\n", 2),
    ("ping -i 3000000 h", "ping: bad timing interval: 3000000\n", 2),
    ("ping -W abc -t 300 h", GARBAGE.format("abc") +
     "ping: invalid argument: '300': out of range: 0 <= value <= 255\n", 1),
    ("ping -M bad h", "ping: invalid -M argument: bad\n", 2),
    ("ping", "ping: usage error: Destination address required\n", 1),
    ("ping -c 1", "ping: usage error: Destination address required\n", 1),
    ("ping -x h", "ping: invalid option -- 'x'\n" + PING_USAGE, 2),
    ("ping h -c", "ping: option requires an argument -- 'c'\n" + PING_USAGE, 2),
])
def test_refused_lines_print_what_iputils_prints(line, text, status):
    assert args(line) == (None, text, status)


def test_usage_is_iputils_text():
    assert PING_USAGE.startswith("\nUsage\n  ping [options] <destination>\n\nOptions:\n")
    assert PING_USAGE.endswith("\nFor more details see ping(8).\n")
    assert "  -W <timeout>       time to wait for response\n" in PING_USAGE


def test_numbers_as_strtol_and_strtod_read_them():
    opts, text, status = args("ping -c 010 -t +5 -s 0 -w 0 -i -1 -W 0.5 h")
    assert (text, status) == ("", 0)
    assert (opts.count, opts.ttl, opts.size, opts.deadline, opts.interval, opts.wait) == (
        10, 5, 0, None, 0.0, 0.5)
    opts, *_ = parse_ping(["ping", "-t", " 5", "-W", " 1", "h"])  # leading blanks are read
    assert (opts.ttl, opts.wait, opts.warnings) == (5, 1.0, [])


def test_garbage_after_a_wait_or_interval_only_warns():
    opts, text, status = args("ping -W abc -i 0.2s h")
    assert (text, status) == ("", 0)
    assert opts.warnings == GARBAGE.format("abc").splitlines() + GARBAGE.format("s").splitlines()
    assert (opts.wait, opts.interval) == (math.inf, 0.2)  # "abc" reads as 0 ms: no limit


@pytest.mark.parametrize("value, wait", [("0", math.inf), ("0.0001", math.inf), ("1e1", 10.0),
                                         ("0.001", 0.001)])
def test_a_wait_rounding_to_zero_ms_waits_for_ever(value, wait):
    assert args(f"ping -W {value} h")[0].wait == wait


def test_more_than_one_host_is_a_source_route_to_the_last():
    opts, *_ = args("ping -c 1 10.0.0.1 10.0.0.2")
    assert (opts.hosts, opts.target) == (["10.0.0.1", "10.0.0.2"], "10.0.0.2")
