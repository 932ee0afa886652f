"""The checks of the env test kit (see :mod:`netarena_gym.testing`).

Each ``check_*`` function takes a zero-argument factory that makes a fresh env (what
``gym.make(env_id, **kwargs)`` returns), runs one property and raises :class:`KitFailure`
on the first violation. :func:`check_netarena_env` runs them all in order.
"""
from __future__ import annotations

import json
import math
import reprlib
import signal
import threading
import warnings
from contextlib import contextmanager
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from netarena_gym.core.info import check_info
from netarena_gym.errors import NetArenaError, ResetNeeded
from netarena_gym.testing.hostile import hostile_actions

Factory = Callable[..., gym.Env]
SHORT = reprlib.Repr()  # bounded reprs of hostile actions (deep, huge) for messages
SHORT.maxlevel, SHORT.maxstring, SHORT.maxother = 3, 60, 60
STEP_HANG_S = 60  # a step that takes this long is a hang, not a slow step


class KitFailure(NetArenaError, AssertionError):
    """An env broke a property the kit holds every NetArena env to."""


def fail(check: str, message: str) -> KitFailure:
    return KitFailure(f"[{check}] {message}")


@contextmanager
def no_hang(check: str, what: str):
    """Fail, rather than block CI, if one call runs for :data:`STEP_HANG_S` seconds."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum, frame):
        raise fail(check, f"{what} ran for more than {STEP_HANG_S} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(STEP_HANG_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# ------------------------------------------------------------------ helpers
def same(a: Any, b: Any) -> bool:
    """Deep equality for observations and info (dicts, lists, arrays, floats with NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def difference(a: tuple, b: tuple) -> str:
    """Which part of a step tuple differs: the observation, the reward, or info keys."""
    names = ("observation", "info") if len(a) == 2 else \
        ("observation", "reward", "terminated", "truncated", "info")
    out = []
    for name, x, y in zip(names, a, b):
        if name == "info" and isinstance(x, dict) and isinstance(y, dict):
            keys = sorted(k for k in set(x) | set(y) if not same(x.get(k), y.get(k)))
            if keys:
                out.append(f"info keys {keys}")
        elif not same(x, y):
            out.append(name)
    return ", ".join(out)


def signature(info: dict) -> dict:
    """The type shape of ``info`` that must never change: each key's type, the dtype and
    shape of the mask, the component names, and the types of the task's ``extra`` keys.
    (``scenario`` is a record whose contents differ per episode; it must stay a dict.)"""
    out: dict = {}
    for k, v in info.items():
        if isinstance(v, np.ndarray):
            out[k] = ("ndarray", v.dtype.str, v.shape)
        elif k == "reward_components" and isinstance(v, dict):
            out[k] = tuple(sorted(v))
        elif k == "extra" and isinstance(v, dict):
            out[k] = {x: type(y).__name__ for x, y in v.items()}
        else:
            out[k] = type(v).__name__
    return out


def sample_action(space: gym.Space, rng: np.random.Generator):
    """A sample of ``space``; text is kept short (a Text space's own sampler draws up to its
    full length, 100k+ characters, which only measures the sampler). Hostile lengths are
    covered by :mod:`netarena_gym.testing.hostile`."""
    if isinstance(space, gym.spaces.Text):
        return space.sample(mask=(int(rng.integers(0, 200)), None))
    return space.sample()


class Explorer:
    """Seeded actions: mostly valid catalogue entries, sometimes a sample of the space."""

    def __init__(self, env: gym.Env, seed: int):
        self.env = env
        self.base = env.unwrapped
        self.rng = np.random.default_rng(seed)
        self.env.action_space.seed(seed)

    def act(self, info: dict) -> Any:
        mask = np.asarray(info["action_mask"])
        valid = np.flatnonzero(mask)
        if len(valid) and self.rng.random() < 0.85:
            idx = int(valid[self.rng.integers(len(valid))])
            if self.base.interface == "discrete":
                return idx
            return dict(self.base.catalogue.render(idx))
        return sample_action(self.env.action_space, self.rng)


def episode_end(terminated: Any, truncated: Any) -> bool:
    return bool(terminated) or bool(truncated)


# ------------------------------------------------------------------- checks
def check_gymnasium(make: Factory) -> None:
    """Gymnasium's own checker, on the unwrapped env. Its step check assumes episodes of
    more than one step, so a one-step configuration (MALT's ``compat``) is checked with
    ``max_steps=2`` (``make`` must accept keyword overrides)."""
    from gymnasium.utils.env_checker import check_env

    env = make()
    if env.unwrapped.max_steps < 2:
        env.close()
        env = make(max_steps=2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_env(env.unwrapped, skip_render_check=True)
    except Exception as e:  # re-raise as the kit's failure, with gymnasium's message
        raise fail("gymnasium", f"{type(e).__name__}: {e}") from e
    finally:
        env.close()


def rollout(env: gym.Env, seed: int, steps: int) -> list:
    obs, info = env.reset(seed=seed)
    explorer = Explorer(env, seed)
    out = [(obs, info)]
    for _ in range(steps):
        obs, reward, term, trunc, info = env.step(explorer.act(info))
        out.append((obs, reward, term, trunc, info))
        if episode_end(term, trunc):
            break
    return out


def check_determinism(make: Factory, *, seeds=(0, 1, 12345), steps: int = 30) -> None:
    """The same seed gives the same observation and trajectory, in one env and in two."""
    a, b = make(), make()
    try:
        for seed in seeds:
            first = rollout(a, seed, steps)
            again = rollout(a, seed, steps)
            other = rollout(b, seed, steps)
            for name, run in (("the same instance", again), ("a second instance", other)):
                if len(run) != len(first):
                    raise fail("determinism", f"seed {seed}: episode length {len(first) - 1} "
                                              f"then {len(run) - 1} on {name}")
                for t, (x, y) in enumerate(zip(first, run)):
                    if not same(x, y):
                        raise fail("determinism", f"seed {seed}: step {t} differs on {name} "
                                                  f"({difference(x, y)})")
    finally:
        a.close()
        b.close()


def check_replay(make: Factory, *, seeds=(0, 7, 99)) -> None:
    """``info["scenario"]`` rebuilds the episode: same first observation, same info."""
    a, b = make(), make()
    try:
        for seed in seeds:
            obs, info = a.reset(seed=seed)
            record = json.loads(json.dumps(info["scenario"]))  # it must be plain JSON
            obs2, info2 = b.reset(options={"scenario": record})
            if not same(obs, obs2):
                raise fail("replay", f"seed {seed}: the replayed first observation differs")
            if not same(info["action_mask"], info2["action_mask"]):
                raise fail("replay", f"seed {seed}: the replayed action mask differs")
    except (TypeError, ValueError) as e:
        raise fail("replay", f"info['scenario'] is not a replayable JSON record: {e}") from e
    finally:
        a.close()
        b.close()


def check_cost(info: dict, where: str, *, at_reset: bool = False) -> None:
    """``info["cost"]``, the safety cost of Safety-Gymnasium's convention (what the step
    newly broke: pairs, probes or constraint violations): a float that is a finite,
    non-negative count, equal to ``info["newly_broken"]``, 0 at reset, and non-zero
    whenever the reward's ``safety`` component is (:func:`check_info_schema` also checks the
    converse when the ``safety`` weight is not 0)."""
    cost = info.get("cost")
    if not isinstance(cost, float) or not math.isfinite(cost) or cost < 0 or cost != int(cost):
        raise fail("cost", f"{where}: info['cost'] must be a finite count >= 0 as a float, "
                           f"got {cost!r}")
    if "newly_broken" in info and cost != info["newly_broken"]:  # a lean step has no twin
        raise fail("cost", f"{where}: info['cost'] {cost} != info['newly_broken'] "
                           f"{info.get('newly_broken')!r}")
    if at_reset and cost != 0:
        raise fail("cost", f"{where}: info['cost'] must be 0 at reset, got {cost}")
    safety = (info.get("reward_components") or {}).get("safety", 0.0)
    if not at_reset and safety != 0 and cost == 0:
        raise fail("cost", f"{where}: reward component safety {safety} without a cost")


def check_info_schema(make: Factory, *, seed: int = 3, steps: int = 200) -> None:
    """One schema for every task: same keys and value types at reset and every step;
    ``info["cost"]`` as :func:`check_cost` says."""
    env = make()
    task = env.unwrapped.task
    mode = getattr(env.unwrapped, "info_mode", "full")  # lean steps carry fewer keys
    weighted = bool(getattr(getattr(env.unwrapped, "reward_config", None), "safety", 0))
    try:
        obs, info = env.reset(seed=seed)
        check_info(info, task, mode)
        check_cost(info, "reset", at_reset=True)
        shape = signature(info)
        explorer = Explorer(env, seed)
        for t in range(steps):
            obs, reward, term, trunc, info = env.step(explorer.act(info))
            check_info(info, task, mode)
            check_cost(info, f"step {t + 1}")
            if weighted and (info["cost"] > 0) != (info["reward_components"]["safety"] != 0):
                raise fail("cost", f"step {t + 1}: cost {info['cost']} but reward component "
                                   f"safety {info['reward_components']['safety']}")
            now = signature(info)
            if now != {k: shape[k] for k in now if k in shape}:
                diff = sorted(k for k in set(now) | set(shape) if now.get(k) != shape.get(k))
                raise fail("info", f"step {t + 1}: info types changed for {diff}: "
                                   f"{[shape.get(k) for k in diff]} -> {[now.get(k) for k in diff]}")
            if episode_end(term, trunc):
                obs, info = env.reset()
                check_info(info, task, mode)
                check_cost(info, "reset", at_reset=True)
    finally:
        env.close()


def as_text_action(action: Any) -> str:
    return action if isinstance(action, str) else json.dumps(action)


def check_actions_in_space(make: Factory, *, seeds=(0, 1, 2, 3, 4)) -> None:
    """Every action the catalogue offers and the expert plays is in ``action_space``."""
    from netarena_gym.agents.experts import make_expert

    env = make()
    base = env.unwrapped
    try:
        for seed in seeds:
            obs, info = env.reset(seed=seed)
            for idx in np.flatnonzero(np.asarray(info["action_mask"])):
                action = int(idx) if base.interface == "discrete" else \
                    as_text_action(dict(base.catalogue.render(int(idx))))
                if not env.action_space.contains(action):
                    raise fail("actions", f"seed {seed}: catalogue entry {idx} ({SHORT.repr(action)}) "
                                          "is not in action_space")
        if base.interface == "discrete":
            return
        expert = make_expert(env)
        for seed in seeds:
            obs, info = env.reset(seed=seed)
            expert.reset()
            while True:
                action = expert.act(obs, info)
                if not env.action_space.contains(as_text_action(action)):
                    raise fail("actions", f"seed {seed}: the expert's action {SHORT.repr(action)} is "
                                          "not in action_space")
                obs, reward, term, trunc, info = env.step(action)
                if episode_end(term, trunc):
                    break
    finally:
        env.close()


def check_one_step(env: gym.Env, action: Any, what: str) -> tuple:
    try:
        with no_hang("robust", what):
            obs, reward, term, trunc, info = env.step(action)
    except KitFailure:
        raise
    except Exception as e:
        raise fail("robust", f"{what} raised {type(e).__name__}: {str(e)[:200]}") from e
    if not env.observation_space.contains(obs):
        raise fail("robust", f"{what}: the observation is outside observation_space")
    if not isinstance(reward, (int, float)) or not math.isfinite(float(reward)):
        raise fail("robust", f"{what}: reward {reward!r} is not a finite number")
    if not isinstance(term, bool) or not isinstance(trunc, bool):
        raise fail("robust", f"{what}: terminated/truncated must be bools")
    return obs, reward, term, trunc, info


def check_robust_steps(make: Factory, *, steps: int = 1000, seed: int = 5) -> None:
    """Random and hostile steps: never an exception, always an observation in the space."""
    env = make()
    base = env.unwrapped
    hostile = hostile_actions(tuple(base.text_keys), base.interface)
    try:
        obs, info = env.reset(seed=seed)
        explorer = Explorer(env, seed)
        for t in range(steps):
            if t % 2:
                action = hostile[(t // 2) % len(hostile)]
                what = f"step {t} with hostile action {SHORT.repr(action)}"
            else:
                action = explorer.act(info)
                what = f"step {t} with action {SHORT.repr(action)}"
            obs, reward, term, trunc, info = check_one_step(env, action, what)
            check_cost(info, what)
            if episode_end(term, trunc):
                obs, info = env.reset()
    finally:
        env.close()


def check_vector(env_id: str, make_kwargs: dict, *, steps: int = 1000, seed: int = 11,
                 modes=("sync", "async")) -> None:
    """Sync and async vector envs with autoreset run ``steps`` steps."""
    probe = gym.make(env_id, **make_kwargs)
    base = probe.unwrapped
    discrete = base.interface == "discrete"
    try:
        for mode in modes:
            vec = gym.make_vec(env_id, num_envs=2, vectorization_mode=mode, **make_kwargs)
            try:
                obs, info = vec.reset(seed=seed)
                rng = np.random.default_rng(seed)
                probe.action_space.seed(seed)
                ends = 0
                for t in range(steps):
                    if discrete:
                        masks = np.asarray(info["action_mask"])
                        acts = [int(rng.choice(np.flatnonzero(m))) if m.any() else 0
                                for m in masks]
                    else:
                        acts = [sample_action(probe.action_space, rng) for _ in range(2)]
                    try:
                        obs, reward, term, trunc, info = vec.step(
                            np.array(acts) if discrete else tuple(acts))
                    except Exception as e:
                        raise fail("vector", f"{mode}: step {t} raised {type(e).__name__}: "
                                             f"{str(e)[:200]}") from e
                    if not vec.observation_space.contains(obs):
                        raise fail("vector", f"{mode}: step {t} observation outside the space")
                    ends += int(np.sum(np.logical_or(term, trunc)))
                if ends == 0:
                    raise fail("vector", f"{mode}: no episode ended in {steps} steps, so "
                                         "autoreset was never exercised")
            finally:
                vec.close()
    finally:
        probe.close()


def expect_reset_needed(call: Callable[[], Any], message: str) -> None:
    """``call()`` must raise ResetNeeded; a KitFailure with ``message`` otherwise."""
    try:
        call()
    except ResetNeeded:
        return
    raise fail("after-end", message)


def check_after_end(make: Factory, *, seed: int = 21) -> None:
    """Outside an episode (before the first reset, after it ended, after ``close``) ``step``
    and ``render`` raise ResetNeeded (every task alike); reset works again."""
    env = make(render_mode="ansi")
    try:
        rng = np.random.default_rng(seed)
        expect_reset_needed(lambda: env.unwrapped.step(sample_action(env.action_space, rng)),
                            "step before reset must raise ResetNeeded")
        expect_reset_needed(env.unwrapped.render, "render before reset must raise ResetNeeded")
        obs, info = env.reset(seed=seed)
        explorer = Explorer(env, seed)
        for _ in range(env.unwrapped.max_steps + 1):
            obs, reward, term, trunc, info = env.step(explorer.act(info))
            if episode_end(term, trunc):
                break
        else:
            raise fail("after-end", "the episode did not end within max_steps")
        expect_reset_needed(lambda: env.unwrapped.step(explorer.act(info)),
                            "step after the episode ended must raise ResetNeeded")
        obs, info = env.reset(seed=seed)
        if not env.observation_space.contains(obs):
            raise fail("after-end", "reset after the end gave an observation outside the space")
        env.close()
        expect_reset_needed(lambda: env.unwrapped.step(explorer.act(info)),
                            "step after close must raise ResetNeeded")
        obs, info = env.reset(seed=seed)
        if not env.observation_space.contains(obs):
            raise fail("after-end", "reset after close gave an observation outside the space")
    finally:
        env.close()


def check_netarena_env(env_id: str, *, steps: int = 1000, vector_steps: int = 1000,
                       **make_kwargs) -> None:
    """Run every check of the kit on ``gym.make(env_id, **make_kwargs)``.

    ``steps`` random-and-hostile steps and ``vector_steps`` steps of each vector mode are
    played (1,000 each by default). Raises :class:`KitFailure` on the first failure.
    """
    def make(**overrides) -> gym.Env:
        return gym.make(env_id, **{**make_kwargs, **overrides})

    check_gymnasium(make)
    check_determinism(make)
    check_replay(make)
    check_info_schema(make)
    check_actions_in_space(make)
    check_robust_steps(make, steps=steps)
    check_vector(env_id, make_kwargs, steps=vector_steps)
    check_after_end(make)
