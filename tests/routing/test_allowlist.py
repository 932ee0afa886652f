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


# ---- a real node keeps what these change across episodes (the network is reused): refused
# in every spelling the tools accept, on every backend (the allow-list is shared)
@pytest.mark.parametrize("line,why", [
    # iproute2 takes any prefix of a verb, the first match in its order winning
    ("ip link ad zz0 type bridge", "(add)"), ("ip l a x type dummy", "(add)"),
    ("ip link de r0-eth3", "(delete)"), ("ip link dele r0-eth3", "(delete)"),
    ("ip link d r0-eth3", "(delete)"), ("ip link delete dev r0-eth3", "(delete)"),
    ("ip link rep name br9 type bridge", "(replace)"), ("ip link r x type bridge", "(replace)"),
    ("ip link p add dev r0-eth1 altname x", "(property)"),
    ("ip link property add dev r0-eth1 altname x", "(property)"),
    # set/change keywords the simulator does not model
    ("ip link set dev r0-eth3 name zz0", "name is not allowed"),
    ("ip link cha dev r0-eth3 name zz0", "ip link change ... name"),
    ("ip link c r0-eth3 name zz0", "name is not allowed"),
    ("ip link s r0-eth1 ty bridge", "ty (type)"),
    ("ip link set r0-eth1 address 02:00:00:00:00:01", "address"),
    ("ip link set r0-eth1 a 02:00:00:00:00:01", "a (address)"),
    ("ip link set r0-eth1 txq 5", "txq (txqueuelen)"), ("ip link set r0-eth1 m r0-eth2", "(master)"),
    ("ip link set r0-eth1 nomaster", "nomaster"), ("ip link set r0-eth1 multicast off", "multicast"),
    ("ip link set r0-eth1 group 3", "group"), ("ip link set r0-eth1 up name zz0", "name"),
    # iptables: only the filter table may change
    ("iptables -t raw -A PREROUTING -i r0-eth1 -j DROP", "-t raw: only the filter table"),
    ("iptables -t mangle -A FORWARD -o r0-eth2 -j DROP", "-t mangle"),
    ("iptables -tnat -F", "-t nat"), ("iptables -nvtraw -L -Z", "-t raw"),
    ("iptables --table=nat -A POSTROUTING -j MASQUERADE", "-t nat"),
    ("iptables --ta nat -X", "-t nat"), ("iptables --t raw -N x", "-t raw"),
    ("iptables -t security -P INPUT DROP", "-t security"),
    ("iptables -M /bin/sh -L", "--modprobe"), ("iptables -nM/bin/sh -L", "--modprobe"),
    ("iptables --mod=/bin/sh -L", "--modprobe"), ("iptables --modprobe /bin/sh -L", "--modprobe"),
    # ifconfig: what the simulator and the baseline leave alone (whole words, as net-tools)
    ("ifconfig r0-eth1 hw ether 02:00:00:00:00:01", "ifconfig hw"),
    ("ifconfig r0-eth1 txqueuelen 5", "txqueuelen"), ("ifconfig r0-eth1 -multicast", "-multicast"),
    ("ifconfig r0-eth1 allmulti", "allmulti"), ("ifconfig r0-eth1 -broadcast", "-broadcast"),
    ("ifconfig r0-eth1 10.0.0.1 metric 3", "metric"), ("ifconfig r0-eth1 name zz0", "name"),
    ("ifconfig r0-eth1 pointopoint 10.0.0.2", "pointopoint"),
    # tc: an ingress or clsact qdisc (the kernel takes it; nothing may use it)
    ("tc qdisc add dev r0-eth1 ingress", "ingress is not allowed"),
    ("tc q a dev r0-eth1 clsact", "clsact is not allowed"),
    ("tc qdisc replace dev r0-eth1 handle ffff: ingress", "ingress"),
])
def test_refused_in_every_spelling(line, why):
    msg = check_command_line(parse_command_line(line))
    assert msg is not None and why in msg, msg


@pytest.mark.parametrize("line", [
    "ip link set r0-eth1 up", "ip link s r0-eth1 down", "ip link cha r0-eth1 mtu 1400",
    "ip link set dev r0-eth1 al x", "ip link set r0-eth1 alias name",
    "ip link set r0-eth1 promisc on arp off mtu 1400 up", "ip link sh", "ip link ls",
    "ip link l", "ip link list dev r0-eth1", "ip link", "ip link help",
    "iptables -t nat -S", "iptables -t raw -L -n", "iptables -L -t nat", "iptables -nvtraw -L",
    "iptables -t filter -A FORWARD -j DROP", "iptables -A FORWARD -j DROP",
    "iptables-save -t nat", "ifconfig", "ifconfig -a r0-eth1",
    "ifconfig r0-eth1 10.0.0.1/24 broadcast 10.0.0.255 mtu 1400 up -arp promisc",
    "tc qdisc show dev r0-eth1 ingress", "tc qdisc del dev r0-eth1 root",
    "tc qdisc add dev r0-eth1 root netem delay 10ms"])
def test_still_allowed(line):
    assert check_command_line(parse_command_line(line)) is None
