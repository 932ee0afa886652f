"""Help and version flags of the routing tools (``tool_help.py``): exit status, and the first
line each stream carries, pinned verbatim from the real tools on the Mininet host (Debian 12:
iputils 20221126, traceroute 2.1.2, net-tools 2.10, iptables 1.8.9, coreutils 9.1,
procps-ng 4.0.2, iproute2 6.1.0). Each was wrong before: ``traceroute --help`` was ``Bad
option``, ``ifconfig -V`` exited 5, ``arp --help`` complained of an unrecognized option."""
import pytest

from netarena_gym.routing.backends.sim import SimBackend

from .conftest import THREE, scenario

CASES = [  # (command, status, first line on stdout, first line on stderr)
    ("ping -V", 0, "ping from iputils 20221126", ""),
    ("ping -c 1 -V", 0, "ping from iputils 20221126", ""),
    ("ping -h", 2, "", ""),  # the usage starts with an empty line
    ("traceroute --help", 0, "", "Usage:"),
    ("traceroute -n -V", 0, "", "Modern traceroute for Linux, version 2.1.2"),
    ("traceroute --version", 0, "", "Modern traceroute for Linux, version 2.1.2"),
    ("ifconfig --help", 0, "Usage:", "    loop (Local Loopback) slip (Serial Line IP) cslip (VJ Serial Line IP) "),
    ("ifconfig -?", 0, "Usage:", "    loop (Local Loopback) slip (Serial Line IP) cslip (VJ Serial Line IP) "),
    ("ifconfig -V", 0, "net-tools 2.10", ""),
    ("ifconfig lo netmask", 3, "", "Usage:"),
    ("route -V", 0, "net-tools 2.10", ""),
    ("arp --help", 0, "Usage:", "    ash (Ash) ether (Ethernet) ax25 (AMPR AX.25) "),
    ("arp -nh", 0, "Usage:", "    ash (Ash) ether (Ethernet) ax25 (AMPR AX.25) "),
    ("arp --version", 0, "net-tools 2.10", ""),
    ("arp -?", 3, "", "Usage:"),
    ("iptables-save -V", 0, "iptables-save v1.8.9 (nf_tables)", ""),
    ("cat --version", 0, "cat (GNU coreutils) 9.1", ""),
    ("cat --help", 0, "Usage: cat [OPTION]... [FILE]...", ""),
    ("sysctl -h", 0, "", ""),  # an empty line, then the usage
    ("ip -V", 0, "ip utility, iproute2-6.1.0, libbpf 1.1.2", ""),
]


@pytest.fixture(scope="module")
def backend():
    b = SimBackend()
    b.apply(scenario([], THREE))
    return b


@pytest.mark.parametrize("command,status,out,err", CASES)
def test_help_and_version_as_the_real_tools_print_them(backend, command, status, out, err):
    run = lambda line: backend.run({"machine": "r0", "command": line})  # noqa: E731
    res = run(command)
    stdout, stderr = run(command + " 2>/dev/null").output, run(command + " >/dev/null").output
    assert res.status == status
    assert stdout.split("\n")[0] == out and (stdout != "") == (out != "" or command in ("sysctl -h",))
    assert stderr.split("\n")[0] == err and (stderr != "") == (err != "" or command == "ping -h")
    if stdout and stderr:  # read through one pipe, unbuffered stderr comes first
        assert res.output == stderr + stdout
    else:
        assert res.output == stdout + stderr


def test_ifconfig_usage_after_an_error_is_its_help_on_one_stream():
    """net-tools prints the same lines either way: on stdout and stderr for --help, all on
    stderr after a command-line error (the lists then inside the usage)."""
    from netarena_gym.routing.commands import tool_help as t
    assert sorted(t.IFCONFIG_USAGE.splitlines()) == sorted(
        (t.IFCONFIG_HELP_OUT + t.IFCONFIG_HELP_ERR).splitlines())
    assert "  [name <newname>]" in t.IFCONFIG_USAGE.splitlines()
