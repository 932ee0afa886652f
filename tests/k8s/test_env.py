"""The env on the simulator: both interfaces, check_env, determinism, replay, penalties."""
import gymnasium as gym
import numpy as np
import pytest

from netarena_gym.agents.random import RandomAgent
from netarena_gym.agents.episode import play_episode
from tests.k8s.conftest import ENV_ID



def test_reset_is_deterministic_and_replays():
    env = gym.make(ENV_ID, level=3)
    o1, i1 = env.reset(seed=7)
    o2, i2 = env.reset(seed=7)
    assert o1 == o2 and i1["scenario"] == i2["scenario"]
    assert env.reset(seed=8)[1]["scenario"] != i1["scenario"]
    o3, i3 = env.reset(options={"scenario": i1["scenario"]})
    assert o3 == o1
    with pytest.raises(ValueError):
        env.reset(options={"scenario": {**i1["scenario"], "task": "routing"}})



def test_text_observation_format_and_step():
    env = gym.make(ENV_ID, level=1)
    obs, info = env.reset(seed=1)
    assert obs.startswith("Connectivity check (121 probes, ")
    assert "Mismatch: " in obs and "(Expected: " in obs and "Steps left: 10" in obs
    obs, r, term, trunc, info = env.step({"command": "kubectl get networkpolicies"})
    assert "Command: kubectl get networkpolicies\nOutput:\nNAME " in obs
    assert info["reward_components"]["step"] == pytest.approx(-0.01)
    obs, *_ = env.step("kubectl get netpol -o name")  # a bare command line is accepted
    assert "networkpolicy.networking.k8s.io/adservice" in obs
    obs, *_ = env.step('```json\n{"command": "kubectl get svc emailservice"}\n```')
    assert "5000/TCP" in obs


def test_compat_probe_set_and_blind_start():
    env = gym.make(ENV_ID, level="compat", initial_report=False)
    obs, info = env.reset(seed=2)
    assert obs.startswith("Connectivity check: <NO PREVIOUS OUTPUT>")
    obs, *_ = env.step({"command": "kubectl get netpol"})
    assert obs.startswith("Connectivity check (92 probes, ")


def test_apply_through_stdin_fixes_a_policy():
    env = gym.make(ENV_ID, level=1, fault_types=("remove_ingress",))
    obs, info = env.reset(seed=3)
    pol = info["scenario"]["faults"][0]["policy"]
    yaml_text = open(f"netarena_gym/k8s/data/policies/network-policy-{'redis' if pol == 'redis-cart' else pol}.yaml").read()
    obs, r, term, trunc, info = env.step({"command": "kubectl apply -f -", "stdin": yaml_text})
    assert f"networkpolicy.networking.k8s.io/{pol} configured" in obs
    assert term and info["correct"] and info["safe"] and r > 0.9


@pytest.mark.parametrize("action,kind", [
    ("this is not json", "invalid"), ('{"cmd": "kubectl get pods"}', "invalid"),
    ({"command": "kubectl apply -f -", "stdin": 5}, "invalid"),
    ({"command": "kubectl exec frontend -- sh"}, "refused"),
    ({"command": "kubectl delete pod frontend"}, "refused"),
    ({"command": "bash -c 'kubectl get pods'"}, "refused"),
    ({"command": "kubectl get pods $(id)"}, "refused"),
    ({"command": "kubectl get netpol -w"}, "timeout"),
    ({"command": "kubectl patch netpol adservice --type=json -p '[{\"op\":\"replace\",\"path\":\"/spec/ingress/0/ports/0/port\",\"value\":70000}]'"}, "error"),
    ({"command": "kubectl bogus"}, "invalid"),
])
def test_bad_actions_are_penalised_not_raised(action, kind):
    env = gym.make(ENV_ID, level=1)
    env.reset(seed=3)
    obs, r, term, trunc, info = env.step(action)
    assert info["command_kind"] == kind
    assert "Output:" in obs or "invalid action" in obs
    if kind in ("invalid", "refused", "timeout"):
        assert info["reward_components"][kind] < 0


def test_safety_counts_pairs_broken_by_a_step():
    env = gym.make(ENV_ID, level=1, fault_types=("change_protocol",))
    env.reset(seed=1)
    obs, r, term, trunc, info = env.step({"command": "kubectl delete networkpolicy frontend"})
    assert info["newly_broken"] == 0  # frontend's policy allowed everything anyway
    obs, r, term, trunc, info = env.step(
        {"command": "kubectl patch netpol adservice --type=merge -p '{\"spec\":{\"ingress\":[]}}'"})
    assert info["newly_broken"] == 1 and not info["safe"]
    probes = env.unwrapped.metrics.current.size  # the safety penalty is a fraction of them
    assert probes > 1
    assert info["reward_components"]["safety"] == pytest.approx(-1.0 / probes)


def test_discrete_catalogue_renders_commands_that_run():
    env = gym.make(ENV_ID, level=2, interface="discrete")
    obs, info = env.reset(seed=5)
    base = env.unwrapped
    assert set(obs) == {"expected", "actual", "policy_features", "policy_peers", "action_mask"}
    valid = np.flatnonzero(info["action_mask"])
    assert len(valid) > 50
    for idx in valid[::7]:
        o, r, term, trunc, info = env.step(int(idx))
        assert info["command_kind"] in ("ok", "error"), base.catalogue.entries[idx]
        if term or trunc:
            env.reset(seed=6)
    o, r, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert info["command_kind"] == "invalid"


def test_random_agent_runs_on_both_interfaces():
    for interface in ("text", "discrete"):
        env = gym.make(ENV_ID, level=3, interface=interface)
        res = play_episode(env, RandomAgent(env, seed=1), seed=9)
        assert res.steps >= 1


def test_large_app_option():
    """``app="large"``: the generated 120-service app, replayable from its record; Online
    Boutique's records do not change; compat and the real backend refuse it."""
    from netarena_gym.errors import InvalidConfig
    env = gym.make(ENV_ID, level=2, interface="discrete", app="large")
    obs, info = env.reset(seed=4)
    assert info["scenario"]["params"]["app"] == "large"
    assert obs["actual"].shape == (121 * 120 - 120,) and env.action_space.n > 20000
    again = gym.make(ENV_ID, level=2, interface="discrete", app="large")
    obs2, _ = again.reset(options={"scenario": info["scenario"]})
    assert (obs2["actual"] == obs["actual"]).all()
    with pytest.raises(ValueError, match="app"):
        gym.make(ENV_ID, level=2).reset(options={"scenario": info["scenario"]})
    _, boutique = gym.make(ENV_ID, level=2).reset(seed=4)
    assert "app" not in boutique["scenario"]["params"]
    for kw in ({"app": "huge"}, {"app": "large", "level": "compat"},
               {"app": "large", "backend": "kubernetes"}):
        with pytest.raises(InvalidConfig):
            gym.make(ENV_ID, **{"level": 1, **kw})


def test_a_replayed_record_that_does_not_decode_is_a_scenario_error():
    """A policy field of the wrong type raised kubectl's DecodeError out of reset, and a
    namespace of 500 characters was taken."""
    import copy

    import gymnasium as gym
    from netarena_gym.errors import ScenarioError
    env = gym.make("NetArena-K8sPolicy-v0")
    rec = env.reset(seed=0)[1]["scenario"]
    bad = copy.deepcopy(rec)
    bad["faults"][0]["protocol"] = 5
    with pytest.raises(ScenarioError, match=r"does not decode: spec\.\w+\[\d+\]\.ports\[\d+\]\.protocol: "
                                            r"cannot convert int64 to v1\.Protocol"):
        env.reset(options={"scenario": bad})
    bad = copy.deepcopy(rec)
    bad["params"]["namespace"] = "x" * 500
    with pytest.raises(ScenarioError, match="is not a Kubernetes name"):
        env.reset(options={"scenario": bad})
    assert env.reset(options={"scenario": rec})[1]["scenario"] == rec


# ------------------------------------------------------------- compat: upstream's loop
ADSERVICE_PORT = {"policies_to_inject": ["network-policy-adservice"], "inject_error_num": [1],
                  "error_detail": [{"type": "change_port", "new_port": 1234}]}
REMOVE_CART_INGRESS = ("kubectl patch networkpolicy cartservice --type=json "
                       "-p '[{\"op\":\"remove\",\"path\":\"/spec/ingress/0\"}]'")


def _compat(entry, **kw):
    from netarena_gym.k8s.env import K8sPolicyEnv
    from netarena_gym.k8s.generator import import_upstream
    env = K8sPolicyEnv(level="compat", **kw)
    obs, info = env.reset(options={"scenario": import_upstream({"details": [entry]})[0].to_dict()})
    return env, obs, info


def test_compat_safety_has_no_baseline_before_the_first_check():
    """Upstream K8s checks only after commands and starts with prev = infinity: its first
    check is never unsafe (spec k8s 4.2); later ones compare with the one before."""
    env, _, _ = _compat(ADSERVICE_PORT)
    _, _, _, _, info = env.step({"command": REMOVE_CART_INGRESS})
    assert info["loss_pct"] > env.metrics.loss_history[0]  # more mismatches than injected
    assert info["safe_compat"] and not info["safe"]  # per-pair safety still sees the break
    _, _, _, _, info = env.step({"command": "kubectl patch networkpolicy currencyservice "
                                 "--type=json -p '[{\"op\":\"remove\",\"path\":\"/spec/ingress/0\"}]'"})
    assert not info["safe_compat"]
    env.close()


def test_levels_1_to_3_compare_the_first_step_with_the_injected_state():
    env = gym.make(ENV_ID, level=1).unwrapped
    env.reset(seed=0)
    _, _, _, _, info = env.step({"command": REMOVE_CART_INGRESS})
    assert info["loss_pct"] > env.metrics.loss_history[0] and not info["safe_compat"]


def test_compat_starts_blind_by_default_and_keeps_the_option():
    """Upstream's agent sees <NO PREVIOUS OUTPUT> before its first command (spec k8s 3.2)."""
    env, obs, _ = _compat(ADSERVICE_PORT)
    assert obs.startswith("Connectivity check: <NO PREVIOUS OUTPUT>")
    env.close()
    env, obs, _ = _compat(ADSERVICE_PORT, initial_report=True)
    assert obs.startswith("Connectivity check (92 probes, 1 mismatches):")
    env.close()
    obs, _ = gym.make(ENV_ID, level=1).reset(seed=0)
    assert obs.startswith("Connectivity check (")


@pytest.mark.parametrize("command", [
    "kubectl delete networkpolicy cartservice",
    "kubectl get networkpolicy # bash",
    "kubectl apply -f -",
])
def test_compat_skips_upstreams_blacklist(command):
    """Upstream's check_disallowed_commands (spec k8s 3.3): a case-sensitive substring
    blacklist; the command is not run, its output is 'Disallowed command detected.' and
    the iteration counts."""
    env, _, _ = _compat(ADSERVICE_PORT)
    before = env.unwrapped.backend.objects().policies if hasattr(env, "unwrapped") else None
    obs, _, _, _, info = env.step({"command": command, "stdin": ""})
    assert (info["command_kind"], info["command_status"]) == ("refused", 126)
    assert "Disallowed command detected." in obs and env.metrics.steps == 1
    # upstream's summary of the step, not a connectivity check (none ran)
    assert "Connectivity check: Skipped due to disallowed command." in obs
    assert "mismatches" not in obs
    assert env.backend.objects().policies == before  # nothing deleted
    obs, *_ = env.step({"command": "kubectl get networkpolicy", "stdin": ""})
    assert "Skipped due" not in obs and "mismatches):" in obs  # the next step is checked
    env.close()
    env = gym.make(ENV_ID, level=1).unwrapped  # levels 1-3 run kubectl delete as before
    env.reset(seed=0)
    _, _, _, _, info = env.step({"command": "kubectl delete networkpolicy cartservice"})
    assert info["command_kind"] == "ok"


def test_compat_a_blacklisted_step_is_not_checked():
    """Upstream skips a disallowed command without a check (spec k8s 3.3), so its safety
    reference does not move: a blacklisted first step leaves the next one without a
    baseline (never unsafe), as if it were the first."""
    env, _, _ = _compat(ADSERVICE_PORT)
    _, _, _, _, info = env.step({"command": "kubectl delete networkpolicy cartservice"})
    assert info["command_kind"] == "refused" and env.metrics.steps == 1
    _, _, _, _, info = env.step({"command": REMOVE_CART_INGRESS})
    assert info["loss_pct"] > env.metrics.loss_history[0]  # more mismatches than injected
    assert info["safe_compat"]
    env.close()
