"""``traceroute``'s command line, pinned from traceroute 2.1.2 (Debian 12): clif's
clustering and argument rules, its error texts with the word's index, base-0 numbers and
main's range checks. test_mininet_icmp.py runs such lines on Mininet against the simulator."""
import pytest

from netarena_gym.routing.commands.traceroute_args import TRACEROUTE_USAGE, parse_traceroute


def resolve(host):
    return None if host[0].isdigit() else f"{host}: Name or service not known"


def parse(line: str):
    return parse_traceroute(line.split(" "), resolve)


@pytest.mark.parametrize("line, text", [
    ("traceroute -n -w 1 -m 0 1.2.3.4", "first hop out of range"),
    ("traceroute -n -f 2 -m 1 1.2.3.4", "first hop out of range"),
    ("traceroute -n -f 0 1.2.3.4", "first hop out of range"),
    ("traceroute -n -m 256 1.2.3.4", "max hops cannot be more than 255"),
    ("traceroute -n -q 0 1.2.3.4", "no more than 10 probes per hop"),
    ("traceroute -n -q 11 1.2.3.4", "no more than 10 probes per hop"),
    ("traceroute -n -w -1 1.2.3.4", "bad wait specifications `-1,0,0' used"),
    ("traceroute -n -w 1,-2 1.2.3.4", "bad wait specifications `1,-2,0' used"),
    ("traceroute -n -w 1 -m 2.5 1.2.3.4", "Cannot handle `-m' option with arg `2.5' (argc 5)"),
    ("traceroute -n -m 1 -q 2x 1.2.3.4", "Cannot handle `-q' option with arg `2x' (argc 5)"),
    ("traceroute -n -m 1 -w 1,2,3,4 1.2.3.4",
     "Cannot handle `-w' option with arg `1,2,3,4' (argc 5)"),
    ("traceroute -n -m 1 -m 1.2.3.4", "Cannot handle `-m' option with arg `1.2.3.4' (argc 5)"),
    ("traceroute -n -w 1 -m", "Option `-m' (argc 4) requires an argument: `-m max_ttl'"),
    ("traceroute -n --max-hops 2 1.2.3.4",
     "Option `--max-hops' (argc 2) requires an argument: `--max-hops=max_ttl'"),
    ("traceroute -m1 -x 1.2.3.4", "Bad option `-x' (argc 2)"),
    ("traceroute -n -m 1 --foo 1.2.3.4", "Bad option `--foo' (argc 4)"),
    ("traceroute -n -w 1 -m 2 nohost",
     "nohost: Name or service not known\nCannot handle \"host\" cmdline arg `nohost' on "
     "position 1 (argc 6)"),
    ("traceroute -n -w 1 1.2.3.4 abc",
     "Cannot handle \"packetlen\" cmdline arg `abc' on position 2 (argc 5)"),
    ("traceroute -n -m 2 1.2.3.4 28.5",
     "Cannot handle \"packetlen\" cmdline arg `28.5' on position 2 (argc 5)"),
    ("traceroute -n -w 1 -m 2 1.2.3.4 60 70", "Extra arg `70' (position 3, argc 8)"),
    ("traceroute -n -m 1 1.2.3.4 65536", "too big packetlen 65536 specified"),
    ("traceroute -n -w 1", "Specify \"host\" missing argument."),
    ("traceroute -n -w1 -q1 -m2 -s bogus 1.2.3.4",
     "bogus: Name or service not known\nCannot handle `-s' option with arg `bogus' (argc 6)"),
    ("traceroute -n -w1 -q1 -m2 -i", "Option `-i' (argc 5) requires an argument: `-i device'"),
])
def test_refused_lines_print_what_traceroute_prints(line, text):
    assert parse(line) == (None, text + "\n", 2)


def test_no_argument_prints_the_usage_and_exits_0():
    assert parse_traceroute(["traceroute"], resolve) == (None, TRACEROUTE_USAGE, 0)
    assert TRACEROUTE_USAGE.startswith("Usage:\n  traceroute [ -46dFITnreAUDV ] [ -f first_ttl ]")
    assert TRACEROUTE_USAGE.endswith("                    allowed value\n")


def test_clusters_attached_arguments_long_options_and_base_0_numbers():
    opts, text, status = parse("traceroute -nI -m0x5 -q 010 --wait=1,2 -f 2 1.2.3.4 27")
    assert (text, status) == ("", 0)
    assert (opts.numeric, opts.icmp, opts.max_hops, opts.queries, opts.wait, opts.first,
            opts.host) == (True, True, 5, 8, 1.0, 2, "1.2.3.4")
    assert opts.packetlen == 28  # raised to the headers' length
    opts, *_ = parse("traceroute --icmp --max-hops=3 -w1 1.2.3.4 1400")
    assert (opts.icmp, opts.max_hops, opts.wait, opts.packetlen) == (True, 3, 1.0, 1400)


def test_a_device_and_a_source_address():
    opts, text, status = parse("traceroute -n -ir0-eth1 --source=10.0.0.1 1.2.3.4")
    assert (text, status, opts.device, opts.source) == ("", 0, "r0-eth1", "10.0.0.1")
    opts, *_ = parse("traceroute --interface=lo -s 10.0.0.1 1.2.3.4")
    assert (opts.device, opts.source) == ("lo", "10.0.0.1")
