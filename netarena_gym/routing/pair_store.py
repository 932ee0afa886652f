"""Probe results kept across steps with the keys each one read (:class:`PairStore`).

A probe ``i -> j`` is a pure function of the configuration of the nodes its two walks
touch (:mod:`netarena_gym.routing.matrix_cache` says which changes reach which probes).
The store keeps each result with its *keys*: its sender, every node on a segment where it
resolved a neighbour, and every such segment
(:func:`~netarena_gym.routing.matrix_cache.segment_deps`), as one bit mask per probe
(bit ``k`` for key ``k``). A probe through the forwarding memo joins the masks of the
chains it jumped with one ``|`` each and writes one row: its pair and its mask. Forgetting
the readers of a key tests one bit of each row: in Python while there are few rows, else
in numpy over the masks written out as fixed-width words (:meth:`PairStore.matrix`).
Listing every key's readers as each probe is made (as before session 28) costs about two
dozen list appends per probe on a 64-router path, about 15% of the probe's time.

A frozen store (a *base*, :mod:`netarena_gym.routing.pristine`) lists each key's readers
out once, as arrays with their requests' source addresses, so that an episode forgets
base pairs in numpy: a base is read by every episode and written never.
"""
from __future__ import annotations

import numpy as np

from netarena_gym.routing import matrix_cache
from netarena_gym.routing.matrix_cache import AddressTest, gateway_test, key_mask, segment_deps
from netarena_gym.routing.state import Network, Node

__all__ = ["PairStore", "SCAN_ROWS", "has_key"]

SCAN_ROWS = 1024  # from this many rows on, a key's readers are found in numpy


def has_key(mat: np.ndarray, key: int) -> np.ndarray:
    """Per row of a mask matrix (:meth:`PairStore.matrix`), whether it has ``key``."""
    return (mat[:, key >> 6] & np.uint64(1 << (key & 63))) != 0


class PairStore:
    """``pair_ok`` results by (source index, destination index) with their dependencies.

    A pair depends on keys: every node it read (its sender and every node on a segment
    where it resolved a neighbour, :func:`~netarena_gym.routing.matrix_cache.segment_deps`)
    and every such segment (key ``n`` plus the segment's rank). Pairs are kept as ints
    ``i * n + j`` (``n`` nodes) in containers of ints: no tuple per pair to make, and
    nothing the cyclic collector has to scan when it runs again after the (paused)
    computation. Each probe is a row (its pair and the mask of its keys); a pair probed
    again gets a new row, and rows of forgotten pairs are dropped when they outnumber
    the live ones."""

    __slots__ = ("net", "nodes", "dsts", "timeout_s", "seg", "segmask", "res", "base", "dead",
                 "src", "log", "fps", "asm", "n", "memo", "fast", "nbrs", "nkeys", "width",
                 "rows_q", "rows_m", "buf", "latest", "frozen_arrays", "frozen_src",
                 "dead_flags", "dst_arr")

    def __init__(self, net: Network, nodes: list[Node], dsts: list[int], timeout_s: float,
                 base: "PairStore | None" = None):
        self.net, self.nodes, self.dsts, self.timeout_s = net, nodes, dsts, timeout_s
        self.log: list[tuple[str, str]] = []  # (node, interface) of each resolution
        self.fps: list | None = None  # routers' fingerprints, once frozen
        self.asm: tuple | None = None  # the assembled class matrix, once frozen
        self.n = n = len(nodes)
        self.seg = segment_deps(net, {x.name: i for i, x in enumerate(nodes)})
        self.segmask = {k: key_mask(idx) for k, idx in self.seg.items()}
        self.nbrs: list[list[int]] | None = None  # :meth:`neighbours`, made on first use
        self.res: dict[int, bool] = {}
        self.src: dict[int, int | None] = {}  # the request's source address
        self.nkeys = n + len(net.segments)  # nodes, then segments
        self.width = 8 * ((self.nkeys + 63) // 64)  # bytes of a row's mask in ``buf``
        self.rows_q: list[int] = []  # per row, its pair
        self.rows_m: list[int] = []  # per row, the mask of its keys
        self.buf = bytearray()  # the first rows' masks, ``width`` little-endian bytes each
        self.latest: dict[int, int] = {}  # pair -> its newest row
        # once frozen, per key: its readers, and their requests' source addresses (-1:
        # none), as arrays
        self.frozen_arrays: list[np.ndarray] | None = None
        self.frozen_src: list[np.ndarray] | None = None
        self.dst_arr: np.ndarray | None = None  # ``dsts`` as an array (made on first use)
        self.base = base
        self.dead: set[int] = set()  # base pairs (``base.n``) no longer valid here
        # the same as flags by pair (made on first use)
        self.dead_flags: np.ndarray | None = None
        self.memo = None  # the ForwardingMemo probes go through (made on first use)
        # paths across one to four routers are too short for the memo to pay
        self.fast = (matrix_cache.FAST_PROBES
                     and len(net.routers()) >= matrix_cache.MEMO_ROUTERS)

    @property
    def weight(self) -> int:
        """The ints it holds (results and dependencies): a measure of its memory."""
        if self.frozen_arrays is not None:  # a pair, and an address, per key's reader
            return len(self.res) + 2 * sum(map(len, self.frozen_arrays))
        return len(self.res) + len(self.rows_q) * (self.width // 8 + 2)

    @property
    def rdeps(self) -> list:
        """Per key (node indices, then segments), the pairs whose newest probe read it,
        in the order they were probed."""
        if self.frozen_arrays is not None:
            return [a.tolist() for a in self.frozen_arrays]
        out: list[list[int]] = [[] for _ in range(self.nkeys)]
        live = [r for r, q in enumerate(self.rows_q) if self.latest.get(q) == r]
        if not live:
            return out
        mat = self.matrix()[live]
        qs = np.array([self.rows_q[r] for r in live], dtype=np.int64)
        for k in range(self.nkeys):
            out[k] = qs[has_key(mat, k)].tolist()
        return out

    def matrix(self) -> np.ndarray:
        """The rows' masks as an array of ``uint64`` words, a row per row (a view of
        :attr:`buf`, written out up to the last row first: drop it before the next)."""
        width, done = self.width, len(self.buf) // self.width
        if done < len(self.rows_m):
            self.buf += b"".join([m.to_bytes(width, "little") for m in self.rows_m[done:]])
        return np.frombuffer(self.buf, dtype="<u8").reshape(len(self.rows_m), width // 8)

    def _rows_with(self, key: int) -> list[int]:
        """The rows whose mask has ``key``."""
        rows_m = self.rows_m
        if len(rows_m) < SCAN_ROWS:
            bit = 1 << key
            return [r for r, m in enumerate(rows_m) if m & bit]
        mat = self.matrix()
        hit = np.flatnonzero(has_key(mat, key)).tolist()
        del mat  # the buffer may grow again
        return hit

    def invalidate(self, changed) -> set[tuple[int, int]]:
        """Forget every pair a change may affect; returns them.
        ``changed``: (node index, :class:`~netarena_gym.routing.matrix_cache.NodeChange`,
        or None for any change) pairs;
        :func:`~netarena_gym.routing.matrix_cache.node_change` says which pairs a change
        reaches."""
        out: set[tuple[int, int]] = set()
        for i, ch in changed:
            if ch is None:
                self._forget(i, None, -1, out)
                continue
            if ch.prefixes or ch.own:
                self._forget(i, AddressTest(ch.prefixes), i if ch.own else -1, out)
            name = self.nodes[i].name
            for itf in ch.links:
                idx = self.seg.get((name, itf))
                self._forget(i if idx is None else idx[-1], None, -1, out)
            if ch.addrs:
                for x in self.neighbours()[i]:
                    test = gateway_test(self.nodes[x], ch.addrs)
                    if test is not None:
                        self._forget(x, test, -1, out)
                self._forget_martian(i, ch.addrs, out)
        if len(self.rows_q) > 2 * len(self.res) + SCAN_ROWS:
            self._compact()
        return out

    def _forget_martian(self, i: int, addrs: frozenset, out: set) -> None:
        """Forget the pairs that resolved on a segment node ``i`` shares with a neighbour
        owning an address in ``addrs``: ``i`` may now answer that neighbour's ARP
        requests, or no longer (a request from an address ``i`` owns is a martian)."""
        nodes, name = self.nodes, self.nodes[i].name
        for x in self.neighbours()[i]:
            if not addrs.isdisjoint(nodes[x].local_ips()):
                for itf in nodes[i].interfaces:
                    idx = self.seg.get((name, itf))
                    if idx is not None and x in idx[:-1]:
                        self._forget(idx[-1], None, -1, out)

    def neighbours(self) -> list[list[int]]:
        """Per node index, the other nodes on its segments (sorted)."""
        if self.nbrs is None:
            near: list[set[int]] = [set() for _ in range(self.n)]
            for idx in set(self.seg.values()):
                for i in idx[:-1]:
                    near[i].update(idx[:-1])
            self.nbrs = [sorted(s - {i}) for i, s in enumerate(near)]
        return self.nbrs

    def _forget(self, key: int, test: AddressTest | None, own: int, out: set) -> None:
        """Forget the pairs that read ``key`` (with a ``test``: only those whose
        destination or source address passes it, or that node ``own`` sends); adds them
        to ``out``."""
        res, src, dsts, n = self.res, self.src, self.dsts, self.n
        rows_q, latest = self.rows_q, self.latest
        for r in self._rows_with(key):
            q = rows_q[r]
            if latest[q] != r or q not in res:
                continue  # probed again since, or forgotten already
            if test is None or q // n == own or test(dsts[q % n]) or test(src[q]):
                del res[q]
                out.add(divmod(q, n))
        base = self.base
        if base is not None:
            bn, dead = base.n, self.dead
            flags = self.dead_flags
            if flags is None:
                flags = self.dead_flags = np.zeros(bn * bn, dtype=bool)
                flags[list(dead)] = True
            arr = base.frozen_arrays[key]
            alive = ~flags[arr]
            new = arr[alive]
            if test is not None and new.size:  # the same tests, on arrays
                if self.dst_arr is None:
                    self.dst_arr = np.array(dsts, dtype=np.int64)
                hit = (test.hits(self.dst_arr[new % bn])
                       | test.hits(base.frozen_src[key][alive]) | (new // bn == own))
                new = new[hit]
            if new.size:
                flags[new] = True
                dead.update(new.tolist())
                out.update(zip((new // bn).tolist(), (new % bn).tolist()))

    def _compact(self) -> None:
        """Drop the rows of pairs forgotten or probed again since."""
        res, latest = self.res, self.latest
        keep = [r for r, q in enumerate(self.rows_q) if latest[q] == r and q in res]
        self.rows_q = [self.rows_q[r] for r in keep]
        self.rows_m = [self.rows_m[r] for r in keep]
        self.buf = bytearray()
        self.latest = {q: r for r, q in enumerate(self.rows_q)}

    def get(self, i: int, j: int) -> bool:
        """The probe ``i -> j`` (computed, with the nodes it read, when not known)."""
        r = self.res.get(i * self.n + j)
        if r is not None:
            return r
        base = self.base
        if base is not None:
            q = i * base.n + j
            if q not in self.dead:
                r = base.res.get(q)
                if r is not None:
                    return r
        return self._probe(i, j)

    def _probe(self, i: int, j: int) -> bool:
        net = self.net
        memo = self.memo
        if self.fast and net.arp_log is None:
            if memo is None:
                from netarena_gym.routing.forward_memo import ForwardingMemo
                memo = self.memo = ForwardingMemo(net, self.seg)
        else:
            memo = None
        log = self.log
        log.clear()
        m = 1 << i
        q = i * self.n + j
        if memo is not None:
            ok, self.src[q], reads = memo.probe(self.nodes[i], self.dsts[j], self.timeout_s,
                                                log)
            m |= reads
        else:
            from netarena_gym.routing.grader import probe
            ok, self.src[q] = probe(net, self.nodes[i], self.dsts[j], self.timeout_s, log)
        segmask = self.segmask
        for key in log:
            d = segmask.get(key)
            if d is not None:
                m |= d
        self.res[q] = ok
        self.latest[q] = len(self.rows_q)
        self.rows_q.append(q)
        self.rows_m.append(m)
        return ok

    def readers(self, i: int) -> set[tuple[int, int]]:
        """The pairs known here (not a base's) whose probes read node ``i``."""
        res, n = self.res, self.n
        if self.frozen_arrays is not None:
            return {divmod(q, n) for q in self.frozen_arrays[i].tolist() if q in res}
        rows_q, latest = self.rows_q, self.latest
        return {divmod(rows_q[r], n) for r in self._rows_with(i)
                if latest[rows_q[r]] == r and rows_q[r] in res}

    def source(self, i: int, j: int) -> int | None:
        """The source address the request of a known probe ``i -> j`` went out with."""
        return self.src[i * self.n + j]

    def release(self) -> None:
        """Drop the forwarding memo (it holds for one network version only): its many
        small records die young instead of aging through the cyclic collector."""
        self.memo = None

    def freeze(self, asm: tuple | None = None) -> "PairStore":
        """Become a read-only base: keep only what a base needs (results, every key's
        readers listed out, source addresses, the routers' fingerprints and ``asm``, the
        oracle's :attr:`~netarena_gym.routing.grader.ReachabilityOracle.assembly`),
        letting the network go."""
        self.asm = asm
        src = self.src
        readers = self.rdeps
        self.frozen_arrays = [np.array(ps, dtype=np.int32) for ps in readers]
        self.frozen_src = [np.array([-1 if src[q] is None else src[q] for q in ps],
                                    dtype=np.int64) for ps in readers]
        self.rows_q, self.rows_m, self.buf, self.latest = [], [], bytearray(), {}
        self.fps = [n.fingerprint() if n.kind == "router" else None for n in self.nodes]
        self.net = self.nodes = self.memo = None
        self.seg, self.segmask, self.log, self.nbrs = {}, {}, [], None
        return self
