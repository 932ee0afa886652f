"""Help and version texts of the routing task's tools, verbatim (Debian 12 on the Mininet
host: iputils 20221126, traceroute 2.1.2, net-tools 2.10, iptables 1.8.9, GNU coreutils
9.1 cat). ``*_OUT`` went to stdout, ``*_ERR`` to stderr; net-tools prints its lists of
hardware types and address families on stderr, beside a usage on stdout (``--help``) or
inside one on stderr (a command-line error: :data:`IFCONFIG_USAGE`, :data:`ARP_USAGE`), so
those are put together from their parts. Pinned by ``tests/routing/test_tool_help.py``."""

__all__ = ["ARP_HELP_ERR", "ARP_HELP_OUT", "ARP_USAGE", "ARP_VERSION", "CAT_HELP", "CAT_VERSION",
           "IFCONFIG_HELP_ERR", "IFCONFIG_HELP_OUT", "IFCONFIG_USAGE", "IFCONFIG_VERSION",
           "IPTABLES_SAVE_VERSION", "PING_VERSION", "ROUTE_VERSION", "TRACEROUTE_VERSION"]

PING_VERSION = (
    'ping from iputils 20221126\n'
    'libcap: yes, IDN: yes, NLS: no, error.h: yes, getrandom(): yes, __fpending(): yes\n'
)

TRACEROUTE_VERSION = (
    'Modern traceroute for Linux, version 2.1.2\n'
    'Copyright (c) 2016  Dmitry Butskoy,   License: GPL v2 or any later\n'
)

# net-tools ifconfig's usage: its head, the hardware types, the address families
_IFCONFIG_HEAD = (
    'Usage:\n'
    '  ifconfig [-a] [-v] [-s] <interface> [[<AF>] <address>]\n'
    '  [add <address>[/<prefixlen>]]\n'
    '  [del <address>[/<prefixlen>]]\n'
    '  [[-]broadcast [<address>]]  [[-]pointopoint [<address>]]\n'
    '  [netmask <address>]  [dstaddr <address>]  [tunnel <address>]\n'
    '  [outfill <NN>] [keepalive <NN>]\n'
    '  [hw <HW> <address>]  [mtu <NN>]\n'
    '  [[-]trailers]  [[-]arp]  [[-]allmulti]\n'
    '  [multicast]  [[-]promisc]\n'
    '  [mem_start <NN>]  [io_addr <NN>]  [irq <NN>]  [media <type>]\n'
    '  [txqueuelen <NN>]\n'
    '  [name <newname>]\n'
    '  [[-]dynamic]\n'
    '  [up|down] ...\n'
    '\n'
    '  <HW>=Hardware Type.\n'
    '  List of possible hardware types:\n'
)

_IFCONFIG_HW = (
    '    loop (Local Loopback) slip (Serial Line IP) cslip (VJ Serial Line IP) \n'
    '    slip6 (6-bit Serial Line IP) cslip6 (VJ 6-bit Serial Line IP) adaptive (Adaptive Serial Line IP) \n'
    '    ash (Ash) ether (Ethernet) ax25 (AMPR AX.25) \n'
    '    netrom (AMPR NET/ROM) rose (AMPR ROSE) tunnel (IPIP Tunnel) \n'
    '    ppp (Point-to-Point Protocol) hdlc ((Cisco)-HDLC) lapb (LAPB) \n'
    '    arcnet (ARCnet) dlci (Frame Relay DLCI) frad (Frame Relay Access Device) \n'
    '    sit (IPv6-in-IPv4) fddi (Fiber Distributed Data Interface) hippi (HIPPI) \n'
    '    irda (IrLAP) ec (Econet) x25 (generic X.25) \n'
    '    eui64 (Generic EUI-64) \n'
)

_IFCONFIG_AF_HEAD = '  <AF>=Address family. Default: inet\n  List of possible address families:\n'
_IFCONFIG_AF = (
    '    unix (UNIX Domain) inet (DARPA Internet) inet6 (IPv6) \n'
    '    ax25 (AMPR AX.25) netrom (AMPR NET/ROM) rose (AMPR ROSE) \n'
    '    ipx (Novell IPX) ddp (Appletalk DDP) ec (Econet) \n'
    '    ash (Ash) x25 (CCITT X.25) \n'
)

# --help: the usage on stdout, the lists on stderr
IFCONFIG_HELP_OUT = _IFCONFIG_HEAD + _IFCONFIG_AF_HEAD
IFCONFIG_HELP_ERR = _IFCONFIG_HW + _IFCONFIG_AF
# after a command-line error: all of it, the lists in place, on stderr
IFCONFIG_USAGE = _IFCONFIG_HEAD + _IFCONFIG_HW + _IFCONFIG_AF_HEAD + _IFCONFIG_AF

IFCONFIG_VERSION = (
    'net-tools 2.10\n'
)

ROUTE_VERSION = (
    'net-tools 2.10\n'
    '+NEW_ADDRT +RTF_IRTT +RTF_REJECT +I18N +SELINUX\n'
    'AF: (inet) +UNIX +INET +INET6 +IPX +AX25 +NETROM +X25 +ATALK +ECONET +ROSE -BLUETOOTH\n'
    'HW:  +ETHER +ARC +SLIP +PPP +TUNNEL -TR +AX25 +NETROM +X25 +FR +ROSE +ASH +SIT +FDDI +HIPPI +HDLC/LAPB +EUI64 \n'
)

ARP_HELP_OUT = (
    'Usage:\n'
    '  arp [-vn]  [<HW>] [-i <if>] [-a] [<hostname>]             <-Display ARP cache\n'
    '  arp [-v]          [-i <if>] -d  <host> [pub]               <-Delete ARP entry\n'
    '  arp [-vnD] [<HW>] [-i <if>] -f  [<filename>]            <-Add entry from file\n'
    '  arp [-v]   [<HW>] [-i <if>] -s  <host> <hwaddr> [temp]            <-Add entry\n'
    "  arp [-v]   [<HW>] [-i <if>] -Ds <host> <if> [netmask <nm>] pub          <-''-\n"
    '\n'
    '        -a                       display (all) hosts in alternative (BSD) style\n'
    '        -e                       display (all) hosts in default (Linux) style\n'
    '        -s, --set                set a new ARP entry\n'
    '        -d, --delete             delete a specified entry\n'
    '        -v, --verbose            be verbose\n'
    "        -n, --numeric            don't resolve names\n"
    '        -i, --device             specify network interface (e.g. eth0)\n'
    '        -D, --use-device         read <hwaddr> from given device\n'
    '        -A, -p, --protocol       specify protocol family\n'
    '        -f, --file               read new entries from file or from /etc/ethers\n'
    '\n'
    "  <HW>=Use '-H <hw>' to specify hardware address type. Default: ether\n"
    '  List of possible hardware types (which support ARP):\n'
)

ARP_HELP_ERR = (
    '    ash (Ash) ether (Ethernet) ax25 (AMPR AX.25) \n'
    '    netrom (AMPR NET/ROM) rose (AMPR ROSE) arcnet (ARCnet) \n'
    '    dlci (Frame Relay DLCI) fddi (Fiber Distributed Data Interface) hippi (HIPPI) \n'
    '    irda (IrLAP) x25 (generic X.25) eui64 (Generic EUI-64) \n'
)

ARP_VERSION = (
    'net-tools 2.10\n'
    '+I18N +SELINUX\n'
    'AF: (inet) +UNIX +INET +INET6 +IPX +AX25 +NETROM +X25 +ATALK +ECONET +ROSE -BLUETOOTH\n'
    'HW: (ether) +ETHER +ARC +SLIP +PPP +TUNNEL -TR +AX25 +NETROM +X25 +FR +ROSE +ASH +SIT +FDDI +HIPPI +HDLC/LAPB +EUI64 \n'
)

IPTABLES_SAVE_VERSION = (
    'iptables-save v1.8.9 (nf_tables)\n'
)

CAT_HELP = (
    'Usage: cat [OPTION]... [FILE]...\n'
    'Concatenate FILE(s) to standard output.\n'
    '\n'
    'With no FILE, or when FILE is -, read standard input.\n'
    '\n'
    '  -A, --show-all           equivalent to -vET\n'
    '  -b, --number-nonblank    number nonempty output lines, overrides -n\n'
    '  -e                       equivalent to -vE\n'
    '  -E, --show-ends          display $ at end of each line\n'
    '  -n, --number             number all output lines\n'
    '  -s, --squeeze-blank      suppress repeated empty output lines\n'
    '  -t                       equivalent to -vT\n'
    '  -T, --show-tabs          display TAB characters as ^I\n'
    '  -u                       (ignored)\n'
    '  -v, --show-nonprinting   use ^ and M- notation, except for LFD and TAB\n'
    '      --help        display this help and exit\n'
    '      --version     output version information and exit\n'
    '\n'
    'Examples:\n'
    "  cat f - g  Output f's contents, then standard input, then g's contents.\n"
    '  cat        Copy standard input to standard output.\n'
    '\n'
    'GNU coreutils online help: <https://www.gnu.org/software/coreutils/>\n'
    'Report any translation bugs to <https://translationproject.org/team/>\n'
    'Full documentation <https://www.gnu.org/software/coreutils/cat>\n'
    "or available locally via: info '(coreutils) cat invocation'\n"
)

CAT_VERSION = (
    'cat (GNU coreutils) 9.1\n'
    'Copyright (C) 2022 Free Software Foundation, Inc.\n'
    'License GPLv3+: GNU GPL version 3 or later <https://gnu.org/licenses/gpl.html>.\n'
    'This is free software: you are free to change and redistribute it.\n'
    'There is NO WARRANTY, to the extent permitted by law.\n'
    '\n'
    'Written by Torbjorn Granlund and Richard M. Stallman.\n'
)

# the usage after a command-line error (exit 3): all of it on stderr
ARP_USAGE = ARP_HELP_OUT + ARP_HELP_ERR
