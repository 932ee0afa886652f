"""The expert must reach 100% correctness and 100% safety at every level, deciding from
observations only."""
import gymnasium as gym
import pytest

from netarena_gym.agents import play_episode, summarize
from netarena_gym.k8s.expert import K8sExpert
from tests.k8s.conftest import ENV_ID

EPISODES = {1: 300, 2: 300, 3: 300, "compat": 300}


@pytest.mark.parametrize("level", [1, 2, 3, "compat"])
def test_expert_is_perfect(level):
    env = gym.make(ENV_ID, level=level)
    expert = K8sExpert()
    results = [play_episode(env, expert, seed=5000 + i) for i in range(EPISODES[level])]
    failures = [r.scenario for r in results if not (r.correct and r.safe and r.safe_compat)]
    assert not failures, failures[:3]
    s = summarize(results)
    assert s["correctness"] == 1.0 and s["safety"] == 1.0


def test_expert_solves_blind_start_and_compat_probes():
    env = gym.make(ENV_ID, level=2, initial_report=False)
    res = [play_episode(env, K8sExpert(), seed=i) for i in range(40)]
    assert all(r.correct and r.safe for r in res)


def test_expert_uses_only_observations():
    env = gym.make(ENV_ID, level=3)
    obs, info = env.reset(seed=3)
    a, b = K8sExpert(), K8sExpert()
    for _ in range(4):
        x, y = a.act(obs, {}), b.act(obs, {})
        assert x == y
        obs, r, term, trunc, info = env.step(x)
        if term:
            break


@pytest.mark.parametrize("level", [1, 2, 3])
def test_expert_is_perfect_on_the_large_app(level):
    """The generated 120-service app (``app="large"``): the same expert, from observations
    only, solves every episode safely."""
    env = gym.make(ENV_ID, level=level, app="large")
    results = [play_episode(env, K8sExpert(), seed=7000 + i) for i in range(12)]
    failures = [r.scenario for r in results if not (r.correct and r.safe)]
    assert not failures, failures[:3]
    assert all(r.scenario["params"]["app"] == "large" for r in results)


def _listings():
    """Texts of kubectl get -o json as the agent sees them: Lists of several kinds, one
    kind, no items, and one object (not a List)."""
    from netarena_gym.k8s.expert import INSPECT, last_output
    env = gym.make(ENV_ID, level=2)
    env.reset(seed=11)
    cmds = [INSPECT, "kubectl get pods -o json", "kubectl get pods -l app=none -o json",
            "kubectl get service frontend -o json", INSPECT]
    return [last_output(env.step({"command": c})[0]) for c in cmds]


def test_plan_memo_load_parses_as_json_loads():
    import json
    from netarena_gym.k8s.expert import PlanMemo
    memo = PlanMemo()
    texts = _listings()
    assert '"items": []' in texts[2] and '"items"' not in texts[3]
    for t in texts + [json.dumps(json.loads(texts[0]))]:   # and a compact text, parsed whole
        assert memo.load(t) == json.loads(t)
    first, again = memo.load(texts[0])["items"], memo.load(texts[4])["items"]
    assert all(a is b for a, b in zip(first, again))   # an item's text is parsed once


def test_plan_memo_load_cuts_only_between_items():
    """A value holding the text of an item boundary (escaped, as JSON strings hold
    newlines) stays one value; broken text fails as json.loads fails."""
    import json
    from netarena_gym.k8s.expert import PlanMemo
    tricky = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
              "items": [{"kind": "Pod", "metadata": {"name": "a\n        },\n        {\n"}},
                        {"kind": "Pod", "metadata": {"name": "b"}}]}
    text = json.dumps(tricky, indent=4, sort_keys=True)
    assert PlanMemo().load(text) == tricky
    with pytest.raises(json.JSONDecodeError):
        PlanMemo().load(text[:-40])
