"""The all-pairs probe matrix of a network (:class:`ReachabilityOracle`), derived from the
packet engine's probes (:func:`~netarena_gym.routing.grader.probe`).

Two caches keep it affordable: whole matrices keyed by every node's content, and single
probes with what they read (:class:`~netarena_gym.routing.pair_store.PairStore`);
the matrix is assembled over classes of interchangeable hosts
(:func:`~netarena_gym.routing.matrix_cache.host_classes`) and patched from the last
assembly where only some probes changed (:func:`patch_assembly`).
"""
from __future__ import annotations

import numpy as np

from netarena_gym.core.collector import paused_gc
from netarena_gym.routing.matrix_cache import (
    NodeChange, host_classes, long_prefixes, node_change)
from netarena_gym.routing.pair_store import PairStore
from netarena_gym.routing.state import Network

__all__ = ["ReachabilityOracle", "patch_assembly"]


def patch_assembly(asm: tuple, reps: list[int], seconds: list[int], stale, get
             ) -> tuple[np.ndarray, np.ndarray]:
    """The probes between class representatives ``r`` and within classes ``intra`` from
    the last assembly ``asm``: entries of representatives (and second members) it had
    are copied, then probed again where a pair is ``stale``; the rest are probed."""
    old_reps, old_seconds, old_r, old_intra = asm
    k = len(reps)
    at = {rep: a for a, rep in enumerate(old_reps)}
    was = [at.get(rep, -1) for rep in reps]
    intra = np.ones(k, dtype=bool)
    if k == len(old_reps) and was == list(range(k)):  # the same classes: a plain copy
        r = old_r.copy()
    else:
        r = np.ones((k, k), dtype=bool)
        kept = [a for a in range(k) if was[a] >= 0]
        if kept:
            old = [was[a] for a in kept]
            r[np.ix_(kept, kept)] = old_r[np.ix_(old, old)]
    for a in range(k):
        ra = reps[a]
        if was[a] < 0:
            row = r[a]
            for b in range(k):
                if a != b:
                    row[b] = get(ra, reps[b])
                    r[b, a] = get(reps[b], ra)
        if seconds[a] >= 0:
            intra[a] = (old_intra[was[a]] if was[a] >= 0 and seconds[a] == old_seconds[was[a]]
                        else get(ra, seconds[a]))
    pos = {rep: a for a, rep in enumerate(reps)}
    rows, cols, vals = [], [], []  # set at once: numpy's per-item assignment is slow
    for i, j in stale:
        a = pos.get(i)
        if a is None:
            continue
        if j == seconds[a]:
            intra[a] = get(i, j)
        b = pos.get(j)
        if b is not None and b != a:
            rows.append(a)
            cols.append(b)
            vals.append(get(i, j))
    if rows:
        r[rows, cols] = vals
    return r, intra


class ReachabilityOracle:
    """All-pairs probe matrix over ``net.probe_order()``.

    Two caches: whole matrices keyed by every node's content (a step that changes
    nothing, or returns to a state seen before, costs a dictionary lookup), and single
    probes with the nodes they read (:class:`~netarena_gym.routing.pair_store.PairStore`):
    when a node changes, only the probes that read it are walked again. ``base``: the
    probes of the same network in its pristine state, shared read-only."""

    def __init__(self, net: Network, timeout_s: float = 0.2, cache_size: int = 512,
                 base: PairStore | None = None):
        self.net = net
        self.timeout_s = timeout_s
        self.names = net.probe_order()
        self.index = {n: i for i, n in enumerate(self.names)}
        self._nodes = [net.nodes[n] for n in self.names]
        self._dst = [net.probe_ip[n] for n in self.names]
        self._state_ids: dict[tuple, int] = {}
        self._node_state = [(-1, -1)] * len(self._nodes)  # (version, state id)
        self._cache: dict[tuple, np.ndarray] = {}
        self._cache_size = cache_size
        self._last_version = -1
        self._last: np.ndarray | None = None
        self.pairs = PairStore(net, self._nodes, self._dst, timeout_s, base)
        self._seen: list[int] | None = None  # state ids the pair store reflects
        self._prefixes: dict[int, frozenset] = {}  # state id -> long prefixes
        self._asm = None  # (reps, seconds, r, intra) of the last assembly
        self._fps: list[tuple] = []  # state id -> fingerprint
        self._pristine_fps: dict[int, tuple] | None = None  # routers untouched at the start

    def _key(self) -> tuple:
        """One small int per node naming its configuration: negative for a node untouched
        since the build (no fingerprint needed), else an id interned from its content."""
        key = []
        for i, node in enumerate(self._nodes):
            ver, sid = self._node_state[i]
            if ver != node.version:
                if node.version == 0:
                    self._node_state[i] = (0, -1 - i)
                    key.append(-1 - i)
                    continue
                fp = node.fingerprint()
                sid = self._state_ids.get(fp)
                if sid is None:
                    sid = len(self._state_ids)
                    self._state_ids[fp] = sid
                    self._fps.append(fp)
                self._node_state[i] = (node.version, sid)
            key.append(sid)
        return tuple(key)

    def matrix(self) -> np.ndarray:
        """Boolean matrix ``m[i, j]``: node i reaches node j (diagonal True). Read-only."""
        if self._last is not None and self._last_version == self.net.version:
            return self._last
        key = self._key()
        m = self._cache.get(key)
        if m is None:
            # the computation makes many small acyclic records: no collector passes over
            # the (large) heap while it runs; reference counting frees them
            with paused_gc():
                m = self._compute(key)
            if len(self._cache) >= self._cache_size:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = m
        self._last, self._last_version = m, self.net.version
        return m

    def _compute(self, key: tuple) -> np.ndarray:
        """Probe one representative per equivalence class of hosts (same segment, never
        reconfigured, not told apart by any prefix longer than /24 anywhere in the
        network), then expand. Hosts of a class behave identically as sources and
        destinations, so this is exact, and it divides the work by the hosts per subnet.
        Only the probes that read a node changed since the last computation are walked."""
        seen = self._seen
        if seen is None:
            # a fresh store trusts only its base, whose nodes are the pristine ones
            changed = [i for i, s in enumerate(key) if s >= 0]
            # routers' pristine content, to tell what changed (a base has it)
            if self.pairs.base is None:
                self._pristine_fps = {i: n.fingerprint() for i, n in enumerate(self._nodes)
                                      if n.kind == "router" and key[i] < 0}
        else:
            changed = [i for i, (a, b) in enumerate(zip(seen, key)) if a != b]
        changed = [(i, self._change(i, seen[i] if seen else -1 - i, key[i])) for i in changed]
        stale = self.pairs.invalidate(changed)
        self._seen = list(key)
        classes, cls_of = host_classes(self._nodes, self._dst, self.net.segment_of,
                                       self._prefixes_of)
        reps = [c[0] for c in classes]
        seconds = [c[1] if len(c) > 1 else -1 for c in classes]
        get = self.pairs.get
        k = len(classes)
        asm = self._asm
        if asm is None and seen is None and self.pairs.base is not None:
            asm = self.pairs.base.asm  # the pristine network's, patched below
        if asm is not None:
            r, intra = patch_assembly(asm, reps, seconds, stale, get)
        else:
            r = np.ones((k, k), dtype=bool)
            intra = np.ones(k, dtype=bool)
            for a in range(k):
                ra = reps[a]
                row = r[a]
                for b in range(k):
                    if a != b:
                        row[b] = get(ra, reps[b])
                if seconds[a] >= 0:
                    intra[a] = get(ra, seconds[a])
        self._asm = (reps, seconds, r, intra)
        self.pairs.release()
        same = cls_of[:, None] == cls_of[None, :]
        m = np.where(same, intra[cls_of][:, None], r[np.ix_(cls_of, cls_of)])
        np.fill_diagonal(m, True)
        m.flags.writeable = False
        return m

    @property
    def assembly(self) -> tuple | None:
        """``(reps, seconds, r, intra)`` of the last computation: the class
        representatives, each class's second member (-1: none), the probes between
        representatives and within each class. A base keeps its pristine network's."""
        return self._asm

    def _fingerprint_of(self, i: int, sid: int) -> tuple | None:
        if sid >= 0:
            return self._fps[sid]
        fp = (self._pristine_fps or {}).get(i)
        if fp is None and self.pairs.base is not None:
            fp = self.pairs.base.fps[i]  # the same network, pristine
        return fp

    def _change(self, i: int, old: int, new: int) -> NodeChange | None:
        """What node ``i``'s change from state ``old`` to ``new`` can do to the probes
        that read it (:func:`~netarena_gym.routing.matrix_cache.node_change`); None:
        anything, or the old content is not known."""
        a, b = self._fingerprint_of(i, old), self._fingerprint_of(i, new)
        if a is None or b is None:
            return None
        from netarena_gym.routing.grader import PING_PACKET  # grader re-exports this module
        return node_change(a, b, PING_PACKET)

    def _prefixes_of(self, i: int) -> frozenset:
        sid = self._node_state[i][1]
        p = self._prefixes.get(sid)
        if p is None:
            p = self._prefixes[sid] = long_prefixes(self._nodes[i])
        return p
