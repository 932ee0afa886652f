"""The pristine bases kept per topology: bounded by count and by the ints they hold, the
least recently used forgotten first, and one forgotten made again alike when it recurs."""
from netarena_gym.routing import pristine
from netarena_gym.routing.shapes import shape_spec

SPECS = [shape_spec(shape, [(1,)] * 8) for shape in ("tree", "ring", "leaf-spine")]


def _base(spec):
    return pristine.base_for(spec, False, 0.2, recurring=True)


def test_the_kept_bases_stay_within_their_weight(monkeypatch):
    pristine.clear()
    try:
        weights = [_base(s).weight for s in SPECS]
        assert pristine.weight() == sum(weights)  # all fit by default
        pristine.clear()
        # room for two: making the third forgets the least recently used, the first
        monkeypatch.setattr(pristine, "MAX_BASE_WEIGHT", weights[0] + weights[1])
        first, second = _base(SPECS[0]), _base(SPECS[1])
        assert _base(SPECS[0]) is first  # used again: now the second is the oldest
        third = _base(SPECS[2])
        assert pristine.weight() <= weights[0] + weights[2]
        assert _base(SPECS[0]) is first and _base(SPECS[2]) is third
        again = _base(SPECS[1])  # forgotten, made again alike
        assert again is not second and again.res == second.res
        # a base above the whole budget is still kept (alone)
        monkeypatch.setattr(pristine, "MAX_BASE_WEIGHT", 1)
        pristine.clear()
        assert _base(SPECS[0]) is _base(SPECS[0]) and pristine.weight() == weights[0]
        assert _base(SPECS[1]) is not None and pristine.weight() == weights[1]
    finally:
        pristine.clear()
