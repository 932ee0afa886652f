"""All-pairs ICMP echo probing across network namespaces from one process.

One raw ICMP socket is opened inside each node's network namespace (``setns`` on the
node's ``/proc/PID/ns/net``; a socket stays in the namespace it was created in), then every
source sends one 56-byte echo request (84-byte IP packet, like ``ping -c1``) to every target
and replies are collected until all arrived or the timeout passed. Source address, routing,
filters and MTU are the kernel's, as for ``ping``; no process is forked per pair.

Also here: :func:`ping_matrix` (the same matrix from ``ping -c1`` processes) and
:func:`link_indexes` (a namespace's links, which the backend compares between episodes).
"""
from __future__ import annotations

import ctypes
import os
import selectors
import socket
import struct
import subprocess
import time

import numpy as np

from netarena_gym.routing.backends.mininet_lifecycle import ended_on_exit, signals_held

CLONE_NEWNET = 0x40000000
SOL_RAW, ICMP_FILTER = 255, 1  # <linux/icmp.h>
_libc = ctypes.CDLL(None, use_errno=True)
PAYLOAD = bytes(range(56))


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def link_indexes(pid: int) -> dict[str, int]:
    """``{name: ifindex}`` of every link in the network namespace of process ``pid`` (the C
    library's ``if_nameindex``, whose netlink socket is made while this thread is there).
    A link deleted and made again under its name has a new index."""
    with open("/proc/thread-self/ns/net") as home, open(f"/proc/{pid}/ns/net") as there, \
            signals_held():
        _setns(there.fileno())
        try:
            return {name: index for index, name in socket.if_nameindex()}
        finally:
            _setns(home.fileno())


def ping_matrix(pids: list[int], ips: list[str], timeout: float) -> np.ndarray:
    """The reachability matrix from one shell per source node (``pids[i]``) firing ``ping
    -c1 -W<timeout>`` at every other node's address (``ips``)."""
    n = len(pids)
    w = f"{timeout:g}"
    with ended_on_exit() as procs:
        for i, pid in enumerate(pids):
            targets = " ".join(ip for j, ip in enumerate(ips) if j != i)
            script = (f"for d in {targets}; do (ping -n -q -c1 -W{w} $d >/dev/null 2>&1 "
                      f"&& echo $d) & done; wait")
            procs.append(subprocess.Popen(
                ["mnexec", "-a", str(pid), "sh", "-c", script],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                start_new_session=True))
        m = np.zeros((n, n), dtype=bool)
        index = {ip: j for j, ip in enumerate(ips)}
        for i, p in enumerate(procs):
            out, _ = p.communicate(timeout=60)
            for line in out.split():
                j = index.get(line.strip())
                if j is not None:
                    m[i, j] = True
    np.fill_diagonal(m, True)
    return m


def socket_in_netns(pid: int) -> socket.socket:
    """A raw ICMP socket living in the network namespace of process ``pid``."""
    return _in_netns(pid)[0]


def _in_netns(pid: int) -> tuple[socket.socket, int]:
    """A raw ICMP socket in ``pid``'s network namespace, and a descriptor of that
    namespace's ``/proc/sys/net/ipv4/route/flush`` (a sysctl file acts on the namespace
    it was opened in)."""
    with open("/proc/self/ns/net") as home, open(f"/proc/{pid}/ns/net") as there, \
            signals_held():  # no teardown handler runs while this thread is elsewhere
        _setns(there.fileno())
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
            flush = os.open("/proc/sys/net/ipv4/route/flush", os.O_WRONLY)
        finally:
            _setns(home.fileno())
    _setup(s)
    return s, flush


def _setup(s: socket.socket) -> None:
    # only echo replies reach the socket (as ping's filter does), not every request the
    # node answers
    s.setsockopt(SOL_RAW, ICMP_FILTER, struct.pack("I", ~(1 << 0) & 0xFFFFFFFF))
    s.setblocking(False)


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def echo_request(ident: int, seq: int, tag: int = 0) -> bytes:
    """An echo request whose 56-byte payload starts with the 16-bit ``tag``."""
    body = struct.pack("!H", tag) + PAYLOAD[2:]
    hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    return struct.pack("!BBHHH", 8, 0, _checksum(hdr + body), ident, seq) + body


class NamespaceProber:
    """Probe matrix over nodes given as PIDs, targets as dotted addresses. A request
    carries its source in the ICMP id, its target's index in the sequence number and the
    round in the payload (which the reply echoes), so any number of nodes up to 65536
    is told apart and a late reply from an earlier round is ignored."""

    def __init__(self, pids: list[int], targets: list[str]):
        self.targets = targets
        pairs = [_in_netns(p) for p in pids]
        self.socks = [s for s, _ in pairs]
        self._flush = [f for _, f in pairs]
        self.ident = [(0x4E00 + i) & 0xFFFF for i in range(len(pids))]
        self.round = 0

    def close(self) -> None:
        for s in self.socks:
            s.close()
        for f in self._flush:
            os.close(f)
        self.socks, self._flush = [], []

    def forget_paths(self) -> None:
        """``ip route flush cache`` in every namespace: the path MTUs learnt from the last
        probe's "fragmentation needed" errors are forgotten (the simulator models none),
        so each probe sends what a fresh ``ping -c1`` sends."""
        for f in self._flush:
            os.write(f, b"1\n")

    def matrix(self, timeout: float, attempts: int = 1) -> np.ndarray:
        """One echo request per ordered pair, replies awaited ``timeout`` seconds after
        the last was sent; with ``attempts`` > 1, the pairs still unanswered are probed
        again (the first attempt has then resolved every neighbour on the way: a node
        queues only about a hundred packets per neighbour still being resolved, fewer than
        one source sends to a large network)."""
        n = len(self.socks)
        m = np.zeros((n, n), dtype=bool)
        np.fill_diagonal(m, True)
        self.round = (self.round + 1) & 0xFFFF
        with selectors.DefaultSelector() as sel:  # epoll: no FD_SETSIZE limit
            for i, s in enumerate(self.socks):
                self._drain(s)
                sel.register(s, selectors.EVENT_READ, i)
            for _ in range(attempts):
                if m.all():
                    break
                self.forget_paths()
                self._attempt(sel, m, timeout)
        self.forget_paths()  # what the agent inspects next holds nothing the probe learnt
        return m

    def _attempt(self, sel, m: np.ndarray, timeout: float) -> None:
        expected = got = 0
        for i, s in enumerate(self.socks):
            for j, dst in enumerate(self.targets):
                if m[i, j]:
                    continue
                try:
                    s.sendto(echo_request(self.ident[i], j, self.round), (dst, 0))
                    expected += 1
                except OSError:
                    pass  # no route, filtered by OUTPUT, ...: the ping fails
            # collect what has arrived so far: no socket's buffer fills up on large
            # networks while the other sources are still sending
            got += self._collect(sel, m, 0)
        deadline = time.monotonic() + timeout
        while got < expected:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            got += self._collect(sel, m, left)

    def _collect(self, sel, m: np.ndarray, wait: float) -> int:
        """Read every reply ready within ``wait`` seconds into ``m``; how many were new."""
        new = 0
        for key, _ in sel.select(wait):
            s, i = key.fileobj, key.data
            while True:
                try:
                    pkt = s.recv(2048)
                except BlockingIOError:
                    break
                j = self._match(pkt, self.ident[i])
                if j is not None and not m[i, j]:
                    m[i, j] = True
                    new += 1
        return new

    def _match(self, pkt: bytes, ident: int) -> int | None:
        ihl = (pkt[0] & 0x0F) * 4
        if len(pkt) < ihl + 10:
            return None
        typ, _, _, pid, j, tag = struct.unpack("!BBHHHH", pkt[ihl:ihl + 10])
        if typ != 0 or pid != ident or tag != self.round:
            return None
        return j if j < len(self.targets) else None

    @staticmethod
    def _drain(s: socket.socket) -> None:
        while True:
            try:
                s.recv(2048)
            except BlockingIOError:
                return
