import json

import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.agents.random import RandomAgent
from netarena_gym.agents.episode import play_episode

ENV = "NetArena-Routing-v0"



def test_reset_is_deterministic_and_seeds_differ():
    env = gym.make(ENV, level=2)
    o1, i1 = env.reset(seed=7)
    o2, i2 = env.reset(seed=7)
    assert o1 == o2 and i1["scenario"] == i2["scenario"]
    o3, i3 = env.reset(seed=8)
    assert i3["scenario"] != i1["scenario"]



def test_text_observation_has_pingall_output_and_steps():
    env = gym.make(ENV, level=1)
    obs, info = env.reset(seed=1)
    assert obs.startswith("Pingall result:\n*** Ping: testing ping reachability\n")
    assert "*** Results:" in obs and "Steps left: 15" in obs
    assert info["loss_pct"] > 0 and not info["correct"]
    obs, r, term, trunc, info = env.step({"machine": "r0", "command": "ip route show"})
    assert "Machine: r0\nCommand: ip route show\nOutput:\n" in obs
    assert "proto kernel scope link" in obs and "Steps left: 14" in obs
    assert info["reward_components"]["step"] == pytest.approx(-0.01)


@pytest.mark.parametrize("action,kind,component", [
    ("this is not json", "invalid", "invalid"),
    ('{"machine": "r0"}', "invalid", "invalid"),
    ({"machine": "r9", "command": "ip a"}, "invalid", "invalid"),
    ({"machine": "r0", "command": "rm -rf /"}, "refused", "refused"),
    ({"machine": "r0", "command": "ip netns add x"}, "refused", "refused"),
    ({"machine": "s1", "command": "ip a"}, "refused", "refused"),
    ({"machine": "r0", "command": "ip a | sh"}, "refused", "refused"),
    ({"machine": "r0", "command": "echo $(id)"}, "refused", "refused"),
    ({"machine": "r0", "command": "ipx addr"}, "invalid", "invalid"),
    ({"machine": "r0", "command": "ping 192.168.1.100"}, "timeout", "timeout"),
])
def test_bad_actions_are_penalised_not_raised(action, kind, component):
    env = gym.make(ENV, level=1)
    env.reset(seed=3)
    obs, r, term, trunc, info = env.step(action)
    assert info["command_kind"] == kind
    assert info["reward_components"][component] < 0
    assert "Output:" in obs
    assert info[{"invalid": "invalid", "refused": "refused", "timeout": "timeouts"}[kind]] == 1


def test_refused_message_is_clear():
    env = gym.make(ENV, level=1)
    env.reset(seed=3)
    obs, *_ = env.step({"machine": "r0", "command": "reboot"})
    assert "netarena: command refused: 'reboot' is not an operator command" in obs


def test_replay_recorded_scenario():
    env = gym.make(ENV, level=3)
    _, info = env.reset(seed=5)
    rec = json.loads(json.dumps(info["scenario"]))
    obs1, _ = env.reset(seed=99)
    obs2, info2 = env.reset(options={"scenario": rec})
    env2 = gym.make(ENV, level=3)
    obs3, _ = env2.reset(seed=5)
    assert obs2 == obs3 and info2["scenario"] == rec


def test_truncation_and_success_reward():
    env = gym.make(ENV, level=1, max_steps=2)
    env.reset(seed=4)
    *_, term, trunc, info = env.step({"machine": "r0", "command": "ip addr show"})
    assert not term and not trunc
    *_, term, trunc, info = env.step({"machine": "r0", "command": "ip addr show"})
    assert trunc and not term


def test_discrete_interface_masks_and_rendering():
    env = gym.make(ENV, level=1, interface="discrete")
    obs, info = env.reset(seed=2)
    mask = env.unwrapped.action_masks()
    assert mask.dtype == bool and mask.sum() == obs["action_mask"].sum() > 0
    invalid = int(np.flatnonzero(~mask)[0])
    obs, r, *_ , info = env.step(invalid)
    assert info["command_kind"] == "invalid"
    # inspecting r0 fills its features (partial observability)
    assert obs["router_features"][0, 0] == 0
    obs, *_ = env.step(0)
    assert obs["router_features"][0, 0] == 1
    assert obs["reachability"].shape == (env.unwrapped.dims.nodes,) * 2


def test_full_observability_text_has_configuration():
    env = gym.make(ENV, level=1, observability="full")
    obs, _ = env.reset(seed=1)
    assert "Configuration of every node:" in obs and "### r0" in obs and "-P FORWARD" in obs


def test_history_window():
    env = gym.make(ENV, level=1, history=3)
    env.reset(seed=1)
    for c in ("ip link show", "ip rule show", "iptables -S"):
        obs, *_ = env.step({"machine": "r0", "command": c})
    assert "History (oldest first):" in obs and "Command: ip link show" in obs


def test_history_shows_that_many_previous_steps_and_no_empty_header():
    """history=N showed N-1 previous steps (history=1 never showed one), and the first
    step printed an empty "History" header."""
    env = gym.make(ENV, level=1, history=2)
    env.reset(seed=1)
    obs, *_ = env.step({"machine": "r0", "command": "ip link show"})
    assert "History" not in obs
    for c in ("ip rule show", "iptables -S", "ip route show"):
        obs, *_ = env.step({"machine": "r0", "command": c})
    past = obs.split("History (oldest first):", 1)[1].split(env.unwrapped._state_text(), 1)[0]
    assert "ip rule show" in past and "iptables -S" in past and "ip link show" not in past
    assert "ip route show" not in past  # the current step is shown after the state, once


def test_random_agent_runs_text_and_discrete():
    for interface in ("text", "discrete"):
        env = gym.make(ENV, level=2, interface=interface)
        res = play_episode(env, RandomAgent(env, seed=0), seed=1)
        assert res.steps >= 1


def test_reset_pauses_the_collector_and_restores_its_state(monkeypatch):
    import gc

    from netarena_gym.routing import env as routing_env
    seen = []
    e = gym.make("NetArena-Routing-v0", level=1)
    inner = routing_env.RoutingEnv._generate

    def spy(self, rng, options):
        seen.append(gc.isenabled())
        return inner(self, rng, options)
    monkeypatch.setattr(routing_env.RoutingEnv, "_generate", spy)
    try:
        assert gc.isenabled()
        e.reset(seed=1)
        assert seen == [False] and gc.isenabled()
        gc.disable()  # a caller that turned it off keeps it off
        e.reset(seed=2)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_replayed_fault_on_a_router_the_topology_lacks_is_refused():
    """It was injected nowhere: the episode started solved and paid the success reward."""
    import gymnasium as gym
    from netarena_gym.errors import ScenarioError
    env = gym.make("NetArena-Routing-v0")
    rec = env.reset(seed=0)[1]["scenario"]
    rec["faults"][0]["router"] = "r99"
    with pytest.raises(ScenarioError, match=r"faults on routers \['r99'\]"):
        env.reset(options={"scenario": rec})


# ------------------------------------------------------------- compat: upstream's loop
DI2 = {"errortype": "disable_interface", "errordetail": {"interface": "r0-eth2", "method": 2}}


def _compat(query, **kw):
    from netarena_gym.routing.env import RoutingEnv
    from netarena_gym.routing.generator import import_upstream
    env = RoutingEnv(level="compat", **kw)
    obs, info = env.reset(options={"scenario": import_upstream({"queries": [query]})[0].to_dict()})
    return env, obs, info


@pytest.mark.parametrize("last,correct,safe_compat", [
    ("ip link set r0-eth2 up", False, True),     # a fix on the 10th command: upstream fails
    ("ip link set r0-eth1 down", False, True),   # a break on it: upstream stays safe
])
def test_compat_runs_the_last_command_but_never_measures_it(last, correct, safe_compat):
    """Upstream route measures before each command (spec 3.1): the command of the last
    iteration runs but is never measured."""
    env, _, _ = _compat(DI2)
    for _ in range(9):
        env.step({"machine": "r0", "command": "ip addr show"})
    _, _, term, trunc, info = env.step({"machine": "r0", "command": last})
    assert (term, trunc, info["correct"], info["safe_compat"]) == (False, True, correct,
                                                                   safe_compat)
    assert info["steps"] == 10 and info["loss_pct"] == 66
    m = env.backend.observe()
    assert m.all() if "up" in last else not m.all()  # it ran
    env.close()


def test_compat_measures_a_fix_before_the_last_command():
    env, _, _ = _compat(DI2)
    for _ in range(8):
        env.step({"machine": "r0", "command": "ip addr show"})
    _, _, term, trunc, info = env.step({"machine": "r0", "command": "ip link set r0-eth2 up"})
    assert (term, trunc, info["correct"], info["steps"]) == (True, False, True, 9)
    env.close()


def test_levels_1_to_3_measure_the_last_command():
    env = gym.make(ENV, level=1, max_steps=1).unwrapped
    env.reset(seed=1)
    _, _, _, trunc, info = env.step({"machine": "r0", "command": "ip link set r0-eth1 down"})
    assert trunc and info["steps"] == 1
    assert len(env.metrics.loss_history) == 2 and info["loss_pct"] > env.metrics.loss_history[0]


@pytest.mark.parametrize("query,kw", [
    ({"errortype": "disable_routing", "errordetail": {"method": 2}},
     {"compat_profile": "agentbeats"}),
    ({"errortype": "remove_ip", "errordetail": {"interface": "r0-eth2", "method": 3,
                                                "wrong_mask": 8}}, {}),
    ({"errortype": "remove_ip", "errordetail": {"interface": "r0-eth2", "method": 3,
                                                "wrong_mask": 16}}, {}),
])
def test_compat_query_that_starts_healthy_succeeds_at_iteration_1(query, kw):
    """Upstream measures first: a healthy start is a success at iteration 1 and the agent's
    answer is discarded, never run (spec 3.1)."""
    from netarena_gym.agents.summary import upstream_iterations
    env, _, info = _compat(query, **kw)
    assert info["correct"]
    obs, _, term, trunc, info = env.step({"machine": "r0", "command": "ip link set r0-eth1 down"})
    assert term and not trunc and info["correct"] and info["safe_compat"]
    assert info["steps"] == 0 and env.backend.observe().all()  # not run
    assert "does not run it" in obs
    rec = {"task": "routing", "correct": True, "steps": info["steps"], "max_steps": 10}
    assert upstream_iterations(rec) == 1
    env.close()


@pytest.mark.parametrize("command", [
    "ip link set r0-eth2 up && ping -c1 192.168.2.100",
    "ip link set r0-eth2 up; ethtool r0-eth2",
    "ip link set r0-eth2 up # frr",
])
def test_compat_skips_upstreams_blacklist_silently(command):
    """Upstream's safety_check: a case-sensitive substring match; the command is skipped
    whole, nothing is logged, the iteration counts."""
    env, _, _ = _compat(DI2)
    obs, _, term, _, info = env.step({"machine": "r0", "command": command})
    assert not term and not info["correct"] and info["steps"] == 1
    assert info["command_kind"] == "refused" and "Output:\n(no output)\n" in obs
    assert not env.backend.observe().all()
    _, _, term, _, _ = env.step({"machine": "r0", "command": "ip link set r0-eth2 up"})
    assert term
    env.close()


def test_levels_1_to_3_have_no_substring_blacklist():
    env = gym.make(ENV, level=1).unwrapped
    env.reset(seed=1)
    _, _, _, _, info = env.step({"machine": "r0", "command": "ip addr show # ping"})
    assert info["command_kind"] == "ok"


def test_compat_pingall_is_upstreams_parallel_ping_text():
    """Upstream's parallelPing prints the rows and the results line, no Mininet header."""
    _, obs, _ = _compat(DI2)
    assert obs.startswith("Pingall result:\nh1 -> X r0\nh2 -> X X\nr0 -> h1 X\n"
                          "*** Results: 66% dropped (2/6 received)\n")
