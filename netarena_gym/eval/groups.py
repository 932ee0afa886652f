"""How eval tables and report figures group episodes: one naming for all three tasks.

Every episode record carries its scenario; its **category** is read from there the same
way in every task:

* routing and K8s: the unordered multiset of its fault types, sorted and joined with
  ``+`` (``disable_interface+remove_ip`` whichever fault was injected first; a type
  drawn twice appears twice);
* capacity planning: its query template (``list``, ``update-rank``, ``depth-3``...).

``--by`` picks the rows of a table, always within a level:

* ``category`` (default): one row per category;
* ``type``: one row per fault type (capacity planning: per template); an episode with
  faults of two types counts in both rows, so the rows may add up to more than the level;
* ``level``: the level's total only.

Rows with fewer than ``min_n`` (5) episodes fold into one ``other (n<5)`` row, so a level-3
table stays readable (a single small row keeps its name: folding it would only hide it);
each level ends with its ``(all)`` row.
"""
from __future__ import annotations

from typing import Any, Iterable

from netarena_gym.agents.summary import as_dict, block, category, dedupe, fault_types

BY = ("category", "type", "level")
MIN_N = 5
ALL = "(all)"


def other_label(min_n: int = MIN_N) -> str:
    return f"other (n<{min_n})"


def groups_of(rec: dict, by: str) -> list[str]:
    if by == "category":
        return [category(rec)]
    if by == "type":
        return sorted(set(fault_types(rec))) or ["none"]
    if by == "level":
        return []
    raise ValueError(f"--by: invalid choice {by!r}; valid: {', '.join(BY)}")


def _level_order(lv: str):
    return (0, int(lv), "") if lv.lstrip("-").isdigit() else (1, 0, lv)


def table(records: Iterable[Any], by: str = "category", *, min_n: int = MIN_N) -> dict:
    """``{level: {row: summary block}}`` in level order, rows by episode count (most
    first), the folded ``other`` row and ``(all)`` last. Blocks are
    :func:`netarena_gym.agents.summary.block` (episodes, correctness, safety, ...)."""
    recs = dedupe(as_dict(r) for r in records)
    by_level: dict[str, list[dict]] = {}
    for r in recs:
        by_level.setdefault(str(r.get("level")), []).append(r)
    out: dict[str, dict[str, dict]] = {}
    for lv in sorted(by_level, key=_level_order):
        lrecs = by_level[lv]
        rows: dict[str, list[dict]] = {}
        for r in lrecs:
            for g in groups_of(r, by):
                rows.setdefault(g, []).append(r)
        kept = {g: v for g, v in rows.items() if len(v) >= min_n}
        small = [g for g in rows if g not in kept]
        blocks = {g: block(v) for g, v in sorted(kept.items(), key=lambda kv: (-len(kv[1]), kv[0]))}
        if len(small) == 1:  # folding one row into "other" would only hide its name
            blocks[small[0]] = block(rows[small[0]])
        elif small:
            seen: dict[int, dict] = {}
            for g in small:
                for r in rows[g]:
                    seen[id(r)] = r
            blocks[other_label(min_n)] = {**block(list(seen.values())), "folded": len(small)}
        blocks[ALL] = block(lrecs)
        out[lv] = blocks
    return out


__all__ = ["ALL", "BY", "MIN_N", "category", "fault_types", "groups_of", "other_label",
           "table"]
