"""Eval table groups: unordered fault sets, per type, folding, one naming in all tasks."""
from __future__ import annotations

import gymnasium as gym
import pytest

from netarena_gym.eval import EvalSpec, evaluate
from netarena_gym.eval.groups import ALL, category, fault_types, groups_of, table


def rec(level, types, *, correct=True, key=None):
    return {"key": key, "level": level, "correct": correct, "safe": True,
            "safe_compat": True, "steps": 2, "agent_seconds": 0.0,
            "scenario": {"faults": [{"type": t} for t in types], "meta": {}}}


def test_fault_order_does_not_split_a_category():
    assert category(rec(2, ["b", "a"])) == category(rec(2, ["a", "b"])) == "a+b"
    assert category(rec(3, ["b", "a", "b"])) == "a+b+b"  # a multiset: repeats stay
    assert groups_of(rec(3, ["b", "a", "b"]), "type") == ["a", "b"]
    assert groups_of(rec(1, ["a"]), "level") == []


def test_small_rows_fold_into_other_and_each_level_ends_with_all():
    recs = ([rec(2, ["a", "b"]) for _ in range(3)] + [rec(2, ["b", "a"]) for _ in range(3)]
            + [rec(2, ["c", "a"]), rec(2, ["d"], correct=False), rec(2, ["e"])]
            + [rec(1, ["a"]) for _ in range(5)])
    for i, r in enumerate(recs):
        r["key"] = f"E|{r['level']}|{i}"
    t = table(recs, "category")
    assert list(t) == ["1", "2"]
    assert list(t["2"]) == ["a+b", "other (n<5)", ALL]
    assert t["2"]["a+b"]["episodes"] == 6
    assert t["2"]["other (n<5)"]["episodes"] == 3 and t["2"]["other (n<5)"]["folded"] == 3
    assert t["2"]["other (n<5)"]["correctness"] == pytest.approx(2 / 3)
    assert t["2"][ALL]["episodes"] == 9 and list(t["1"]) == ["a", ALL]
    by_type = table(recs, "type")["2"]
    assert by_type["a"]["episodes"] == 7 and by_type["b"]["episodes"] == 6
    assert by_type["other (n<5)"]["episodes"] == 3  # c, d and e
    assert list(table(recs, "level")["2"]) == [ALL]
    one_small = table(recs[:7], "category")["2"]  # a single small row keeps its name
    assert list(one_small) == ["a+b", "a+c", ALL]


@pytest.mark.parametrize("env_id, expect", [
    ("NetArena-Routing-v0", "remove_ip"),
    ("NetArena-K8sPolicy-v0", "change_port"),
    ("NetArena-CapacityPlanning-v0", "list"),
])
def test_every_task_names_categories_by_its_faults_or_template(env_id, expect):
    env = gym.make(env_id, level=2 if "CapacityPlanning" not in env_id else 1)
    names, types = set(), set()
    for seed in range(12):
        _, info = env.reset(seed=seed)
        r = {"scenario": info["scenario"]}
        names.add(category(r))
        types.update(fault_types(r))
    env.close()
    assert not any(n.startswith("L") and n[1:].isdigit() for n in names), names
    assert expect in types or any(expect in n for n in names), names
    if "CapacityPlanning" not in env_id:  # two faults per level-2 episode, sorted
        assert all(n.count("+") == 1 and n.split("+") == sorted(n.split("+")) for n in names)


def test_summary_holds_the_tables_of_every_grouping():
    s = evaluate(EvalSpec("NetArena-Routing-v0", levels=(1, 3), episodes=12, seed=4,
                          agent="random"), progress=False)
    assert set(s["tables"]) == {"category", "type", "level"}
    for by, t in s["tables"].items():
        assert set(t) == {"1", "3"}
        for lv, rows in t.items():
            assert rows[ALL]["episodes"] == 12
            small = [g for g, b in rows.items()
                     if g not in (ALL, "other (n<5)") and b["episodes"] < 5]
            assert len(small) <= 1 and not (small and "other (n<5)" in rows), rows.keys()
    cats = s["tables"]["category"]["3"]
    assert sum(b["episodes"] for g, b in cats.items() if g != ALL) == 12
