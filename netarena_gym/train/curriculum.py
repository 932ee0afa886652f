"""A level curriculum for PPO and GRPO: a schedule of level mixes over training.

A schedule is a list of stages ``STEPS=MIX``: from ``STEPS`` environment steps on, each
training episode draws its level from ``MIX`` (``"1:0.5,2:0.3,3:0.2"``, as
``--level-mix``); a stage without ``STEPS=`` starts at 0. For example::

    --curriculum 1 --curriculum 50000=1:0.3,2:0.7 --curriculum 150000=2:0.3,3:0.7

Every training env is a :class:`LevelMixEnv`: one env per level of the schedule behind one
pair of spaces, switching level at each reset with its own seeded generator (the level
and the episode's seed are drawn from it, so a run is a function of its seed). The levels
must share observation and action spaces; on routing, levels 1 and 2 do on their own, and
all three do on level 3's topology (``env_kwargs={"topology": {"routers": [2, 4],
"subnets": [2, 4], "hosts": [1, 3]}}``: level 3 is unchanged by it, levels 1 and 2 then
draw their 1 and 2 faults on level-3 networks). :func:`curriculum_callback` moves every
env to the next stage when training reaches its step, and logs ``curriculum/stage``.

Shaping per fixed fault: the env's own ``progress`` shaping pays for a change in the
fraction of working pairs, so at level 3 (three or four faults that hide one another) a
repair that fixes one fault while another still cuts the same paths earns nothing: with
the features-reading rule of docs/training.md, 28% of the repairs of a solved level-3
episode change no pair. :class:`FaultShaping` adds potential-based shaping (Ng et al.,
1999) on the observation's own anomaly count: ``weight x (anomalies before - anomalies
after)`` per step, where an anomaly is a set bit of the routing features other than
``inspected`` and ``present`` (forwarding off, a drop policy, a filter rule, a link down,
a wrong MTU, a missing or extra address, a qdisc, a wrong or extra route). It reads only
the observation (so it needs ``observability="full"``, where the features are refreshed
after every change); it telescopes over an episode, so the best policies do not change.

GRPO (``netarena-gym train grpo --curriculum ...``): the same stages, counted in training
scenarios (dataset rows, i.e. prompts) instead of env steps. :func:`curriculum_rows` builds
the dataset stage by stage (row ``i`` draws its level from the stage holding ``i``; seeds
``seed_base + i`` as without a curriculum) and the trainer reads it in order
(``shuffle_dataset=False``), so the prompts of stage ``k`` are trained after those of stage
``k - 1``.

What it leaves out: stages gated on performance (a stage starts at a fixed step count).
"""
from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np

from netarena_gym.errors import InvalidConfig
from netarena_gym.train.data import parse_level_mix, scenario_rows


@dataclass(frozen=True)
class Stage:
    start: int
    mix: dict


@dataclass(frozen=True)
class Curriculum:
    """Stages in order of their start step (the first starts at 0)."""
    stages: tuple[Stage, ...]

    @property
    def levels(self) -> list:
        seen: dict = {}
        for s in self.stages:
            seen.update(dict.fromkeys(s.mix))
        return list(seen)

    def stage_at(self, steps: int) -> int:
        return max(i for i, s in enumerate(self.stages) if s.start <= steps)

    def to_list(self) -> list[str]:
        return [f"{s.start}=" + ",".join(f"{k}:{v:g}" for k, v in s.mix.items())
                for s in self.stages]


def parse_curriculum(specs: str | list[str] | None) -> Curriculum | None:
    """``["1", "50000=1:0.3,2:0.7"]`` (or one string) -> :class:`Curriculum`."""
    if not specs:
        return None
    stages = []
    for spec in [specs] if isinstance(specs, str) else specs:
        start, sep, mix = str(spec).partition("=")
        if not sep:
            start, mix = "0", start
        try:
            stages.append(Stage(int(start), parse_level_mix(mix)))
        except ValueError as e:
            raise InvalidConfig(f"bad curriculum stage {spec!r} (STEPS=MIX, e.g. "
                                f"'50000=1:0.3,2:0.7'): {e}") from None
    stages.sort(key=lambda s: s.start)
    if stages[0].start != 0:
        stages.insert(0, Stage(0, stages[0].mix))
    if len({s.start for s in stages}) != len(stages):
        raise InvalidConfig(f"two curriculum stages start at the same step: {specs}")
    return Curriculum(tuple(stages))


def curriculum_rows(env_id: str, curriculum: Curriculum, *, n: int, seed_base: int,
                    with_prompt: bool = True) -> list[dict]:
    """``n`` GRPO dataset rows in training order: rows ``[start_k, start_k+1)`` draw their
    levels from stage ``k``'s mix (exactly proportional, as ``--level-mix``); row ``i`` has
    seed ``seed_base + i``. Stages that start at or after ``n`` get no rows."""
    rows: list[dict] = []
    ends = [s.start for s in curriculum.stages[1:]] + [n]
    for stage, end in zip(curriculum.stages, ends):
        count = min(end, n) - stage.start
        if count > 0:
            rows += scenario_rows(env_id, n=count, level_mix=stage.mix,
                                  seed_base=seed_base + stage.start, with_prompt=with_prompt)
    return rows


class LevelMixEnv(gym.Env):
    """One env per level behind one pair of spaces; each reset draws a level from the
    current mix and a seed for that level's env, from its own generator."""

    def __init__(self, envs: dict, mix: dict):
        first = next(iter(envs.values()))
        for lvl, e in envs.items():
            if (e.observation_space, e.action_space) != (first.observation_space,
                                                         first.action_space):
                raise InvalidConfig(f"curriculum level {lvl!r} has other spaces than "
                                    f"{next(iter(envs))!r}; give every level the same "
                                    "topology (see netarena_gym.train.curriculum)")
        self.envs = envs
        self.observation_space, self.action_space = first.observation_space, first.action_space
        self.metadata = first.metadata
        self.current = first
        self.level = next(iter(envs))
        self.set_mix(mix)

    def set_mix(self, mix: dict) -> None:
        unknown = set(mix) - set(self.envs)
        if unknown:
            raise InvalidConfig(f"levels {sorted(unknown, key=str)} have no env here")
        self._levels = list(mix)
        self._p = np.array([mix[k] for k in self._levels], dtype=float)
        self._p /= self._p.sum()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.level = self._levels[int(self.np_random.choice(len(self._levels), p=self._p))]
        self.current = self.envs[self.level]
        return self.current.reset(seed=int(self.np_random.integers(2**31 - 1)), options=options)

    def step(self, action):
        return self.current.step(action)

    def action_masks(self) -> np.ndarray:
        return self.current.get_wrapper_attr("action_masks")()

    def close(self):
        for e in self.envs.values():
            e.close()


def anomalies(obs: dict) -> int:
    """Set anomaly bits of a routing discrete observation (see :class:`FaultShaping`)."""
    return int(np.count_nonzero(obs["router_features"][..., 1:])
               + np.count_nonzero(obs["iface_features"][..., 1:])
               + np.count_nonzero(obs["route_features"]))


class FaultShaping(gym.Wrapper):
    """``weight`` x the drop in :func:`anomalies` added to each step's reward, and
    ``info["reward_components"]["fault_shaping"]``; the routing task with
    ``observability="full"`` only (elsewhere the features do not show a repair at once)."""

    def __init__(self, env: gym.Env, weight: float = 0.1):
        super().__init__(env)
        base = env.unwrapped
        if isinstance(base, LevelMixEnv):
            base = next(iter(base.envs.values())).unwrapped
        if getattr(base, "task", None) != "routing":
            raise InvalidConfig("fault shaping reads the routing features (routing task only)")
        obs_mode = getattr(getattr(base, "config", None), "observability", None)
        if obs_mode != "full":
            raise InvalidConfig("fault shaping needs observability='full' (with 'partial' a "
                                "repair only shows after the next inspect)")
        self.weight = float(weight)
        self._count = 0

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self._count = anomalies(obs)
        return obs, info

    def step(self, action):
        obs, r, term, trunc, info = self.env.step(action)
        now = anomalies(obs)
        bonus = self.weight * (self._count - now)
        self._count = now
        info = dict(info)
        info["reward_components"] = {**info.get("reward_components", {}),
                                     "fault_shaping": bonus + 0.0}
        return obs, float(r) + bonus, term, trunc, info

    def action_masks(self) -> np.ndarray:
        return self.env.get_wrapper_attr("action_masks")()


def curriculum_callback(curriculum: Curriculum):
    """Moves the training envs to each stage's mix when ``num_timesteps`` reaches it."""
    from stable_baselines3.common.callbacks import BaseCallback

    class CurriculumCallback(BaseCallback):
        def __init__(self):
            super().__init__()
            self.stage = -1

        def _set(self) -> None:
            now = curriculum.stage_at(self.num_timesteps)
            if now != self.stage:
                self.stage = now
                self.training_env.env_method("set_mix", curriculum.stages[now].mix)

        def _on_training_start(self) -> None:
            self.stage = -1
            self._set()

        def _on_step(self) -> bool:
            self._set()
            return True

        def _on_rollout_end(self) -> None:
            self.logger.record("curriculum/stage", self.stage)

    return CurriculumCallback()


__all__ = ["Stage", "Curriculum", "parse_curriculum", "LevelMixEnv", "anomalies", "FaultShaping",
           "curriculum_callback"]
