"""Lagrangian PPO: the penalty is ``lambda x info["cost"]``, and the multiplier rises while
the episode cost exceeds the limit and stays at 0 under a limit never reached."""
import gymnasium as gym
import numpy as np
import pytest

from netarena_gym.errors import InvalidConfig

from .conftest import ROUTING, requires_sb3


def breaking_step(env, seed):
    """(reward, info) of the first random step that newly breaks a pair."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    for _ in range(200):
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, r, term, trunc, info = env.step(a)
        if info["cost"] > 0:
            return r, info
        if term or trunc:
            obs, info = env.reset()
    raise AssertionError("no breaking action in 200 random steps")


def test_cost_penalty_subtracts_multiplier_times_cost():
    from netarena_gym.train.lagrangian import CostPenalty
    plain = gym.make(ROUTING, level=1, interface="discrete")
    wrapped = CostPenalty(gym.make(ROUTING, level=1, interface="discrete"), multiplier=0.5)
    r0, i0 = breaking_step(plain, 4)
    r1, i1 = breaking_step(wrapped, 4)
    assert i1["cost"] == i0["cost"] > 0
    assert r1 == pytest.approx(r0 - 0.5 * i0["cost"])
    wrapped.set_multiplier(0.0)
    assert breaking_step(wrapped, 4)[0] == pytest.approx(r0)
    assert wrapped.action_masks().shape == (wrapped.action_space.n,)


def test_config_rejects_unknown_and_negative_settings():
    from netarena_gym.train.lagrangian import LagrangeConfig
    assert LagrangeConfig.coerce({"cost_limit": 2}).cost_limit == 2
    with pytest.raises(InvalidConfig, match="known: \\['cost_limit', 'init', 'lr'\\]"):
        LagrangeConfig.coerce({"limit": 2})
    with pytest.raises(InvalidConfig):
        LagrangeConfig(lr=0)


@requires_sb3
@pytest.mark.parametrize("limit,rises", [(0.0, True), (1e9, False)])
def test_multiplier_follows_the_constraint(limit, rises, tmp_path):
    """Random-ish early policies break pairs (episode cost > 0): the multiplier climbs
    above a limit of 0, and never leaves 0 under an unreachable limit."""
    from netarena_gym.train.ppo import train
    train(env_id=ROUTING, level=1, timesteps=512, n_envs=2, history=False,
          env_kwargs={"reward": {"safety": 0.0}}, eval_every=512, eval_episodes=1,
          hyper={"n_steps": 128, "batch_size": 64}, checkpoint_dir=tmp_path,
          lagrangian={"cost_limit": limit, "lr": 0.01})
    from netarena_gym.train.ppo_callbacks import read_checkpoint
    lam = read_checkpoint(tmp_path / "checkpoint-512")["callbacks"]["lagrangian"]["multiplier"]
    assert (lam > 0) if rises else (lam == 0)
