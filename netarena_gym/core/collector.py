"""Pausing CPython's cyclic garbage collector (:mod:`gc`) around work that builds many
long-lived objects.

A routing reset builds a whole network (thousands of objects at 64 routers) that lives for
the episode, and a probe-matrix computation makes many small acyclic records. Left on, the
collector runs its young generations many times over objects that all survive, and promotes
them fast enough to trigger full collections of the whole heap every few resets. Reference
counting still frees everything acyclic at once; what the body leaves as cyclic garbage is
collected at the next pass after the collector is back on.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

_lock = threading.Lock()
_pause = {"depth": 0, "was_enabled": False}


@contextmanager
def paused_gc():
    """Run the body with the cyclic garbage collector paused (``gc.disable()``). Nested and
    concurrent uses (threads of one process) share one count: the outermost exit turns the
    collector back on if it was on at the outermost entry, so a collector the caller turned
    off stays off."""
    with _lock:
        if _pause["depth"] == 0:
            _pause["was_enabled"] = gc.isenabled()
            gc.disable()
        _pause["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _pause["depth"] -= 1
            if _pause["depth"] == 0 and _pause["was_enabled"]:
                gc.enable()
