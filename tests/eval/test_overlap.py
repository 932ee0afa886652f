"""The overlap analysis: sample sizes never exceed the episodes the runs share."""
from __future__ import annotations

import pytest

from netarena_gym.eval.overlap import overlap_curve, sample_sizes


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 30, 49, 50, 51, 120])
def test_sample_sizes_never_exceed_the_population(n):
    sizes = sample_sizes(n)
    assert sizes[-1] == n and all(1 <= s <= n for s in sizes)
    assert sizes == sorted(set(sizes))


def test_runs_sharing_exactly_one_episode_have_a_curve():
    cur = overlap_curve({"a": {"e|1|0": True}, "b": {"e|1|0": False, "e|1|1": True}},
                        subsamples=5)
    assert cur["n"] == [1] and cur["paired"] and len(cur["share"]) == 1


def test_unpaired_runs_of_one_episode_have_a_curve():
    cur = overlap_curve({"a": {"x|1|0": True}, "b": {"y|1|5": False}}, subsamples=3)
    assert cur["n"] == [1] and not cur["paired"]
