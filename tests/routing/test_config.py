"""The routing config: ``compat_profile`` (the paper's image, or the AgentBeats
leaderboard's without iptables) and ``netem_faults``, validated when the env is made."""
import gymnasium as gym
import pytest

import netarena_gym  # noqa: F401
from netarena_gym.errors import InvalidConfig, ScenarioError
from netarena_gym.routing.config import COMPAT_PROFILES, RoutingConfig
from netarena_gym.routing.env import RoutingEnv
from netarena_gym.routing.faults import Fault
from netarena_gym.routing.generator import RoutingGenerator

from .conftest import scenario

INERT = {("disable_routing", 2), ("disable_routing", 4), ("drop_traffic_to_from_subnet", 1),
         ("drop_traffic_to_from_subnet", 2), ("drop_traffic_to_from_subnet", 3)}


def test_unknown_profile_lists_the_valid_ones():
    with pytest.raises(InvalidConfig, match="'paper', 'agentbeats'.*got 'leaderboard'"):
        RoutingConfig(level="compat", compat_profile="leaderboard")
    with pytest.raises(InvalidConfig, match="level='compat'"):
        RoutingEnv(level=2, compat_profile="agentbeats")
    with pytest.raises(InvalidConfig, match="netem_faults"):
        RoutingEnv(level=1, netem_faults="yes")
    assert RoutingConfig().compat_profile == "paper" and set(COMPAT_PROFILES) == {"paper", "agentbeats"}


def test_agentbeats_has_no_iptables_for_the_agent():
    env = gym.make("NetArena-Routing-v0", level="compat", compat_profile="agentbeats")
    env.reset(seed=0)
    _, reward, _, _, info = env.step({"machine": "r0", "command": "iptables -L -n"})
    assert (info["command_status"], info["command_kind"]) == (127, "invalid")
    assert reward == pytest.approx(-0.06)


@pytest.mark.parametrize("ftype,method", sorted(INERT))
def test_iptables_faults_are_inert_under_agentbeats(ftype, method):
    params = {"subnet": "192.168.2.0/24"} if (ftype, method) != ("disable_routing", 2) else {}
    f = Fault(ftype, method, "r0", params)
    sc = scenario([f], {"hosts": [[2, 2]], "parents": []}, level="compat")
    paper = gym.make("NetArena-Routing-v0", level="compat")
    beats = gym.make("NetArena-Routing-v0", level="compat", compat_profile="agentbeats")
    _, i_paper = paper.reset(options={"scenario": sc})
    _, i_beats = beats.reset(options={"scenario": sc})
    assert i_paper["broken_pairs"] > 0 and i_beats["broken_pairs"] == 0
    _, _, term, _, info = beats.step({"machine": "r0", "command": "ip route show"})
    assert term and info["correct"]  # upstream: success at iteration 1


def test_agentbeats_draws_the_papers_scenarios_and_keeps_other_faults():
    paper = gym.make("NetArena-Routing-v0", level="compat")
    beats = gym.make("NetArena-Routing-v0", level="compat", compat_profile="agentbeats")
    healthy = 0
    for seed in range(30):
        _, a = paper.reset(seed=seed)
        _, b = beats.reset(seed=seed)
        assert a["scenario"] == b["scenario"]
        faults = {(f["type"], f["method"]) for f in a["scenario"]["faults"]}
        if not faults <= INERT:
            assert b["broken_pairs"] > 0, faults  # sysctl, ip, ifconfig faults still bite
        healthy += b["broken_pairs"] == 0
    assert healthy > 0


def test_netem_episode_is_refused_on_a_backend_without_netem():
    env = gym.make("NetArena-Routing-v0", level=1)
    env.unwrapped.backend.capabilities = frozenset()  # as the Mininet backend here
    f = Fault("disable_interface", 4, "r0", {"interface": "r0-eth1", "loss_pct": 60})
    with pytest.raises(ScenarioError, match="DI4 need netem"):
        env.reset(options={"scenario": scenario([f])})
    assert RoutingGenerator(1, netem_faults=True).netem_faults
