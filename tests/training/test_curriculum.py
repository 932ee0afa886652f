"""The level curriculum: stages parse in step order, every training env draws its levels
in the stage's proportions from its own seed, and the callback moves the stages."""
import gymnasium as gym
import numpy as np
import pytest

from netarena_gym.errors import InvalidConfig
from netarena_gym.train.curriculum import LevelMixEnv, parse_curriculum

from .conftest import ROUTING, requires_llm, requires_sb3


def test_stages_parse_in_order_with_an_implicit_start():
    c = parse_curriculum(["50000=1:0.3,2:0.7", "2"])
    assert [s.start for s in c.stages] == [0, 50000]
    assert c.stages[1].mix == {1: pytest.approx(0.3), 2: pytest.approx(0.7)}
    assert c.levels == [2, 1] and c.stage_at(49_999) == 0 and c.stage_at(50_000) == 1
    c = parse_curriculum(["10=1"])  # the first stage also covers the steps before it
    assert [s.start for s in c.stages] == [0, 10]
    with pytest.raises(InvalidConfig, match="STEPS=MIX"):
        parse_curriculum(["x=1"])
    with pytest.raises(InvalidConfig, match="same step"):
        parse_curriculum(["0=1", "0=2"])
    assert parse_curriculum([]) is None


def levels_drawn(env, n, seed):
    out = []
    env.reset(seed=seed)
    out.append(env.level)
    for _ in range(n - 1):
        env.reset()
        out.append(env.level)
    return out


def test_level_mix_env_draws_in_proportion_and_reproducibly():
    envs = {lvl: gym.make(ROUTING, level=lvl, interface="discrete") for lvl in (1, 2)}
    env = LevelMixEnv(envs, {1: 0.8, 2: 0.2})
    a = levels_drawn(env, 200, seed=1)
    assert 0.7 < a.count(1) / 200 < 0.9
    assert levels_drawn(env, 200, seed=1) == a  # a function of the seed
    env.set_mix({2: 1.0})
    assert set(levels_drawn(env, 20, seed=2)) == {2}
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs) and env.action_masks().shape == (56,)
    with pytest.raises(InvalidConfig, match="no env"):
        env.set_mix({3: 1.0})


def test_levels_with_other_spaces_are_refused_unless_they_share_a_topology():
    with pytest.raises(InvalidConfig, match="same topology"):
        LevelMixEnv({lvl: gym.make(ROUTING, level=lvl, interface="discrete")
                     for lvl in (1, 3)}, {1: 1.0})
    topo = {"routers": [2, 4], "subnets": [2, 4], "hosts": [1, 3]}
    env = LevelMixEnv({lvl: gym.make(ROUTING, level=lvl, interface="discrete", topology=topo)
                       for lvl in (1, 3)}, {1: 1.0})
    assert env.action_space.n == gym.make(ROUTING, level=3, interface="discrete").action_space.n


@requires_sb3
def test_training_follows_the_stages(tmp_path):
    import csv

    from netarena_gym.train.ppo import train
    c = parse_curriculum(["1", "256=2"])
    model, rows = train(env_id=ROUTING, level=2, timesteps=512, n_envs=2, curriculum=c,
                        eval_every=512, eval_episodes=1, log_dir=tmp_path,
                        hyper={"n_steps": 64, "batch_size": 64})
    stages = [float(r["curriculum/stage"]) for r in csv.DictReader(open(tmp_path / "progress.csv"))]
    assert stages[0] == 0 and stages[-1] == 1
    assert model.get_env().get_attr("level") == [2, 2]  # every env is on the last stage


def test_fault_shaping_pays_each_fixed_fault_and_telescopes():
    """A repair that clears an anomaly earns ``weight`` per cleared bit on top of the env's
    reward (even when no host pair starts working yet); over an episode the bonuses sum
    to ``weight x (anomalies at reset - anomalies at the end)``."""
    from netarena_gym.train.curriculum import FaultShaping, anomalies
    env = FaultShaping(gym.make(ROUTING, level=3, interface="discrete", observability="full"),
                       weight=0.1)
    plain = gym.make(ROUTING, level=3, interface="discrete", observability="full")
    for seed in range(200):
        obs, _ = env.reset(seed=seed)
        hit = np.argwhere(obs["router_features"][:, 1] > 0)  # forwarding off on a router
        if len(hit) and anomalies(obs) > 1:
            break
    r = int(hit[0][0])
    per = env.unwrapped.dims.per_router
    plain.reset(seed=seed)
    start = anomalies(obs)
    obs, rew, term, _, info = env.step(r * per + 1)  # that router: forwarding on
    _, base, _, _, _ = plain.step(r * per + 1)
    assert not term and anomalies(obs) == start - 1
    assert info["reward_components"]["fault_shaping"] == pytest.approx(0.1)
    assert rew == pytest.approx(base + 0.1)
    total = 0.1
    for _ in range(3):  # inspecting changes nothing under full observability: no bonus
        obs, rew, _, _, info = env.step(r * per)
        total += info["reward_components"]["fault_shaping"]
    assert total == pytest.approx(0.1 * (start - anomalies(obs)))
    with pytest.raises(InvalidConfig, match="observability='full'"):
        FaultShaping(gym.make(ROUTING, level=3, interface="discrete"))


def test_grpo_rows_follow_the_stages_in_order_with_the_usual_seeds():
    from netarena_gym.train.curriculum import curriculum_rows
    from netarena_gym.train.data import scenario_rows
    c = parse_curriculum(["1", "4=1:0.5,2:0.5", "8=3", "20=2"])
    rows = curriculum_rows(ROUTING, c, n=12, seed_base=500, with_prompt=False)
    assert [r["seed"] for r in rows] == list(range(500, 512))
    levels = [r["level"] for r in rows]
    assert levels[:4] == ["1"] * 4 and sorted(levels[4:8]) == ["1", "1", "2", "2"]
    assert levels[8:] == ["3"] * 4  # the stage from row 20 is past the end: no rows
    # one stage is exactly --level-mix
    one = curriculum_rows(ROUTING, parse_curriculum("1:0.5,2:0.5"), n=6, seed_base=7)
    assert one == scenario_rows(ROUTING, n=6, level_mix="1:0.5,2:0.5", seed_base=7)


@requires_llm
def test_grpo_trainer_reads_a_curriculum_dataset_in_stage_order(tiny_model, tmp_path):
    from transformers import AutoTokenizer
    from netarena_gym.train.grpo import build_trainer
    tok = AutoTokenizer.from_pretrained(str(tiny_model))
    trainer = build_trainer(env_id=ROUTING, model=str(tiny_model), tokenizer=tok,
                            output_dir=str(tmp_path), preset="cpu-smoke", episodes=8,
                            seed_base=100, curriculum=parse_curriculum(["1", "4=2"]))
    assert trainer.args.shuffle_dataset is False
    seen = []
    for batch in trainer.get_train_dataloader():
        seen += [(row["seed"], row["level"]) for row in batch]
        if len(seen) >= 8 * trainer.args.num_generations:
            break
    order = list(dict.fromkeys(seen))  # each prompt repeated once per generation
    assert order == [(100 + i, "1" if i < 4 else "2") for i in range(8)]


@requires_sb3
def test_a_curriculum_of_other_spaces_fails_before_training():
    """Levels 1-2 (56 actions) and level 3 (248) cannot share a policy: before, a curriculum
    skipped the check and training failed at its first curve evaluation."""
    from netarena_gym.train.ppo import make_vec_env

    c = parse_curriculum(["1", "256=1:0.5,2:0.5"])
    with pytest.raises(ValueError, match="different discrete spaces"):
        make_vec_env(ROUTING, level=3, n_envs=1, curriculum=c)
