import json

import numpy as np
import pytest

from netarena_gym.core.actions import ActionError, Catalogue, CatalogueEntry, parse_json_action
from netarena_gym.core.metrics import EpisodeMetrics, loss_percent
from netarena_gym.core.reward import RewardConfig
from netarena_gym.core.scenario import Scenario
from netarena_gym.core.stats import wilson_interval
from netarena_gym.errors import InvalidConfig


def test_parse_json_action_accepts_json_dict_and_fences():
    keys = ("machine", "command")
    assert parse_json_action('{"machine": "r0", "command": "ip a"}', keys) == {"machine": "r0", "command": "ip a"}
    assert parse_json_action({"machine": " r0 ", "command": "ip a"}, keys)["machine"] == "r0"
    fenced = '```json\n{"machine": "h1", "command": "ip r"}\n```'
    assert parse_json_action(fenced, keys)["machine"] == "h1"


@pytest.mark.parametrize("bad", ["not json", "[1,2]", '{"machine": "r0"}', '{"machine": 3, "command": "x"}',
                                 "x" * 5000, b"\xff\xfe", 42])
def test_parse_json_action_rejects_with_message(bad):
    with pytest.raises(ActionError) as e:
        parse_json_action(bad, ("machine", "command"))
    assert str(e.value)


def test_dict_action_values_become_plain_json_values():
    """A numpy number answer was compared as no number at all (graded wrong), and a value
    JSON cannot hold put its repr, a memory address, into the observation."""
    import enum

    class Size(enum.IntEnum):
        BIG = 3
    a = parse_json_action({"tool": "answer", "answer": np.int64(30),
                           "attrs": {"c": np.float32(1.5), "l": (np.bool_(True), Size.BIG),
                                     "a": np.arange(2), "s": np.str_("x")}},
                          ("tool",), optional=("answer", "attrs"))
    assert a["answer"] == 30 and type(a["answer"]) is int
    assert a["attrs"] == {"c": 1.5, "l": [True, 3], "a": [0, 1], "s": "x"}
    assert [type(v) for v in a["attrs"]["l"]] == [bool, int]
    for bad, says in ((object(), "type object"), ({1: 2}, "key 1"), ({"x"}, "type set"),
                      (b"x", "type bytes"), (np.bytes_(b"x"), "type bytes"),
                      (10**4300, "beyond 64 bits"), (np.uint64(2**63), "beyond 64 bits"),
                      ([1 << 63], "beyond 64 bits")):
        with pytest.raises(ActionError, match=says):
            parse_json_action({"tool": "answer", "answer": bad}, ("tool",),
                              optional=("answer",))


def test_catalogue_mask_and_render():
    c = Catalogue(4)
    c.set(1, CatalogueEntry("a", {"command": "x"}))
    c.set(2, CatalogueEntry("b", {"command": "y"}), valid=False)
    assert c.mask.tolist() == [0, 1, 0, 0]
    assert c.render(1) == {"command": "x"}
    for i in (0, 2, 7, -1):
        with pytest.raises(ActionError):
            c.render(i)


def test_metrics_per_pair_safety_vs_compat():
    m0 = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 1]], bool)
    met = EpisodeMetrics(initial=m0)
    # fix one pair, break another: loss unchanged, per-pair safety violated
    m1 = np.array([[1, 1, 0], [0, 1, 1], [1, 1, 1]], bool)
    assert met.update(m1) == 1
    assert not met.safe and met.safe_compat
    m2 = np.ones((3, 3), bool)
    assert met.update(m2) == 0 and met.correct
    assert met.loss_history == [33, 33, 0]


def test_compat_safety_flags_aggregate_increase():
    m0 = np.array([[1, 0], [1, 1]], bool)
    met = EpisodeMetrics(initial=m0)
    met.update(np.array([[1, 0], [0, 1]], bool))
    assert not met.safe_compat and not met.safe
    assert loss_percent(np.ones((4, 4), bool)) == 0


def test_reward_components_and_validation():
    rc = RewardConfig(step=-0.5)
    comps = rc.components(kind="refused", newly_broken=2, solved_now=False, progress_delta=0.0,
                          pairs=4)
    assert comps["refused"] == rc.refused and comps["safety"] == rc.safety / 2 and comps["step"] == -0.5
    assert RewardConfig.coerce({"success": 5}).success == 5
    with pytest.raises(ValueError):
        RewardConfig.coerce({"nope": 1})


def test_scenario_roundtrip_and_validation():
    s = Scenario(task="routing", level=2, params={"topology": {"hosts": [[1, 2]], "parents": []}},
                 faults=({"type": "remove_ip", "method": 1, "router": "r0", "params": {"interface": "r0-eth1"}},),
                 seed=5, meta={"category": "remove_ip"})
    assert Scenario.from_json(s.to_json()) == s
    assert Scenario.coerce(json.loads(s.to_json())) == s
    with pytest.raises(ValueError):
        Scenario.from_dict({"task": "routing"})
    with pytest.raises(ValueError):
        Scenario.from_dict({**s.to_dict(), "version": 99})


def test_wilson_interval():
    lo, hi = wilson_interval(50, 100)
    assert lo < 0.5 < hi and abs((lo + hi) / 2 - 0.5) < 1e-9
    lo, hi = wilson_interval(100, 100)
    assert hi == 1.0 and 0.95 < lo < 1.0


def test_plain_json_is_the_json_round_trip():
    """``plain_json`` gives what ``json.loads(json.dumps(v))`` gives, types included, as a
    fresh copy; what JSON would convert (non-str keys, str subclasses) or reject goes
    through the round trip itself."""
    import enum

    from netarena_gym.core.scenario import plain_json

    class Name(str):
        pass

    class Kind(enum.IntEnum):
        A = 1
    inner = {"x": (1, 2.5, -0.0)}
    cases = [{"a": (1, [2, (3, "s")]), "b": None, "c": True, "d": 1e300, "e": inner,
              "f": inner, "g": float("inf")},
             {1: "int key", None: 2, True: 3}, {"n": Name("sub")}, {"k": Kind.A},
             [(), {}, [[]]], "plain", 7]
    for v in cases:
        got, want = plain_json(v), json.loads(json.dumps(v))
        assert repr(got) == repr(want) and json.dumps(got) == json.dumps(want)
        assert type(got) is type(want)
    got = plain_json(cases[0])
    assert got["e"] is not got["f"] and got["e"] is not inner  # fresh, unshared copies
    with pytest.raises(TypeError):
        plain_json({"bad": object()})
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError):
        plain_json(loop)


def test_parse_category_forms_and_refusals():
    from netarena_gym.core.scenario import category_name, parse_category

    types = ("a", "b", "c")
    indexed = (("a",), ("b",), ("c",), ("a", "b"))
    assert parse_category("a+b", types, indexed) == ("a", "b")
    assert parse_category(" b + c ", types, indexed) == ("b", "c")
    assert parse_category(["c"], types, indexed) == ("c",)
    assert parse_category(3, types, indexed) == ("a", "b")
    assert parse_category(np.int64(0), types, indexed) == ("a",)
    assert category_name(parse_category(3, types, indexed)) == "a+b"
    for bad, says in [(4, "out of range"), (-1, "out of range"), ("x", "unknown fault types"),
                      ("a+", "unknown fault types"), ("", "unknown fault types"),
                      (True, "must be a name"), (1.5, "must be a name"), ({"a": 1}, "must be")]:
        with pytest.raises(InvalidConfig, match=says):
            parse_category(bad, types, indexed)
