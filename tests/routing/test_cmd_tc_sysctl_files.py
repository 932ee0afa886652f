"""``tc qdisc``, ``sysctl``, ``cat``/``echo``/redirects and the pipe filters in the simulator.
Expected texts follow iproute2 6.1 / procps-ng 4.0.2 / coreutils on Debian 12."""
import shlex

import pytest

from netarena_gym.shell.parser import ERROR, INVALID, OK
from netarena_gym.routing.commands import (  # noqa: F401
    REGISTRY,
    CommandContext,
    files,
    sysctl,
    tc,
)
from netarena_gym.routing.state import Qdisc
from netarena_gym.routing.topology import TopologySpec, build_network


@pytest.fixture
def ctx():
    net, _ = build_network(TopologySpec(hosts=((1, 2),)))
    return CommandContext(net, net.nodes["r0"])


def run(ctx, line, stdin=""):
    argv = shlex.split(line)
    return REGISTRY[argv[0]](ctx, argv, stdin)


def ok(ctx, line, stdin=""):
    res = run(ctx, line, stdin)
    assert (res.status, res.kind) == (0, OK), res.output
    return res.output


def fails(ctx, line, output, status, kind):
    res = run(ctx, line)
    assert (res.output, res.status, res.kind) == (output, status, kind)


def eth1(ctx):
    return ctx.node.interfaces["r0-eth1"]


# ---------------------------------------------------------------------------------- tc
DEFAULT = ("qdisc noqueue 0: dev lo root refcnt 2 \n"
           "qdisc noqueue 0: dev r0-eth1 root refcnt 2 \n"
           "qdisc noqueue 0: dev r0-eth2 root refcnt 2 \n")


def test_tc_default_qdiscs(ctx):
    assert ok(ctx, "tc qdisc show") == DEFAULT
    assert ok(ctx, "tc qdisc") == DEFAULT
    assert ok(ctx, "tc qdisc ls dev r0-eth1") == "qdisc noqueue 0: root refcnt 2 \n"
    assert ok(ctx, "tc -s qdisc show dev lo") == (
        "qdisc noqueue 0: root refcnt 2 \n"
        " Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n"
        " backlog 0b 0p requeues 0\n")
    fails(ctx, "tc qdisc show dev nope", 'Cannot find device "nope"\n', 1, ERROR)


@pytest.mark.parametrize("opts, shown", [
    ("delay 2s", "limit 1000 delay 2s"),
    ("delay 100ms 10ms", "limit 1000 delay 100ms  10ms"),
    ("delay 2.5ms", "limit 1000 delay 2.5ms"),
    ("delay 1500ms", "limit 1000 delay 1.5s"),
    ("delay 1234ms", "limit 1000 delay 1.23s"),
    ("delay 500us", "limit 1000 delay 499us"),  # 7812.5 psched ticks, truncated twice
    ("loss 50%", "limit 1000 loss 50%"),
    ("loss random 0.1%", "limit 1000 loss 0.1%"),
    ("corrupt 5% duplicate 1%", "limit 1000 duplicate 1% corrupt 5%"),
    ("limit 50 delay 10ms loss 1% 25%", "limit 50 delay 10ms loss 1%"),
])
def test_tc_netem_show(ctx, opts, shown):
    ok(ctx, f"tc qdisc add dev r0-eth1 root netem {opts}")
    assert ok(ctx, "tc qdisc show dev r0-eth1") == f"qdisc netem 8001: root refcnt 2 {shown}\n"


def test_tc_netem_is_stored_in_the_model(ctx):
    v = ctx.node.version
    ok(ctx, "tc qdisc add dev r0-eth1 root netem delay 2s 100ms loss 10% corrupt 1%")
    q = eth1(ctx).qdisc
    assert (q.kind, q.handle, q.delay_ms, q.jitter_ms, q.loss_pct, q.corrupt_pct, q.limit) == (
        "netem", "8001:", 2000.0, 100.0, 10.0, 1.0, 1000)
    assert ctx.node.version > v
    assert ok(ctx, "tc qdisc show").splitlines()[1] == (
        "qdisc netem 8001: dev r0-eth1 root refcnt 2 limit 1000 delay 2s  100ms loss 10% "
        "corrupt 1%")


def test_tc_add_replace_change_del(ctx):
    ok(ctx, "tc qdisc add dev r0-eth1 root netem delay 100ms")
    fails(ctx, "tc qdisc add dev r0-eth1 root netem delay 200ms",
          "Error: Exclusivity flag on, cannot modify.\n", 2, ERROR)
    fails(ctx, "tc qdisc add dev r0-eth1 root tbf rate 1mbit burst 4kb latency 400ms",
          "Error: Exclusivity flag on, cannot modify.\n", 2, ERROR)
    ok(ctx, "tc qdisc change dev r0-eth1 root netem loss 5%")  # netem change resets the rest
    assert ok(ctx, "tc qdisc show dev r0-eth1") == (
        "qdisc netem 8001: root refcnt 2 limit 1000 loss 5%\n")
    fails(ctx, "tc qdisc change dev r0-eth1 root pfifo", "Error: Invalid qdisc name.\n", 2, ERROR)
    ok(ctx, "tc qdisc replace dev r0-eth1 root netem delay 1s")  # same kind: changed in place
    assert eth1(ctx).qdisc.handle == "8001:"
    ok(ctx, "tc qdisc replace dev r0-eth1 root tbf rate 1mbit burst 4kb latency 400ms")
    assert ok(ctx, "tc qdisc show dev r0-eth1") == (
        "qdisc tbf 8002: root refcnt 2 rate 1Mbit burst 4Kb lat 400ms \n")
    assert ok(ctx, "tc class show dev r0-eth1") == "class tbf 8002:1 parent 8002: \n"
    ok(ctx, "tc qdisc del dev r0-eth1 root")
    assert eth1(ctx).qdisc is None
    fails(ctx, "tc qdisc del dev r0-eth1 root", "Error: Cannot delete qdisc with handle of zero.\n",
          2, ERROR)
    fails(ctx, "tc qdisc change dev r0-eth1 root pfifo limit 10",
          "Error: Qdisc not found. To create specify NLM_F_CREATE flag.\n", 2, ERROR)
    ok(ctx, "tc qdisc add dev r0-eth1 root handle 5: pfifo")
    fails(ctx, "tc qdisc add dev r0-eth1 root handle 10: pfifo",
          "Error: NLM_F_REPLACE needed to override.\n", 2, ERROR)
    fails(ctx, "tc qdisc del dev r0-eth1 root handle 6:", "Error: Invalid handle.\n", 2, ERROR)
    ok(ctx, "tc qdisc change dev r0-eth1 root pfifo limit 7")
    ok(ctx, "tc qdisc change dev r0-eth1 root pfifo")  # no limit given: kept
    assert ok(ctx, "tc qdisc show dev r0-eth1") == "qdisc pfifo 5: root refcnt 2 limit 7p\n"


@pytest.mark.parametrize("opts, shown", [  # captured from tc 6.1
    ("rate 10mbit burst 10kb latency 50ms", "rate 10Mbit burst 10Kb lat 50ms "),
    ("rate 256kbit burst 1600 limit 3000", "rate 256Kbit burst 1600b lat 43.8ms "),
    ("rate 1gbit burst 100kb latency 1ms", "rate 1Gbit burst 102375b lat 1ms "),
    ("rate 12345bit burst 1540 latency 70ms", "rate 12344bit burst 1539b lat 70ms "),
    ("rate 1.5mbit burst 2k latency 10ms", "rate 1500Kbit burst 2Kb lat 10ms "),
    ("rate 800kbit burst 1k limit 1k", "rate 800Kbit burst 1Kb lat 0us "),
    ("rate 100mbit burst 1m latency 1234ms", "rate 100Mbit burst 1024Kb lat 1.23s "),
    ("rate 1mibit burst 3kb latency 0.5ms", "rate 1048Kbit burst 3Kb lat 496us "),
])
def test_tc_tbf_show(ctx, opts, shown):
    ok(ctx, f"tc qdisc add dev r0-eth2 root tbf {opts}")
    assert ok(ctx, "tc qdisc show dev r0-eth2") == f"qdisc tbf 8001: root refcnt 2 {shown}\n"


def test_tc_other_kinds(ctx):
    ok(ctx, "tc qdisc add dev r0-eth1 root pfifo_fast")
    ok(ctx, "tc qdisc add dev r0-eth2 root bfifo")
    ok(ctx, "tc qdisc add dev lo root fq_codel")
    assert ok(ctx, "tc qdisc show") == (
        "qdisc fq_codel 8003: dev lo root refcnt 2 limit 10240p flows 1024 quantum 65550 "
        "target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 \n"
        "qdisc pfifo_fast 8001: dev r0-eth1 root refcnt 2 bands 3 priomap 1 2 2 2 1 2 0 0 1 1 "
        "1 1 1 1 1 1\n"
        "qdisc bfifo 8002: dev r0-eth2 root refcnt 2 limit 1514000b\n")
    assert ok(ctx, "tc -s qdisc show dev lo").endswith(
        "  maxpacket 0 drop_overlimit 0 new_flow_count 0 ecn_mark 0\n"
        "  new_flows_len 0 old_flows_len 0\n")


def test_tc_errors(ctx):
    fails(ctx, "tc qdisc add dev nope root pfifo", 'Cannot find device "nope"\n', 1, ERROR)
    fails(ctx, "tc qdisc add dev r0-eth1 root foo", "Error: Specified qdisc kind is unknown.\n",
          2, ERROR)
    fails(ctx, "tc qdisc add dev r0-eth1 root foo bar",
          'Unknown qdisc "foo", hence option "bar" is unparsable\n', 1, INVALID)
    fails(ctx, "tc qdisc add dev r0-eth1 root netem delay 10xs", 'Illegal "latency"\n', 1, INVALID)
    fails(ctx, "tc qdisc add dev r0-eth1 root netem loss 150%", 'Illegal "loss percent"\n', 1,
          INVALID)
    fails(ctx, "tc qdisc add dev r0-eth1 root pfifo limit",
          'Command line is not complete. Try option "help"\n', 255, INVALID)
    assert run(ctx, "tc qdisc add dev r0-eth1 root tbf rate 1mbit").output == (
        'tbf: the "burst" parameter is mandatory.\n'
        'tbf: either "limit" or "latency" is required.\n'
        "Usage: ... tbf limit BYTES burst BYTES[/BYTES] rate KBPS [ mtu BYTES[/BYTES] ]\n"
        "\t[ peakrate KBPS ] [ latency TIME ] [ overhead BYTES ] [ linklayer TYPE ]\n")
    fails(ctx, "tc qdisc foo", 'Command "foo" is unknown, try "tc qdisc help".\n', 255, INVALID)
    fails(ctx, "tc foo", 'Object "foo" is unknown, try "tc help".\n', 255, INVALID)
    fails(ctx, "tc -x qdisc", 'Option "-x" is unknown, try "tc -help".\n', 255, INVALID)
    assert all(i.qdisc is None for i in ctx.node.interfaces.values())


def test_tc_netem_capability_switch(ctx):
    ctx.capabilities = frozenset()  # a backend whose kernel lacks sch_netem
    fails(ctx, "tc qdisc add dev r0-eth1 root netem delay 100ms",
          "Error: Specified qdisc kind is unknown.\n", 2, ERROR)
    assert eth1(ctx).qdisc is None
    ok(ctx, "tc qdisc add dev r0-eth1 root tbf rate 1mbit burst 4kb latency 10ms")
    ctx.capabilities = {"netem"}
    ok(ctx, "tc qdisc replace dev r0-eth1 root netem delay 100ms")


def test_tc_handles_count_per_node(ctx):
    for _ in range(3):
        ok(ctx, "tc qdisc replace dev r0-eth1 root pfifo")
        ok(ctx, "tc qdisc del dev r0-eth1 root")
    ok(ctx, "tc qdisc add dev r0-eth2 root pfifo")
    assert ctx.node.interfaces["r0-eth2"].qdisc.handle == "8004:"


def test_tc_show_of_a_model_qdisc():
    itf = build_network(TopologySpec(hosts=((1,),)))[0].nodes["r0"].interfaces["r0-eth1"]
    itf.qdisc = Qdisc("netem", handle="8003:", delay_ms=50, loss_pct=2.5)
    assert tc.format_qdisc(itf) == (
        "qdisc netem 8003: dev r0-eth1 root refcnt 2 limit 1000 delay 50ms loss 2.5%\n")


# ------------------------------------------------------------------------------ sysctl
def test_sysctl_read_write_alias(ctx):
    node = ctx.node
    assert ok(ctx, "sysctl net.ipv4.ip_forward") == "net.ipv4.ip_forward = 1\n"
    assert ok(ctx, "sysctl -n net/ipv4/ip_forward") == "1\n"
    assert ok(ctx, "sysctl -w net.ipv4.conf.all.forwarding=0") == (
        "net.ipv4.conf.all.forwarding = 0\n")
    assert node.sysctl["net.ipv4.ip_forward"] == "0" and not node.ip_forward
    assert ok(ctx, "sysctl net.ipv4.ip_forward=1") == "net.ipv4.ip_forward = 1\n"
    assert ok(ctx, "sysctl net.ipv4.conf.all.forwarding") == "net.ipv4.conf.all.forwarding = 1\n"
    assert ok(ctx, "sysctl -w net.ipv4.ip_forward=2") == "net.ipv4.ip_forward = 2\n"
    # Linux stores any integer and reads it back; non-zero is on, for every device too
    assert node.sysctl["net.ipv4.ip_forward"] == "2" and node.ip_forward
    assert ok(ctx, "sysctl -w net.ipv4.ip_forward=-3") == "net.ipv4.ip_forward = -3\n"
    assert ok(ctx, "cat /proc/sys/net/ipv4/ip_forward") == "-3\n"
    assert ok(ctx, "sysctl -n net.ipv4.conf.r0-eth1.forwarding") == "-3\n"
    assert node.ip_forward and node.forwards_on("r0-eth1")
    assert ok(ctx, "sysctl -q -w net.ipv4.ip_forward=0x1") == ""
    assert ok(ctx, "sysctl -n net.ipv4.ip_forward") == "1\n"
    v = node.version
    assert ok(ctx, "sysctl -q -w net.ipv4.ip_forward=0x1") == ""
    assert node.version == v  # unchanged value: no touch
    listing = ok(ctx, "sysctl -a").splitlines()
    assert len(listing) == 33 * 5 + 2  # all, default, lo, r0-eth1, r0-eth2; two globals
    assert listing[-2:] == ["net.ipv4.icmp_echo_ignore_all = 0", "net.ipv4.ip_forward = 1"]
    assert ok(ctx, "sysctl -a -r 'conf.(all|r0-eth2).forwarding|ip_forward' -N") == (
        "net.ipv4.conf.all.forwarding\nnet.ipv4.conf.r0-eth2.forwarding\nnet.ipv4.ip_forward\n")
    assert ok(ctx, "sysctl net.ipv4.conf").splitlines() == listing[:-2]


# `sysctl net.ipv4.conf.v1` in a new namespace (Linux 6.x, procps-ng 4.0.2), v1 renamed
REAL_CONF_DEVICE = """\
net.ipv4.conf.r0-eth1.accept_local = 0
net.ipv4.conf.r0-eth1.accept_redirects = 1
net.ipv4.conf.r0-eth1.accept_source_route = 1
net.ipv4.conf.r0-eth1.arp_accept = 0
net.ipv4.conf.r0-eth1.arp_announce = 0
net.ipv4.conf.r0-eth1.arp_evict_nocarrier = 1
net.ipv4.conf.r0-eth1.arp_filter = 0
net.ipv4.conf.r0-eth1.arp_ignore = 0
net.ipv4.conf.r0-eth1.arp_notify = 0
net.ipv4.conf.r0-eth1.bc_forwarding = 0
net.ipv4.conf.r0-eth1.bootp_relay = 0
net.ipv4.conf.r0-eth1.disable_policy = 0
net.ipv4.conf.r0-eth1.disable_xfrm = 0
net.ipv4.conf.r0-eth1.drop_gratuitous_arp = 0
net.ipv4.conf.r0-eth1.drop_unicast_in_l2_multicast = 0
net.ipv4.conf.r0-eth1.force_igmp_version = 0
net.ipv4.conf.r0-eth1.forwarding = 1
net.ipv4.conf.r0-eth1.igmpv2_unsolicited_report_interval = 10000
net.ipv4.conf.r0-eth1.igmpv3_unsolicited_report_interval = 1000
net.ipv4.conf.r0-eth1.ignore_routes_with_linkdown = 0
net.ipv4.conf.r0-eth1.log_martians = 0
net.ipv4.conf.r0-eth1.mc_forwarding = 0
net.ipv4.conf.r0-eth1.medium_id = 0
net.ipv4.conf.r0-eth1.promote_secondaries = 0
net.ipv4.conf.r0-eth1.proxy_arp = 0
net.ipv4.conf.r0-eth1.proxy_arp_pvlan = 0
net.ipv4.conf.r0-eth1.route_localnet = 0
net.ipv4.conf.r0-eth1.rp_filter = 0
net.ipv4.conf.r0-eth1.secure_redirects = 1
net.ipv4.conf.r0-eth1.send_redirects = 1
net.ipv4.conf.r0-eth1.shared_media = 1
net.ipv4.conf.r0-eth1.src_valid_mark = 0
net.ipv4.conf.r0-eth1.tag = 0
"""


def test_sysctl_per_device_keys(ctx):
    node = ctx.node
    assert ok(ctx, "sysctl net.ipv4.conf.r0-eth1") == REAL_CONF_DEVICE
    assert ok(ctx, "sysctl net.ipv4.conf.all.accept_source_route "
                   "net.ipv4.conf.lo.disable_xfrm net.ipv4.conf.default.forwarding") == (
        "net.ipv4.conf.all.accept_source_route = 0\nnet.ipv4.conf.lo.disable_xfrm = 1\n"
        "net.ipv4.conf.default.forwarding = 1\n")
    assert ok(ctx, "cat /proc/sys/net/ipv4/conf/r0-eth2/forwarding") == "1\n"
    # a device's own value, stored as written; ip_forward is unchanged
    assert ok(ctx, "sysctl -w net.ipv4.conf.r0-eth1.forwarding=0x10") == (
        "net.ipv4.conf.r0-eth1.forwarding = 0x10\n")
    assert ok(ctx, "sysctl -n net.ipv4.conf.r0-eth1.forwarding net.ipv4.ip_forward") == "16\n1\n"
    assert files.write_redirect(ctx, "/proc/sys/net/ipv4/conf/r0-eth1/forwarding", "0\n",
                                False).status == 0
    assert not node.forwards_on("r0-eth1") and node.forwards_on("r0-eth2") and node.ip_forward
    # writing ip_forward (or all.forwarding) sets every device's and default's
    assert ok(ctx, "sysctl -w net.ipv4.conf.all.forwarding=0") == (
        "net.ipv4.conf.all.forwarding = 0\n")
    assert ok(ctx, "sysctl -w net.ipv4.ip_forward=1") == "net.ipv4.ip_forward = 1\n"
    assert ok(ctx, "sysctl -n net.ipv4.conf.r0-eth1.forwarding net.ipv4.conf.default.forwarding"
              ) == "1\n1\n"
    # other keys take any int (proc_dointvec) and are stored
    assert ok(ctx, "sysctl -w net.ipv4.conf.r0-eth1.tag=-5 net.ipv4.conf.lo.log_martians=1") == (
        "net.ipv4.conf.r0-eth1.tag = -5\nnet.ipv4.conf.lo.log_martians = 1\n")
    assert ok(ctx, "sysctl -n net.ipv4.conf.r0-eth1.tag") == "-5\n"
    fails(ctx, "sysctl -w net.ipv4.conf.r0-eth1.arp_ignore=abc",
          'sysctl: setting key "net.ipv4.conf.r0-eth1.arp_ignore": Invalid argument\n', 1, ERROR)
    # mc_forwarding is read-only: procps says Invalid argument and exits 0; bash: denied
    res = run(ctx, "sysctl -w net.ipv4.conf.r0-eth1.mc_forwarding=1")
    assert (res.output, res.status) == (
        'sysctl: setting key "net.ipv4.conf.r0-eth1.mc_forwarding": Invalid argument\n', 0)
    res = files.write_redirect(ctx, "/proc/sys/net/ipv4/conf/r0-eth1/mc_forwarding", "1\n", False)
    assert (res.output, res.status, res.kind) == (
        "bash: /proc/sys/net/ipv4/conf/r0-eth1/mc_forwarding: Permission denied\n", 1, ERROR)
    # no such device / key
    fails(ctx, "sysctl net.ipv4.conf.eth9.forwarding",
          "sysctl: cannot stat /proc/sys/net/ipv4/conf/eth9/forwarding: No such file or "
          "directory\n", 1, ERROR)
    fails(ctx, "sysctl net.ipv4.conf.r0-eth1.nope",
          "sysctl: cannot stat /proc/sys/net/ipv4/conf/r0-eth1/nope: No such file or "
          "directory\n", 1, ERROR)
    # effects not modelled: a change is refused, the current value is accepted
    assert ok(ctx, "sysctl -w net.ipv4.conf.all.rp_filter=0") == "net.ipv4.conf.all.rp_filter = 0\n"
    res = run(ctx, "sysctl -w net.ipv4.conf.r0-eth1.rp_filter=1")
    assert res.output.startswith("netarena: changing net.ipv4.conf.r0-eth1.rp_filter is not "
                                 "supported") and (res.status, res.kind) == (1, INVALID)
    assert ok(ctx, "sysctl -n net.ipv4.conf.r0-eth1.rp_filter") == "0\n"


def test_per_device_forwarding_decides_on_the_input_device():
    from netarena_gym.routing.grader import pair_ok
    net, _ = build_network(TopologySpec(hosts=((1, 1),)))
    r0, h1, h2 = net.nodes["r0"], net.nodes["h1"], net.nodes["h2"]
    c = CommandContext(net, r0)
    assert pair_ok(net, h1, net.probe_ip["h2"], 1.0)
    ok(c, "sysctl -w net.ipv4.conf.r0-eth1.forwarding=0")
    # h1 -> h2 enters on r0-eth1: not forwarded; the router itself still answers
    assert not pair_ok(net, h1, net.probe_ip["h2"], 1.0)
    assert not pair_ok(net, h2, net.probe_ip["h1"], 1.0)  # the reply enters on r0-eth1
    assert pair_ok(net, h1, net.probe_ip["r0"], 1.0)
    ok(c, "sysctl -w net.ipv4.ip_forward=0")
    ok(c, "sysctl -w net.ipv4.ip_forward=1")  # every device follows again
    assert pair_ok(net, h1, net.probe_ip["h2"], 1.0)


def test_sysctl_errors(ctx):
    fails(ctx, "sysctl net.foo.bar",
          "sysctl: cannot stat /proc/sys/net/foo/bar: No such file or directory\n", 1, ERROR)
    fails(ctx, "sysctl -w net.foo.bar=1",
          "sysctl: cannot stat /proc/sys/net/foo/bar: No such file or directory\n", 1, ERROR)
    fails(ctx, "sysctl net.ipv4.ip_forward.x",
          "sysctl: cannot stat /proc/sys/net/ipv4/ip_forward/x: Not a directory\n", 1, ERROR)
    for value in ("abc", "", "+1", "08", "2147483648"):
        fails(ctx, f"sysctl -w net.ipv4.ip_forward={value}",
              'sysctl: setting key "net.ipv4.ip_forward": Invalid argument\n', 1, ERROR)
    fails(ctx, "sysctl -w net.ipv4.icmp_echo_ignore_all=2",
          'sysctl: setting key "net.ipv4.icmp_echo_ignore_all": Invalid argument\n', 1, ERROR)
    fails(ctx, "sysctl -w net.ipv4.ip_forward",
          "sysctl: command line(0): invalid syntax, continuing...\n", 1, ERROR)
    fails(ctx, "sysctl -n", "sysctl: no variables specified\n"
          "Try `sysctl --help' for more information.\n", 1, INVALID)
    assert ok(ctx, "sysctl -p") == ""  # Debian's stock /etc/sysctl.conf is all comments
    fails(ctx, "sysctl -p /nope", 'sysctl: cannot open "/nope": No such file or directory\n',
          1, ERROR)
    res = run(ctx, "sysctl -z")
    assert res.output.startswith("sysctl: invalid option -- 'z'\n\nUsage:\n") and \
        res.kind == INVALID
    assert ctx.node.sysctl["net.ipv4.ip_forward"] == "1"


def test_proc_files(ctx):
    node = ctx.node
    assert sysctl.read_proc(node, "/proc/sys/net/ipv4/ip_forward") == "1\n"
    assert sysctl.read_proc(node, "/proc/sys/net/ipv4/conf/all/forwarding") == "1\n"
    assert sysctl.read_proc(node, "/proc/sys/net/nope") is None
    assert sysctl.write_proc(node, "/proc/sys/net/ipv4/ip_forward", "0\n").status == 0
    assert node.sysctl["net.ipv4.ip_forward"] == "0"
    res = sysctl.write_proc(node, "/proc/sys/net/ipv4/ip_forward", "abc\n")
    assert (res.output, res.status, res.kind) == (
        "bash: echo: write error: Invalid argument\n", 1, ERROR)


# ------------------------------------------------------------------- cat / echo / redirect
def test_cat(ctx):
    assert ok(ctx, "cat /proc/sys/net/ipv4/ip_forward") == "1\n"
    assert ok(ctx, "cat /etc/hostname") == "r0\n"
    assert ok(ctx, "cat", stdin="piped\n") == "piped\n"
    assert ok(ctx, "cat /proc/net/route") == "".join(f"{line:<127s}\n" for line in (
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT",
        "r0-eth1\t0001A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0",
        "r0-eth2\t0002A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0"))
    host = CommandContext(ctx.net, ctx.net.nodes["h1"])
    assert ok(host, "cat /proc/net/route").splitlines()[1].rstrip() == (
        "h1-eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0")
    fails(ctx, "cat /etc/shadow", "cat: /etc/shadow: No such file or directory\n", 1, ERROR)
    fails(ctx, "cat /proc/sys/net/ipv4 /proc/sys/net/ipv4/ip_forward",
          "cat: /proc/sys/net/ipv4: Is a directory\n1\n", 1, ERROR)
    assert ok(ctx, "cat -A /proc/sys/net/ipv4/ip_forward") == "1$\n"


def test_echo(ctx):
    assert ok(ctx, "echo hello  world") == "hello world\n"
    assert ok(ctx, "echo -n 1") == "1"
    assert ok(ctx, r"echo -e 'a\tb\x41\0102\cdropped'") == "a\tbAB"
    assert ok(ctx, r"echo 'a\tb'") == "a\\tb\n"
    assert ok(ctx, "echo -x") == "-x\n"
    assert ok(ctx, "echo") == "\n"


def test_write_redirect(ctx):
    node = ctx.node
    res = files.write_redirect(ctx, "/proc/sys/net/ipv4/ip_forward", "0\n", append=False)
    assert (res.output, res.status) == ("", 0) and not node.ip_forward
    res = files.write_redirect(ctx, "/proc/sys/net/ipv4/conf/all/forwarding", "1\n", append=True)
    assert res.status == 0 and node.ip_forward
    res = files.write_redirect(ctx, "/proc/sys/net/ipv4/nope", "1\n", append=False)
    assert (res.output, res.status, res.kind) == (
        "bash: /proc/sys/net/ipv4/nope: No such file or directory\n", 1, ERROR)
    res = files.write_redirect(ctx, "/proc/sys/net/ipv4", "1\n", append=False)
    assert res.output == "bash: /proc/sys/net/ipv4: Is a directory\n"
    res = files.write_redirect(ctx, "/proc/sys/net/ipv4/ip_forward", "x\n", False, prog="printf")
    assert res.output == "bash: printf: write error: Invalid argument\n"
    assert files.write_redirect(ctx, "/dev/null", "junk", append=False).output == ""
    res = files.write_redirect(ctx, "/etc/hostname", "x\n", append=False)
    assert (res.output, res.status, res.kind) == (
        "bash: /etc/hostname: Permission denied\n", 1, ERROR)


