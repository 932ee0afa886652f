"""``iptables`` / ``iptables-save`` in the simulator (expected texts were captured from
iptables 1.8.9 nf_tables on Debian 12) and the packet ``verdict`` the forwarding engine uses."""
import shlex

import pytest

from netarena_gym.core.ipv4 import ip_to_int
from netarena_gym.shell.parser import ERROR, INVALID, OK
from netarena_gym.routing.commands import REGISTRY, CommandContext
from netarena_gym.routing.commands import iptables as ipt
from netarena_gym.routing.state import Iptables, IptRule
from netarena_gym.routing.topology import TopologySpec, build_network

TRY = "Try `iptables -h' or 'iptables --help' for more information.\n"
RULES = [
    "iptables -A INPUT -s 192.168.1.0/24 -j DROP",
    "iptables -A INPUT -s 10.0.0.1 -d 10.0.0.0/8 -p icmp --icmp-type echo-request -j REJECT",
    "iptables -A FORWARD ! -s 10.1.0.0/16 -i eth+ -o r0-eth1 -p tcp -j ACCEPT",
    "iptables -A FORWARD -p udp ! -d 1.2.3.4 -j REJECT --reject-with icmp-host-unreachable",
    "iptables -N MYCHAIN",
    "iptables -A MYCHAIN -p icmp -m icmp --icmp-type 8 -j RETURN",
    "iptables -A MYCHAIN -j DROP",
    "iptables -I FORWARD 1 -j MYCHAIN",
    "iptables -P OUTPUT DROP",
]
HDR = "target     prot opt source               destination         \n"
VHDR = (" pkts bytes target     prot opt in     out     source               destination"
        "         \n")


@pytest.fixture
def ctx():
    net, _ = build_network(TopologySpec(hosts=((1, 2),)))
    return CommandContext(net, net.nodes["r0"])


def run(ctx, line):
    argv = shlex.split(line)
    return REGISTRY[argv[0]](ctx, argv, "")


def ok(ctx, line):
    res = run(ctx, line)
    assert (res.status, res.kind) == (0, OK), res.output
    return res.output


def fails(ctx, line, output, status, kind):
    res = run(ctx, line)
    assert (res.output, res.status, res.kind) == (output, status, kind)


@pytest.fixture
def loaded(ctx):
    for line in RULES:
        assert ok(ctx, line) == ""
    return ctx


def test_pristine_listing(ctx):
    chains = [f"Chain {c} (policy ACCEPT)\n" + HDR for c in ("INPUT", "FORWARD", "OUTPUT")]
    assert ok(ctx, "iptables -L -n") == "\n".join(chains)
    assert ok(ctx, "iptables -S") == "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n"
    assert ok(ctx, "iptables-save") == ""  # nft creates the table on the first write


def test_list_names(loaded):
    assert ok(loaded, "iptables -L") == (
        "Chain INPUT (policy ACCEPT)\n" + HDR
        + "DROP       all  --  192.168.1.0/24       anywhere            \n"
        "REJECT     icmp --  10.0.0.1             10.0.0.0/8           icmp echo-request "
        "reject-with icmp-port-unreachable\n\n"
        "Chain FORWARD (policy ACCEPT)\n" + HDR
        + "MYCHAIN    all  --  anywhere             anywhere            \n"
        "ACCEPT     tcp  -- !10.1.0.0/16          anywhere            \n"
        "REJECT     udp  --  anywhere            !1.2.3.4              reject-with "
        "icmp-host-unreachable\n\n"
        "Chain OUTPUT (policy DROP)\n" + HDR + "\n"
        "Chain MYCHAIN (1 references)\n" + HDR
        + "RETURN     icmp --  anywhere             anywhere             icmp echo-request\n"
        "DROP       all  --  anywhere             anywhere            \n")


def test_list_numeric_prints_protocol_numbers(loaded):
    assert ok(loaded, "iptables -L -n") == (
        "Chain INPUT (policy ACCEPT)\n" + HDR
        + "DROP       0    --  192.168.1.0/24       0.0.0.0/0           \n"
        "REJECT     1    --  10.0.0.1             10.0.0.0/8           icmptype 8 "
        "reject-with icmp-port-unreachable\n\n"
        "Chain FORWARD (policy ACCEPT)\n" + HDR
        + "MYCHAIN    0    --  0.0.0.0/0            0.0.0.0/0           \n"
        "ACCEPT     6    -- !10.1.0.0/16          0.0.0.0/0           \n"
        "REJECT     17   --  0.0.0.0/0           !1.2.3.4              reject-with "
        "icmp-host-unreachable\n\n"
        "Chain OUTPUT (policy DROP)\n" + HDR + "\n"
        "Chain MYCHAIN (1 references)\n" + HDR
        + "RETURN     1    --  0.0.0.0/0            0.0.0.0/0            icmptype 8\n"
        "DROP       0    --  0.0.0.0/0            0.0.0.0/0           \n")


def test_list_verbose(loaded):
    out = ok(loaded, "iptables -L -n -v")
    assert out.startswith("Chain INPUT (policy ACCEPT 0 packets, 0 bytes)\n" + VHDR
                          + "    0     0 DROP       0    --  *      *       192.168.1.0/24"
                          "       0.0.0.0/0           \n")
    assert ("    0     0 ACCEPT     6    --  eth+   r0-eth1 !10.1.0.0/16          0.0.0.0/0"
            "           \n") in out
    assert "Chain OUTPUT (policy DROP 0 packets, 0 bytes)\n" in out
    assert "Chain MYCHAIN (1 references)\n" + VHDR in out


def test_list_one_chain_exact_line_numbers(loaded):
    assert ok(loaded, "iptables -L FORWARD -n -v -x --line-numbers") == (
        "Chain FORWARD (policy ACCEPT 0 packets, 0 bytes)\n"
        "num      pkts      bytes target     prot opt in     out     source               "
        "destination         \n"
        "1           0        0 MYCHAIN    0    --  *      *       0.0.0.0/0            "
        "0.0.0.0/0           \n"
        "2           0        0 ACCEPT     6    --  eth+   r0-eth1 !10.1.0.0/16          "
        "0.0.0.0/0           \n"
        "3           0        0 REJECT     17   --  *      *       0.0.0.0/0           !1.2.3.4"
        "              reject-with icmp-host-unreachable\n")
    assert ok(loaded, "iptables -L FORWARD 2 -n") == (
        "ACCEPT     6    -- !10.1.0.0/16          0.0.0.0/0           \n")
    assert ok(loaded, "iptables -L FORWARD 9") == ""


def test_list_rules_and_save(loaded):
    rules = (
        "-A INPUT -s 192.168.1.0/24 -j DROP\n"
        "-A INPUT -s 10.0.0.1/32 -d 10.0.0.0/8 -p icmp -m icmp --icmp-type 8 -j REJECT "
        "--reject-with icmp-port-unreachable\n"
        "-A FORWARD -j MYCHAIN\n"
        "-A FORWARD ! -s 10.1.0.0/16 -i eth+ -o r0-eth1 -p tcp -j ACCEPT\n"
        "-A FORWARD ! -d 1.2.3.4/32 -p udp -j REJECT --reject-with icmp-host-unreachable\n"
        "-A MYCHAIN -p icmp -m icmp --icmp-type 8 -j RETURN\n"
        "-A MYCHAIN -j DROP\n")
    assert ok(loaded, "iptables -S") == (
        "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT DROP\n-N MYCHAIN\n" + rules)
    assert ok(loaded, "iptables -S MYCHAIN") == "-N MYCHAIN\n" + rules.split("\n", 5)[5]
    date = ipt.SAVE_DATE
    assert ok(loaded, "iptables-save") == (
        f"# Generated by iptables-save v1.8.9 (nf_tables) on {date}\n*filter\n"
        ":INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT DROP [0:0]\n:MYCHAIN - [0:0]\n"
        + rules + f"COMMIT\n# Completed on {date}\n")
    assert ok(loaded, "iptables-save -c").count("[0:0] -A ") == 7


def test_insert_delete_replace_by_number_and_spec(ctx):
    ok(ctx, "iptables -A INPUT -s 1.1.1.1 -j DROP")
    ok(ctx, "iptables -A INPUT -s 2.2.2.2 -j DROP")
    ok(ctx, "iptables -I INPUT 2 -s 3.3.3.3 -j ACCEPT")
    ok(ctx, "iptables -I INPUT -p icmp -j ACCEPT")
    assert ok(ctx, "iptables -S INPUT") == (
        "-P INPUT ACCEPT\n-A INPUT -p icmp -j ACCEPT\n-A INPUT -s 1.1.1.1/32 -j DROP\n"
        "-A INPUT -s 3.3.3.3/32 -j ACCEPT\n-A INPUT -s 2.2.2.2/32 -j DROP\n")
    ok(ctx, "iptables -D INPUT 1")
    ok(ctx, "iptables -D INPUT -j DROP -s 2.2.2.2/32")  # option order does not matter
    ok(ctx, "iptables -R INPUT 2 -s 4.4.4.4 -j REJECT")
    assert ok(ctx, "iptables -S INPUT") == (
        "-P INPUT ACCEPT\n-A INPUT -s 1.1.1.1/32 -j DROP\n"
        "-A INPUT -s 4.4.4.4/32 -j REJECT --reject-with icmp-port-unreachable\n")
    ok(ctx, "iptables -C INPUT -s 1.1.1.1/32 -j DROP")
    bad = "iptables: Bad rule (does a matching rule exist in that chain?).\n"
    fails(ctx, "iptables -C INPUT -s 1.1.1.1 -j ACCEPT", bad, 1, ERROR)
    fails(ctx, "iptables -D INPUT -s 9.9.9.9 -j DROP", bad, 1, ERROR)
    fails(ctx, "iptables -D INPUT 5", "iptables: Index of deletion too big.\n", 1, ERROR)
    fails(ctx, "iptables -R INPUT 3 -j DROP", "iptables: Index of replacement too big.\n",
          1, ERROR)
    fails(ctx, "iptables -I INPUT 4 -j DROP", "iptables: Index of insertion too big.\n",
          1, ERROR)
    # real (iptables 1.8.9 nf_tables, Linux 6.18): an empty chain's rule 1 is past its end
    fails(ctx, "iptables -D FORWARD 1", "iptables: Index of deletion too big.\n", 1, ERROR)
    fails(ctx, "iptables -I INPUT 0 -j DROP",
          f"iptables v1.8.9 (nf_tables): Invalid rule number `0'\n{TRY}", 2, INVALID)


def test_multiple_addresses_make_multiple_rules(ctx):
    ok(ctx, "iptables -A FORWARD -s 1.1.1.1,2.2.2.0/24 -d 3.3.3.3 -j DROP")
    assert ok(ctx, "iptables -S FORWARD") == (
        "-P FORWARD ACCEPT\n-A FORWARD -s 1.1.1.1/32 -d 3.3.3.3/32 -j DROP\n"
        "-A FORWARD -s 2.2.2.0/24 -d 3.3.3.3/32 -j DROP\n")
    assert ok(ctx, "iptables -v -I FORWARD -s 5.5.5.5,6.6.6.6 -j ACCEPT") == (
        "ACCEPT  all opt -- in * out *  5.5.5.5  -> 0.0.0.0/0  \n"
        "ACCEPT  all opt -- in * out *  6.6.6.6  -> 0.0.0.0/0  \n")
    assert ok(ctx, "iptables -S FORWARD 1") == "-A FORWARD -s 6.6.6.6/32 -j ACCEPT\n"


def test_policy_flush_and_state_changes_touch_the_node(ctx):
    node = ctx.node
    v = node.version
    ok(ctx, "iptables -P FORWARD ACCEPT")
    assert node.version == v  # nothing changed
    ok(ctx, "iptables -P FORWARD DROP")
    assert node.iptables.policies["FORWARD"] == "DROP" and node.version > v
    fails(ctx, "iptables -P FORWARD REJECT",
          "iptables: Bad policy name. Run `dmesg' for more information.\n", 1, ERROR)
    fails(ctx, "iptables -P NOPE DROP", "iptables: Bad built-in chain name.\n", 1, ERROR)
    ok(ctx, "iptables -A INPUT -j DROP")
    v = node.version
    assert ok(ctx, "iptables -v -F") == ("Flushing chain `INPUT'\nFlushing chain `FORWARD'\n"
                                         "Flushing chain `OUTPUT'\n")
    assert node.iptables.chains["INPUT"] == [] and node.version > v
    assert node.iptables.policies["FORWARD"] == "DROP"  # -F keeps policies


def test_user_chains(ctx):
    ok(ctx, "iptables -N ZED")
    ok(ctx, "iptables -N ALPHA")
    ok(ctx, "iptables -A INPUT -j ZED")
    ok(ctx, "iptables -A ZED -j ALPHA")
    assert ok(ctx, "iptables -S").splitlines()[3:5] == ["-N ALPHA", "-N ZED"]  # sorted
    assert "Chain ALPHA (1 references)\n" in ok(ctx, "iptables -L")
    fails(ctx, "iptables -N ZED", "iptables: Chain already exists.\n", 1, ERROR)
    fails(ctx, "iptables -N ACCEPT",
          f"iptables v1.8.9 (nf_tables): chain name may not clash with target name\n{TRY}",
          2, INVALID)
    busy = "iptables v1.8.9 (nf_tables):  CHAIN_DEL failed (Device or resource busy): chain ZED\n"
    fails(ctx, "iptables -X ZED", busy, 4, ERROR)
    fails(ctx, "iptables -X", busy, 4, ERROR)  # nothing is deleted
    fails(ctx, "iptables -A ALPHA -j ZED",
          "iptables v1.8.9 (nf_tables):  RULE_APPEND failed (Too many links): rule in chain "
          "ALPHA\n", 4, ERROR)
    fails(ctx, "iptables -A INPUT -j NOPE",
          f"iptables v1.8.9 (nf_tables): Chain 'NOPE' does not exist\n{TRY}", 2, INVALID)
    ok(ctx, "iptables -E ALPHA BETA")
    assert ok(ctx, "iptables -S ZED") == "-N ZED\n-A ZED -j BETA\n"
    ok(ctx, "iptables -F")
    ok(ctx, "iptables -X")
    assert set(ctx.node.iptables.chains) == {"INPUT", "FORWARD", "OUTPUT"}


def test_unknown_chain_and_option_errors(ctx):
    fails(ctx, "iptables -L NOPE", "iptables v1.8.9 (nf_tables): chain `NOPE' in table `filter'"
          " is incompatible, use 'nft' tool.\n", 1, ERROR)
    fails(ctx, "iptables -A NOPE -j DROP", "iptables: No chain/target/match by that name.\n",
          1, ERROR)
    fails(ctx, "iptables -F NOPE", "iptables: No chain/target/match by that name.\n", 1, ERROR)
    fails(ctx, "iptables --foo", f'iptables v1.8.9 (nf_tables): unknown option "--foo"\n{TRY}',
          2, INVALID)
    fails(ctx, "iptables -A INPUT -j", 'iptables v1.8.9 (nf_tables): option "-j" requires an '
          f"argument\n{TRY}", 2, INVALID)
    fails(ctx, "iptables", f"iptables v1.8.9 (nf_tables): no command specified\n{TRY}",
          2, INVALID)
    fails(ctx, "iptables -L -n INPUT", f"Bad argument `INPUT'\n{TRY}", 2, INVALID)
    fails(ctx, "iptables -A INPUT -s 1.1.1.1 -n", "iptables v1.8.9 (nf_tables): Illegal option "
          f"`-n' with this command\n{TRY}", 2, INVALID)
    fails(ctx, "iptables -A INPUT -o lo", "iptables v1.8.9 (nf_tables): Can't use -o with "
          f"INPUT\n\n{TRY}", 2, INVALID)
    fails(ctx, "iptables -A INPUT -s 1.2.3.400 -j DROP", "iptables v1.8.9 (nf_tables): "
          f"host/network `1.2.3.400' not found\n{TRY}", 2, INVALID)
    fails(ctx, "iptables -A INPUT -p icmp --icmp-type foo -j DROP", "iptables v1.8.9 "
          f"(nf_tables): Unknown ICMP type `foo'\n{TRY}", 2, INVALID)
    fails(ctx, "iptables -A INPUT --icmp-type 8 -j DROP", "iptables v1.8.9 (nf_tables): unknown"
          f' option "--icmp-type"\n{TRY}', 2, INVALID)
    fails(ctx, "iptables -A INPUT -j REJECT --reject-with tcp-reset", "iptables v1.8.9 "
          "(nf_tables):  RULE_APPEND failed (Invalid argument): rule in chain INPUT\n", 4, ERROR)
    assert ctx.node.iptables.chains["INPUT"] == []


def test_unsupported_extensions_are_refused_like_missing_ones(ctx):
    fails(ctx, "iptables -A FORWARD -m state --state ESTABLISHED -j ACCEPT",
          "iptables v1.8.9 (nf_tables): Couldn't load match `state':No such file or directory"
          f"\n\n{TRY}", 2, INVALID)
    assert run(ctx, "iptables -A INPUT -p tcp --dport 22 -j ACCEPT").kind == INVALID
    assert run(ctx, "iptables -A INPUT -j LOG").kind == INVALID


def test_other_tables(ctx):
    assert ok(ctx, "iptables -t raw -L -n") == (
        "Chain PREROUTING (policy ACCEPT)\n" + HDR + "\nChain OUTPUT (policy ACCEPT)\n" + HDR)
    assert ok(ctx, "iptables -t nat -S").startswith("-P PREROUTING ACCEPT\n")
    assert run(ctx, "iptables -t nat -A POSTROUTING -j MASQUERADE").status == 3
    fails(ctx, "iptables -t foo -L", "iptables v1.8.9 (nf_tables): table 'foo' does not exist\n"
          "Perhaps iptables or your kernel needs to be upgraded.\n", 3, INVALID)


def test_counters_in_verbose_listing(ctx):
    ok(ctx, "iptables -A INPUT -c 123456 98765432 -j ACCEPT")
    assert ok(ctx, "iptables -L INPUT -v").splitlines()[2] == (
        " 123K   99M ACCEPT     all  --  any    any     anywhere             anywhere            ")
    ok(ctx, "iptables -Z")
    assert ctx.node.iptables.chains["INPUT"][0].pkts == 0


# ------------------------------------------------------------------------------ verdict
A = ip_to_int


def test_verdict_policy_and_terminal_targets(ctx):
    ok(ctx, "iptables -A FORWARD -s 10.0.0.0/8 -p icmp -j DROP")
    ok(ctx, "iptables -A FORWARD -d 192.168.2.0/24 -j REJECT --reject-with icmp-host-prohibited")
    ok(ctx, "iptables -P FORWARD DROP")
    ok(ctx, "iptables -A FORWARD -i r0-eth1 -j ACCEPT")
    t = ctx.node.iptables
    assert ipt.verdict(t, "FORWARD", A("10.1.2.3"), A("8.8.8.8"), "icmp", "r0-eth1", "r0-eth2",
                       "echo-request") == ("DROP", None)
    assert ipt.verdict(t, "FORWARD", A("10.1.2.3"), A("8.8.8.8"), "tcp", "r0-eth1", "r0-eth2",
                       None) == ("ACCEPT", None)
    assert ipt.verdict(t, "FORWARD", A("1.1.1.1"), A("192.168.2.7"), "icmp", "r0-eth1",
                       "r0-eth2", "8") == ("REJECT", "icmp-host-prohibited")
    assert ipt.verdict(t, "FORWARD", A("1.1.1.1"), A("8.8.8.8"), "udp", "r0-eth2", "r0-eth1",
                       None) == ("DROP", None)  # policy
    assert ipt.verdict(t, "INPUT", 1, 2, "icmp", "lo", None, None) == ("ACCEPT", None)


def test_verdict_negations_wildcards_and_icmp_types(ctx):
    ok(ctx, "iptables -A INPUT ! -s 192.168.0.0/16 -j DROP")
    ok(ctx, "iptables -A INPUT -i r0-eth+ -p icmp ! --icmp-type echo-request -j REJECT")
    ok(ctx, "iptables -A INPUT ! -i r0-eth1 -p icmp --icmp-type 3/1 -j DROP")
    ok(ctx, "iptables -A INPUT ! -p icmp -j REJECT --reject-with icmp-port-unreachable")
    t = ctx.node.iptables
    lan = A("192.168.1.100")

    def v(src, proto, iif, icmp):
        return ipt.verdict(t, "INPUT", src, A("192.168.1.1"), proto, iif, None, icmp)

    assert v(A("10.0.0.1"), "icmp", "r0-eth1", "echo-request") == ("DROP", None)
    assert v(lan, "icmp", "r0-eth1", "echo-request") == ("ACCEPT", None)
    assert v(lan, "icmp", "r0-eth2", "echo-reply") == ("REJECT", "icmp-port-unreachable")
    assert v(lan, "icmp", "lo", "host-unreachable") == ("DROP", None)
    assert v(lan, "icmp", "lo", "3/3") == ("ACCEPT", None)
    assert v(lan, "tcp", "r0-eth1", None) == ("REJECT", "icmp-port-unreachable")


def test_verdict_user_chains_and_return(ctx):
    for line in ("iptables -N FILTER", "iptables -N DEEP",
                 "iptables -A FORWARD -j FILTER", "iptables -A FORWARD -s 10.0.0.9 -j ACCEPT",
                 "iptables -A FORWARD -j DROP", "iptables -A FILTER -s 10.0.0.1 -j RETURN",
                 "iptables -A FILTER -j DEEP", "iptables -A DEEP -s 10.0.0.2 -j ACCEPT",
                 "iptables -A DEEP -s 10.0.0.3 -j REJECT"):
        ok(ctx, line)
    t = ctx.node.iptables

    def v(src):
        return ipt.verdict(t, "FORWARD", A(src), A("1.1.1.1"), "icmp", "a", "b", None)

    assert v("10.0.0.1") == ("DROP", None)  # RETURN, then FORWARD's final DROP
    assert v("10.0.0.2") == ("ACCEPT", None)
    assert v("10.0.0.3") == ("REJECT", "icmp-port-unreachable")
    assert v("10.0.0.9") == ("ACCEPT", None)  # fell out of the user chains


def test_verdict_on_rules_built_directly():
    """Fault injectors build ``IptRule`` objects by hand, with icmp names and plain numbers."""
    t = Iptables()
    t.chains["FORWARD"] = [IptRule("DROP", proto="icmp", icmp_type="echo-request"),
                           IptRule("DROP", proto="1", out_if="eth+", out_neg=True)]
    assert ipt.verdict(t, "FORWARD", 1, 2, "icmp", "x", "eth0", "echo-request") == ("DROP", None)
    assert ipt.verdict(t, "FORWARD", 1, 2, "icmp", "x", "eth0", "echo-reply") == ("ACCEPT", None)
    assert ipt.verdict(t, "FORWARD", 1, 2, "icmp", "x", "wan0", "echo-reply") == ("DROP", None)
    assert ipt.verdict(t, "NOPE", 1, 2, "tcp", None, None, None) == ("ACCEPT", None)


def test_verdict_survives_a_loop_built_by_hand():
    t = Iptables()
    t.chains["A"] = [IptRule("A")]
    t.chains["INPUT"] = [IptRule("A")]
    assert ipt.verdict(t, "INPUT", 1, 2, "icmp", None, None, None) == ("ACCEPT", None)
