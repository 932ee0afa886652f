import pytest

from netarena_gym.shell.parser import parse_command_line
from netarena_gym.routing.commands.allowlist import check_command_line


@pytest.mark.parametrize("line", [
    "ip addr show", "ip -4 -o a", "ip route get 192.168.1.100", "ifconfig -a", "route -n",
    "sysctl -w net.ipv4.ip_forward=1", "iptables -L -n -v", "tc qdisc show",
    "cat /proc/sys/net/ipv4/ip_forward", "echo 1 > /proc/sys/net/ipv4/ip_forward",
    "ip a | grep inet | wc -l", "ping -c1 -W1 192.168.1.1", "traceroute -n 10.0.0.1", "arp -n",
    "ip link set r0-eth1 up && ip route show", "unknowncommand"])
def test_allowed(line):
    assert check_command_line(parse_command_line(line)) is None


@pytest.mark.parametrize("line,why", [
    ("rm -rf /", "not an operator command"), ("kill 1", "not an operator command"),
    ("killproc sshd", "not an operator command"),
    ("bash -c 'ip a'", "not an operator command"), ("/bin/ip a", "not an operator command"),
    ("ip netns exec x ip a", "ip netns"), ("ip -n x addr", "ip -n"),
    ("ip link add v0 type veth", "topology is fixed"), ("ip link set r0-eth1 netns 1", "namespaces"),
    ("ip monitor", "not allowed"), ("cat /etc/shadow", "reading"), ("cat /proc/sys/net/../../x", "reading"),
    ("grep foo", "through a pipe"), ("ip a | python3", "not an operator command"),
    ("echo x > /etc/hosts", "writing"), ("sysctl -p", "configuration files"),
    ("tc filter show", "tc filter"), ("ping -f 10.0.0.1", "flood"),
])
def test_refused(line, why):
    msg = check_command_line(parse_command_line(line))
    assert msg is not None and why in msg
