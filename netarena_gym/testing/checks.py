"""The checks of the env test kit (see :mod:`netarena_gym.testing`).

Each ``check_*`` function takes a zero-argument factory that makes a fresh env (what
``gym.make(env_id, **kwargs)`` returns), runs one property and raises :class:`KitFailure`
on the first violation. :func:`check_netarena_env` runs them all in order.

Besides the API itself they hold an env to the project's rules: every step's reward is the
sum of ``info["reward_components"]`` and inside ``reward_range`` (:func:`check_reward`); all
randomness comes from the env's seeded generator, never from ``np.random`` or ``random``
(:func:`global_rng_untouched`); ``reset()`` without a seed goes on drawing new episodes
(:func:`check_unseeded_resets`); ``info["scenario"]`` rebuilds the whole episode, not only
its first observation (:func:`check_replay`); a hostile action is invalid or refused and
penalised (:func:`check_hostile_outcome`); and ``gym.make_vec(env_id)``'s default vector env
returns what ``"sync"`` returns (:func:`check_vector`). Each rule has a broken toy env in
``tests/testing/broken_envs.py`` that only it catches.
"""
from __future__ import annotations

import json
import math
import random
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


REWARD_TOL = 1e-9  # |reward - sum(components)| allowed (float rounding of the sum)


def check_reward(env: gym.Env, reward: Any, info: dict, where: str) -> None:
    """The step's reward is the sum of ``info["reward_components"]`` (within
    :data:`REWARD_TOL`) and lies inside ``env.reward_range``."""
    comps = info.get("reward_components")
    if not isinstance(comps, dict):
        raise fail("reward", f"{where}: info['reward_components'] must be a dict, got "
                             f"{SHORT.repr(comps)}")
    total = math.fsum(float(v) for v in comps.values())
    r = float(reward)
    if not math.isclose(r, total, rel_tol=REWARD_TOL, abs_tol=REWARD_TOL):
        raise fail("reward", f"{where}: reward {r!r} != sum of info['reward_components'] "
                             f"{total!r} ({comps})")
    low, high = env.unwrapped.reward_range
    if not low - REWARD_TOL <= r <= high + REWARD_TOL:
        raise fail("reward", f"{where}: reward {r!r} outside reward_range ({low}, {high})")


def global_rng_state() -> tuple:
    """The process-wide random states an env must never touch: NumPy's legacy global
    generator (``np.random.seed``, ``np.random.randint``, ...) and the ``random`` module."""
    return np.random.get_state(), random.getstate()


@contextmanager
def global_rng_untouched(check: str, what: str):
    """Fail if the block seeds or draws from a global random state (the project's rule:
    all randomness comes from the env's seeded generator, ``env.np_random``)."""
    before_np, before_py = global_rng_state()
    yield
    after_np, after_py = global_rng_state()
    for name, x, y in (("numpy's global RNG (np.random)", before_np, after_np),
                       ("the random module's global RNG", before_py, after_py)):
        if not same(x, y):
            raise fail(check, f"{what} changed {name}: an env must draw only from its own "
                              "seeded generator (env.np_random), never seed or use global "
                              "random state")


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


def check_determinism(make: Factory, *, seeds=(0, 1, 12345), steps: int = 30,
                      unseeded: int = 3) -> None:
    """The same seed gives the same observation and trajectory, in one env and in two;
    ``reset()`` without a seed after ``reset(seed=s)`` goes on drawing new episodes
    (:func:`check_unseeded_resets`); and none of it seeds, draws from or otherwise changes
    the global random state (``np.random``, ``random``)."""
    a, b = make(), make()
    try:
        with global_rng_untouched("determinism", "reset and step"):
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
            check_unseeded_resets(a, b, seeds=seeds, resets=unseeded)
    finally:
        a.close()
        b.close()


def check_unseeded_resets(a: gym.Env, b: gym.Env, *, seeds=(0, 1, 12345),
                          resets: int = 3) -> None:
    """After ``reset(seed=s)``, ``resets`` calls of ``reset()`` without a seed (what
    autoreset does) give the same episodes on two instances, and, where the env draws
    different episodes for different seeds, do not all give one episode (the seeded one
    replayed, or any other): the env's generator goes on from the seed."""
    seeded, repeats = [], []
    for seed in seeds:
        runs = []
        for env in (a, b):
            run = [env.reset(seed=seed)]
            run += [env.reset() for _ in range(resets)]
            runs.append(run)
        for i, (x, y) in enumerate(zip(*runs)):
            if not same(x, y):
                what = "the seeded reset" if i == 0 else f"unseeded reset {i}"
                raise fail("determinism", f"seed {seed}: {what} after reset(seed={seed}) "
                                          f"differs across two instances ({difference(x, y)})")
        records = [info["scenario"] for _, info in runs[0]]
        seeded.append(records[0])
        if resets >= 2 and all(same(records[1], r) for r in records[2:]):
            repeats.append((seed, same(records[0], records[1])))
    varied = any(not same(seeded[0], r) for r in seeded[1:])
    if varied and repeats:
        seed, replayed = repeats[0]
        raise fail("determinism", f"seed {seed}: {resets} resets without a seed after "
                                  f"reset(seed={seed}) all gave the same episode"
                                  + (" (the seeded one)" if replayed else "")
                                  + ", though other seeds give other episodes: autoreset "
                                    "would repeat one episode forever")


def check_replay(make: Factory, *, seeds=(0, 7, 99), episodes: int = 2,
                 steps: int = 50) -> None:
    """``info["scenario"]`` rebuilds the episode: ``reset(options={"scenario": record})``
    on a second env gives the same first observation and the same info, and the same
    actions then give the same observations, rewards, flags and info at every step, to the
    end of the episode (or ``steps``). ``episodes`` episodes per seed: the seeded one and
    the next ones drawn by unseeded resets."""
    a, b = make(), make()
    try:
        for seed in seeds:
            for ep in range(episodes):
                obs, info = a.reset(seed=seed) if ep == 0 else a.reset()
                where = f"seed {seed}" + (f", unseeded episode {ep}" if ep else "")
                try:
                    record = json.loads(json.dumps(info["scenario"]))  # it must be plain JSON
                    obs2, info2 = b.reset(options={"scenario": record})
                except (TypeError, ValueError) as e:
                    raise fail("replay", f"{where}: info['scenario'] is not a replayable JSON "
                                         f"record: {e}") from e
                if not same(obs, obs2):
                    raise fail("replay", f"{where}: the replayed first observation differs")
                if not same(info["action_mask"], info2["action_mask"]):
                    raise fail("replay", f"{where}: the replayed action mask differs")
                if not same(info, info2):
                    raise fail("replay", f"{where}: the replayed reset differs "
                                         f"({difference((obs, info), (obs2, info2))})")
                explorer = Explorer(a, seed + ep)
                for t in range(steps):
                    action = explorer.act(info)
                    x = a.step(action)
                    y = b.step(action)
                    if not same(x, y):
                        raise fail("replay", f"{where}: step {t + 1} of the replay differs "
                                             f"after the same actions ({difference(x, y)}): "
                                             "the scenario record misses state the episode uses")
                    info = x[4]
                    if episode_end(x[2], x[3]):
                        break
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
    ``info["cost"]`` as :func:`check_cost` says; the reward the sum of
    ``info["reward_components"]`` and inside ``reward_range`` (:func:`check_reward`)."""
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
            check_reward(env, reward, info, f"step {t + 1}")
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


HOSTILE_KINDS = ("invalid", "refused")  # what a hostile action must come back as


def check_hostile_outcome(env: gym.Env, reward: float, info: dict, what: str) -> None:
    """A hostile action is refused, not run: ``info["command_kind"]`` is ``"invalid"`` or
    ``"refused"`` and, where the reward config weighs that kind, its reward component and
    the reward are negative (an env that turns garbage into a harmless command teaches a
    policy that garbage is free)."""
    kind = info.get("command_kind")
    if kind not in HOSTILE_KINDS:
        raise fail("robust", f"{what}: command_kind {kind!r}; a hostile action must come back "
                             f"as one of {HOSTILE_KINDS} (an error and a penalty)")
    weight = getattr(getattr(env.unwrapped, "reward_config", None), kind, -1.0)
    component = (info.get("reward_components") or {}).get(kind, 0.0)
    if weight < 0 and not (component < 0 and reward < 0):
        raise fail("robust", f"{what}: not penalised: reward {reward!r}, "
                             f"reward_components[{kind!r}] {component!r} (weight {weight})")


def check_robust_steps(make: Factory, *, steps: int = 1000, seed: int = 5) -> None:
    """Random and hostile steps: never an exception, always an observation in the space,
    the reward as :func:`check_reward` says, every hostile action invalid or refused and
    penalised (:func:`check_hostile_outcome`), and no global random state touched."""
    env = make()
    base = env.unwrapped
    hostile = hostile_actions(tuple(base.text_keys), base.interface)
    try:
        with global_rng_untouched("robust", "random and hostile steps"):
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
                check_reward(env, reward, info, what)
                if t % 2:
                    check_hostile_outcome(env, reward, info, what)
                if episode_end(term, trunc):
                    obs, info = env.reset()
    finally:
        env.close()


VECTOR_MODES = ("sync", "async", "default")


def make_vector(env_id: str, make_kwargs: dict, mode: str, num_envs: int = 2,
                text: bool = False):
    """``gym.make_vec`` in ``mode``; ``"default"`` passes no ``vectorization_mode``, so
    Gymnasium picks the env's registered ``vector_entry_point`` (for the package's envs,
    :class:`~netarena_gym.vector.NetArenaBatchedVectorEnv`), or sync where it has none.
    ``"async"`` on a ``text`` interface is built with ``shared_memory=False``: Gymnasium's
    ``AsyncVectorEnv`` decodes a shared ``Text`` buffer once, when built, and would return
    that padding at every step instead of the env's text (see :mod:`netarena_gym.vector`)."""
    if mode == "default":
        from netarena_gym import VECTOR_ENTRY_POINTS
        from netarena_gym.vector import vector_entry_point

        if env_id in VECTOR_ENTRY_POINTS and gym.spec(env_id).vector_entry_point is None:
            # registered before ``import netarena_gym`` (e.g. by a conftest) without the
            # package's entry point: gym.make_vec would give sync; the kit checks the
            # package's default all the same, and says so
            warnings.warn(f"{env_id} is registered without its vector_entry_point "
                          f"({VECTOR_ENTRY_POINTS[env_id]}), so gym.make_vec({env_id!r}) gives "
                          "sync in this process; the kit builds the package's batched vector "
                          "env directly", stacklevel=2)
            return vector_entry_point(env_id)(num_envs=num_envs, **make_kwargs)
        return gym.make_vec(env_id, num_envs=num_envs, **make_kwargs)
    vector_kwargs = {"shared_memory": False} if mode == "async" and text else {}
    return gym.make_vec(env_id, num_envs=num_envs, vectorization_mode=mode,
                        vector_kwargs=vector_kwargs, **make_kwargs)


def check_vector(env_id: str, make_kwargs: dict, *, steps: int = 1000, seed: int = 11,
                 modes=VECTOR_MODES, lockstep=("async", "default")) -> None:
    """Each vector mode in ``modes`` (``"sync"``, ``"async"`` and ``"default"``, what
    ``gym.make_vec(env_id)`` gives: the package's batched vector env) runs ``steps`` steps
    with autoreset: no exception, observations inside the space, at least one episode end.
    The modes in ``lockstep`` run beside ``"sync"`` on the same seed and actions and must
    return what it returns (observations, rewards, terminated, truncated) at every step."""
    probe = gym.make(env_id, **make_kwargs)
    base = probe.unwrapped
    discrete = base.interface == "discrete"
    beside = [m for m in modes if m in lockstep and m != "sync"] if "sync" in modes else []
    groups = ([["sync", *beside]] if "sync" in modes else []) + \
        [[m] for m in modes if m != "sync" and m not in beside]
    try:
        for group in groups:
            vecs: dict = {}
            try:
                for mode in group:
                    vecs[mode] = make_vector(env_id, make_kwargs, mode, text=not discrete)
                label = {m: m if m != "default" else f"default ({type(v).__name__})"
                         for m, v in vecs.items()}
                lead = group[0]
                outs = {m: v.reset(seed=seed) for m, v in vecs.items()}
                for m in group[1:]:
                    if not same(outs[m][0], outs[lead][0]):
                        raise fail("vector", f"{label[m]}: reset(seed={seed}) observation "
                                             f"differs from {lead}'s")
                info = outs[lead][1]
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
                    for m, vec in vecs.items():
                        try:
                            outs[m] = vec.step(np.array(acts) if discrete else tuple(acts))
                        except Exception as e:
                            raise fail("vector", f"{label[m]}: step {t} raised "
                                                 f"{type(e).__name__}: {str(e)[:200]}") from e
                        if not vec.observation_space.contains(outs[m][0]):
                            raise fail("vector", f"{label[m]}: step {t} observation outside "
                                                 "the space")
                    for m in group[1:]:
                        for i, name in enumerate(("observation", "reward", "terminated",
                                                  "truncated")):
                            if not same(outs[m][i], outs[lead][i]):
                                raise fail("vector", f"{label[m]}: step {t} {name} differs from "
                                                     f"{lead}'s on the same seed and actions: "
                                                     f"{SHORT.repr(outs[m][i])} vs "
                                                     f"{SHORT.repr(outs[lead][i])}")
                    term, trunc, info = outs[lead][2], outs[lead][3], outs[lead][4]
                    ends += int(np.sum(np.logical_or(term, trunc)))
                if ends == 0:
                    raise fail("vector", f"{'/'.join(group)}: no episode ended in {steps} steps, "
                                         "so autoreset was never exercised")
            finally:
                for vec in vecs.values():
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
