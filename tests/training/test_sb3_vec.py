"""netarena_gym.train.sb3_vec: the batched vector env as a stable-baselines3 ``VecEnv``
returns what ``DummyVecEnv`` returns over the same env fns and seeds (observations,
rewards, dones, per-env infos with ``TimeLimit.truncated``, ``terminal_observation`` and
Monitor's ``episode``, ``reset_infos``), serves ``get_attr`` / ``set_attr`` /
``env_method`` / ``env_is_wrapped`` with ``indices``, and a seeded MaskablePPO run on it
learns exactly the parameters it learns on ``DummyVecEnv``."""
import multiprocessing

import numpy as np
import pytest

from netarena_gym.errors import InvalidConfig

from .conftest import ROUTING, requires_sb3

pytestmark = requires_sb3

OPTS = dict(history=True, drop=("reachability",))  # the routing policy's view


def make_pair(n=4, seed=3, env_id=ROUTING, level=1, max_steps=5, **kw):
    from netarena_gym.train.ppo import make_vec_env
    env_kwargs = {"max_steps": max_steps, **kw.pop("env_kwargs", {})}
    opts = OPTS if env_id == ROUTING else {"history": True}
    ref = make_vec_env(env_id, level, n, seed=seed, env_kwargs=env_kwargs, **opts, **kw)
    ours = make_vec_env(env_id, level, n, seed=seed, env_kwargs=env_kwargs, vec="batched",
                        workers=2, **opts, **kw)
    return ref, ours


def same_value(a, b, where):
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (where, set(a) ^ set(b))
        for k in a:
            if not (where.endswith("episode") and k == "t"):  # Monitor's wall time
                same_value(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b), where
    else:
        assert type(a) is type(b) and a == b, (where, a, b)


def masked_actions(vec, rng):
    masks = np.stack(vec.env_method("action_masks"))
    return (rng.random(masks.shape) * masks).argmax(axis=1), masks


@pytest.mark.parametrize("env_id,level", [(ROUTING, 1), ("NetArena-K8sPolicy-v0", 1),
                                          ("NetArena-CapacityPlanning-v0", 2)])
def test_equals_dummy_vec_env_step_by_step(env_id, level):
    """Every value of 30 steps of 4 envs (over 2 workers, 5-step episodes: truncations, and
    on routing terminations too) equals DummyVecEnv's, reset infos included."""
    ref, ours = make_pair(env_id=env_id, level=level)
    rng = np.random.default_rng(0)
    ends = truncated = 0
    try:
        same_value(ref.reset(), ours.reset(), "reset obs")
        for i in range(4):
            same_value(ref.reset_infos[i], ours.reset_infos[i], f"reset info {i}")
        for t in range(30):
            acts, masks = masked_actions(ref, rng)
            assert np.array_equal(np.stack(ours.env_method("action_masks")), masks)
            r1, r2 = ref.step(acts), ours.step(acts)
            for name, a, b in zip(("obs", "rewards", "dones"), r1[:3], r2[:3]):
                same_value(a, b, f"{name} at {t}")
            for i, (x, y) in enumerate(zip(r1[3], r2[3])):
                same_value(x, y, f"info {i} at {t}")
                if r1[2][i]:
                    assert "terminal_observation" in y and "episode" in y
                    same_value(ref.reset_infos[i], ours.reset_infos[i], f"reset info {i}")
                    truncated += y["TimeLimit.truncated"]
            ends += int(r1[2].sum())
        assert ends >= 12 and truncated > 0
        if env_id == ROUTING:
            assert truncated < ends  # terminations (solved or broken) too
    finally:
        ref.close()
        ours.close()


def test_attributes_methods_and_wrappers_by_index():
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import VecNormalize  # not a gym wrapper of ours
    _, ours = make_pair(n=5)
    try:
        assert ours.num_envs == 5 and ours.workers == 2
        assert ours.env_is_wrapped(Monitor) == [True] * 5
        assert ours.env_is_wrapped(VecNormalize, indices=[0]) == [False]
        ours.set_attr("probe_value", 3, indices=[1, 4])
        assert ours.get_attr("probe_value", indices=[4, 1]) == [3, 3]
        with pytest.raises(AttributeError):
            ours.get_attr("probe_value", indices=[2])
        assert ours.get_attr("max_steps") == [5] * 5  # the error left the env usable
        ours.reset()
        masks = ours.env_method("action_masks")  # from the last observation
        by_worker = ours.env_method("action_masks", indices=range(5))  # asked of each env
        assert all(a.dtype == b.dtype == np.bool_ and np.array_equal(a, b)
                   for a, b in zip(masks, by_worker))
        assert ours.env_method("render", indices=2) == [None]  # no render_mode
    finally:
        ours.close()


def test_seed_and_options_apply_to_the_next_reset_only():
    """``seed(s)``: envs ``s + i`` at the next reset only; ``set_options``: the next reset's
    options, here replaying env 0's scenario in every env (one env gets none)."""
    from netarena_gym.train.ppo import make_vec_env
    ref, ours = make_pair(n=3)
    try:
        for vec in (ref, ours):
            vec.seed(40)
        seeded = ours.reset()
        same_value(ref.reset(), seeded, "seeded reset")
        fresh = make_vec_env(ROUTING, 1, 3, seed=40, env_kwargs={"max_steps": 5}, **OPTS)
        same_value(fresh.reset(), seeded, "a fresh DummyVecEnv with seed 40")
        fresh.close()
        same_value(ref.reset(), ours.reset(), "the next reset (no seeds)")
        scenario = ref.reset_infos[0]["scenario"]
        for vec in (ref, ours):
            vec.set_options([{"scenario": scenario}, {}, {"scenario": scenario}])
        a, b = ref.reset(), ours.reset()
        same_value(a, b, "reset with options")
        assert ours.reset_infos[2]["scenario"] == scenario == ours.reset_infos[0]["scenario"]
        assert ours.reset_infos[1]["scenario"] != scenario
        same_value(ref.reset(), ours.reset(), "next reset (options used once)")
        assert ours.reset_infos[2]["scenario"] != scenario
    finally:
        ref.close()
        ours.close()


def test_seeded_maskable_ppo_learns_the_same_parameters_as_on_dummy_vec_env():
    """Two rollouts and updates: the policy's parameters are bit-for-bit those of the same
    run on DummyVecEnv (the batched env changes where envs run, not what they return)."""
    import torch

    from netarena_gym.train.ppo import make_vec_env, new_model
    params = {}
    for vec in ("dummy", "batched"):
        env = make_vec_env(ROUTING, 1, 4, seed=11, env_kwargs={"max_steps": 6}, vec=vec, **OPTS)
        model = new_model("maskable_ppo", env, seed=5,
                          hyper={"n_steps": 16, "batch_size": 32, "n_epochs": 2})
        model.learn(total_timesteps=128)
        params[vec] = torch.nn.utils.parameters_to_vector(model.policy.parameters()).detach()
        env.close()
    assert torch.equal(params["dummy"], params["batched"])


def test_close_ends_the_workers_and_bad_options_raise():
    from netarena_gym.train.ppo import make_vec_env
    before = set(multiprocessing.active_children())
    _, ours = make_pair(n=2)
    started = set(ours.venv.processes)
    assert started and started <= set(multiprocessing.active_children())
    ours.close()
    assert set(multiprocessing.active_children()) == before
    with pytest.raises(InvalidConfig, match="dummy, subproc, batched"):
        make_vec_env(ROUTING, 1, 2, vec="ray")
    with pytest.raises(InvalidConfig, match="workers="):
        make_vec_env(ROUTING, 1, 2, vec="dummy", workers=2)


def test_curriculum_and_lagrangian_reach_the_workers(tmp_path):
    """``train(vec="batched")`` with a level curriculum (``env_method("set_mix")``) and the
    Lagrangian cost (``env_method("set_multiplier")``) ends with the same parameters and
    multiplier as on DummyVecEnv."""
    import torch

    from netarena_gym.train.curriculum import parse_curriculum
    from netarena_gym.train.ppo import train
    from netarena_gym.train.ppo_callbacks import read_checkpoint
    out = {}
    for vec in ("dummy", "batched"):
        ckpt = tmp_path / vec
        model, _ = train(env_id=ROUTING, level=2, timesteps=256, n_envs=2, vec=vec,
                         curriculum=parse_curriculum(["1", "128=2"]), seed=3,
                         lagrangian={"cost_limit": 0.0, "lr": 0.05}, eval_every=256,
                         eval_episodes=1, checkpoint_dir=ckpt,
                         hyper={"n_steps": 64, "batch_size": 64, "n_epochs": 1})
        lam = read_checkpoint(ckpt / "checkpoint-256")["callbacks"]["lagrangian"]
        out[vec] = (torch.nn.utils.parameters_to_vector(model.policy.parameters()).detach(),
                    lam["multiplier"])
    (p1, m1), (p2, m2) = out["dummy"], out["batched"]
    # the second stage's level 2 and each new multiplier reached the workers' envs, or the
    # rollouts (and so the parameters) would differ
    assert torch.equal(p1, p2) and m1 == m2 > 0
