"""The policy engine's per-slot bookkeeping: per destination slot, the masks each active
policy contributes (``{policy key: mask}``) and their union, brought up to date after a
change by what left and what came (see :mod:`netarena_gym.k8s.grader`)."""
from __future__ import annotations


def move_part(by_slot: list, delta: dict, old, old_part: dict | None, new, new_part: dict | None) -> None:
    """Replace policy ``old``'s masks per slot (``old_part``, None: none) by policy
    ``new``'s (``new_part``) in ``by_slot``, noting in ``delta`` (slot -> [bits gone, bits
    come]) what changed; equal parts only change the key."""
    if old_part is not None and new_part is not None and old_part == new_part:
        for s in new_part:
            d = by_slot[s]
            d[new] = d.pop(old)
        return
    if old_part:
        for s, m in old_part.items():
            del by_slot[s][old]
            d = delta.get(s)
            if d is None:
                delta[s] = d = [0, 0]
            d[0] |= m
    if new_part:
        for s, m in new_part.items():
            by_slot[s][new] = m
            d = delta.get(s)
            if d is None:
                delta[s] = d = [0, 0]
            d[1] |= m


def merge_delta(acc: list, by_slot: list, delta: dict) -> None:
    """Bring the per-slot unions ``acc`` up to date after the changes in ``delta`` (slot ->
    [bits of the removed masks, bits of the added masks]): a slot that lost no bit only
    the removed masks held is OR-ed with the added ones, the others are recomputed."""
    for s, (gone, came) in delta.items():
        if gone & ~came:
            m = 0
            for v in by_slot[s].values():
                m |= v
            acc[s] = m
        else:
            acc[s] |= came
