"""PPO baselines on the discrete interfaces (behind ``netarena-gym train ppo``).

stable-baselines3 ``PPO`` and sb3-contrib ``MaskablePPO`` (which reads
``env.action_masks()``) on vectorised envs; a learning-curve callback that evaluates the
deterministic policy through ``agents.episode.play_episode`` every so many steps; agents
that replay a saved policy in ``play_episode`` (so ``netarena-gym eval --agent
netarena_gym.train.ppo:SB3Agent`` with ``NETARENA_POLICY=path`` gives the same numbers).

The policy sees the env's observation through :class:`AgentView`: ``history=True``
adds the agent's own memory, ``taken`` (which catalogue actions it has taken this
episode) and ``last`` (its previous action): with ``observability="partial"`` a router's
features only change when it is inspected, so after a repair that did not finish the
episode a memoryless policy sees the same observation again and a deterministic one
repeats itself; with memory it learns to inspect again. ``drop`` removes keys. Both
are computed from the observation and the actions alone (no env internals), by the
wrapper during training and by :class:`PolicyAgent` at evaluation.

Training can log each reward component, the episode cost and the Lagrange multiplier to
``progress.csv`` / TensorBoard / W&B and write ``checkpoint-N`` folders to resume from
(:mod:`netarena_gym.train.ppo_callbacks`), penalise the cost with a learned multiplier
(:mod:`netarena_gym.train.lagrangian`) and follow a level curriculum
(:mod:`netarena_gym.train.curriculum`).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from netarena_gym.errors import InvalidConfig
from netarena_gym.train.common import evaluate, write_csv

ALGOS = ("maskable_ppo", "ppo")
#: ``mlp``: SB3's multi-input MLP; ``slots``: one shared scorer per catalogue slot
#: (:mod:`netarena_gym.train.ppo_slots`, routing only, MaskablePPO only)
POLICIES = ("mlp", "slots")
HISTORY_KEY = "taken"
LAST_KEY = "last"
MEMORY_KEYS = (HISTORY_KEY, LAST_KEY)

#: defaults found to learn routing L1 well on 2 cores (see docs/training.md#ppo-benchmark-figures)
DEFAULT_HYPER: dict[str, Any] = dict(n_steps=64, batch_size=256, n_epochs=10,
                                     learning_rate=1e-3, ent_coef=0.01, gamma=0.99,
                                     gae_lambda=0.95, clip_range=0.2)
DEFAULT_NET = [128, 128]


class Memory:
    """The agent's memory of its own actions: ``taken`` and ``last`` (see AgentView)."""

    def __init__(self, n: int):
        self.taken = np.zeros(n, dtype=np.int8)
        self.last = np.zeros(n, dtype=np.int8)

    def reset(self) -> None:
        self.taken[:] = 0
        self.last[:] = 0

    def record(self, a: int) -> None:
        self.last[:] = 0
        if 0 <= a < self.taken.size:
            self.taken[a] = 1
            self.last[a] = 1

    def arrays(self) -> dict[str, np.ndarray]:
        return {HISTORY_KEY: self.taken.copy(), LAST_KEY: self.last.copy()}


class AgentView(gym.Wrapper):
    """The policy's view of the discrete interface: ``drop`` removes observation keys
    (e.g. ``reachability``: 1,089 inputs at routing L1 that slow learning down, see
    docs/training.md#are-the-observation-features-enough-partial-observability),
    ``history`` adds the agent's memory of its own actions: ``taken``
    (MultiBinary over the catalogue: the actions taken this episode) and ``last`` (the
    previous action, one-hot). ``action_masks`` is served through the wrapper."""

    def __init__(self, env: gym.Env, *, history: bool = False, drop: tuple[str, ...] = ()):
        super().__init__(env)
        if not isinstance(env.observation_space, spaces.Dict):
            raise TypeError("AgentView needs the discrete interface (a Dict observation)")
        bad = [k for k in drop if k not in env.observation_space.spaces or k == "action_mask"]
        if bad:
            raise ValueError(f"cannot drop {bad}; keys: {list(env.observation_space.spaces)}")
        self.drop = tuple(drop)
        self.history = history
        n = int(env.action_space.n)
        keep = {k: v for k, v in env.observation_space.spaces.items() if k not in self.drop}
        if history:
            keep[HISTORY_KEY] = spaces.MultiBinary(n)
            keep[LAST_KEY] = spaces.MultiBinary(n)
        self.observation_space = spaces.Dict(keep)
        self.memory = Memory(n)

    def _view(self, obs: dict) -> dict:
        out = {k: v for k, v in obs.items() if k not in self.drop}
        if self.history:
            out.update(self.memory.arrays())
        return out

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.memory.reset()
        return self._view(obs), info

    def step(self, action):
        obs, r, term, trunc, info = self.env.step(action)
        self.memory.record(int(action))
        return self._view(obs), r, term, trunc, info

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()


def make_env(env_id: str, level, *, env_kwargs: dict | None = None, history: bool = False,
             drop: tuple[str, ...] = (), monitor: bool = False, curriculum=None,
             cost_penalty: bool = False, fault_shaping: float = 0.0) -> gym.Env:
    """The policy's training env: :class:`AgentView` over the discrete interface of
    ``level`` (or, with a ``curriculum``, a :class:`~netarena_gym.train.curriculum.LevelMixEnv`
    over its levels, at its first stage); ``cost_penalty`` adds the Lagrangian's
    :class:`~netarena_gym.train.lagrangian.CostPenalty`; ``fault_shaping``: the weight of
    :class:`~netarena_gym.train.curriculum.FaultShaping` (0: none); ``monitor``: SB3's
    ``Monitor``."""
    if curriculum is not None:
        from netarena_gym.train.curriculum import LevelMixEnv
        env = LevelMixEnv({lvl: gym.make(env_id, level=lvl, interface="discrete",
                                         **(env_kwargs or {})) for lvl in curriculum.levels},
                          curriculum.stages[0].mix)
    else:
        env = gym.make(env_id, level=level, interface="discrete", **(env_kwargs or {}))
    if fault_shaping:
        from netarena_gym.train.curriculum import FaultShaping
        env = FaultShaping(env, fault_shaping)
    env = AgentView(env, history=history, drop=tuple(drop))
    if cost_penalty:
        from netarena_gym.train.lagrangian import CostPenalty
        env = CostPenalty(env)
    if monitor:
        from stable_baselines3.common.monitor import Monitor
        env = Monitor(env, info_keywords=("correct", "safe"))
    return env


#: the training vector envs (``make_vec_env``'s ``vec``): SB3's ``DummyVecEnv`` (every env in
#: this process) and ``SubprocVecEnv`` (a process per env), and
#: :class:`~netarena_gym.train.sb3_vec.BatchedSB3VecEnv` (the envs over ``workers``
#: processes, several per process)
VEC_ENVS = ("dummy", "subproc", "batched")


def make_vec_env(env_id: str, level, n_envs: int, *, seed: int = 0,
                 env_kwargs: dict | None = None, history: bool = False,
                 drop: tuple[str, ...] = (), subproc: bool = False, curriculum=None,
                 cost_penalty: bool = False, fault_shaping: float = 0.0,
                 vec: str | None = None, workers: int | None = None):
    """``n_envs`` monitored envs; ``level`` is one level or a list of one level per env
    (their spaces must agree); with a ``curriculum`` every env follows it instead.
    ``vec``: one of :data:`VEC_ENVS` (default ``"dummy"``, or ``"subproc"`` when
    ``subproc``); ``workers``: the processes of ``"batched"`` (default: one per core)."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    vec = vec or ("subproc" if subproc else "dummy")
    if vec not in VEC_ENVS:
        raise InvalidConfig(f"vec={vec!r}: expected one of {', '.join(VEC_ENVS)}")
    if workers is not None and vec != "batched":
        raise InvalidConfig(f"workers= is for vec='batched', not {vec!r}")

    levels = list(level) if isinstance(level, (list, tuple)) else [level] * n_envs
    if len(levels) != n_envs:
        raise ValueError(f"{len(levels)} levels for {n_envs} envs")
    # every level an env may play, the curriculum's too, before any training step
    every = set(levels) | set(curriculum.levels if curriculum is not None else ())
    check_same_spaces(env_id, sorted(every, key=str), env_kwargs)

    def thunk(lvl):
        def _f():
            return make_env(env_id, lvl, env_kwargs=env_kwargs, history=history, drop=drop,
                            monitor=True, curriculum=curriculum, cost_penalty=cost_penalty,
                            fault_shaping=fault_shaping)
        return _f
    fns = [thunk(lvl) for lvl in levels]
    if vec == "batched":
        from netarena_gym.train.sb3_vec import BatchedSB3VecEnv
        venv = BatchedSB3VecEnv(fns, workers=workers)
    else:
        venv = (SubprocVecEnv if vec == "subproc" else DummyVecEnv)(fns)
    venv.seed(seed)
    return venv


def check_same_spaces(env_id: str, levels: list, env_kwargs: dict | None = None) -> None:
    """A mix of levels needs one observation and one action space."""
    if len(levels) < 2:
        return
    spaces_of = {}
    for lvl in levels:
        e = gym.make(env_id, level=lvl, interface="discrete", **(env_kwargs or {}))
        spaces_of[lvl] = (e.observation_space, e.action_space)
        e.close()
    first = spaces_of[levels[0]]
    for lvl in levels[1:]:
        if spaces_of[lvl] != first:
            raise ValueError(f"levels {levels[0]!r} and {lvl!r} of {env_id} have different "
                             "discrete spaces; a policy cannot be trained on both")


def spaces_match(model, env_id: str, level, env_kwargs: dict | None = None) -> bool:
    """Whether a trained policy can act in ``env_id`` at ``level`` (same spaces)."""
    e = gym.make(env_id, level=level, interface="discrete", **(env_kwargs or {}))
    try:
        want = model.observation_space.spaces
        have = e.observation_space.spaces
        return (e.action_space == model.action_space
                and all(have.get(k) == v for k, v in want.items() if k not in MEMORY_KEYS))
    finally:
        e.close()


def new_model(algo: str, vec, *, seed: int = 0, hyper: dict | None = None,
              net_arch: list[int] | None = None, device: str = "cpu", policy: str = "mlp"):
    if algo not in ALGOS:
        raise ValueError(f"algo must be one of {ALGOS}, got {algo!r}")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if policy == "slots":
        if algo != "maskable_ppo":
            raise ValueError("the slot policy is a MaskablePPO policy (algo='maskable_ppo')")
        from sb3_contrib import MaskablePPO

        from netarena_gym.train.ppo_slots import SlotPolicy
        kw = dict(DEFAULT_HYPER)
        kw.update(hyper or {})
        return MaskablePPO(SlotPolicy, vec, seed=seed, verbose=0, device=device,
                           policy_kwargs={"hidden": (net_arch or [64])[0]}, **kw)
    if algo == "maskable_ppo":
        from sb3_contrib import MaskablePPO as Algo
    else:
        from stable_baselines3 import PPO as Algo
    kw = dict(DEFAULT_HYPER)
    kw.update(hyper or {})
    return Algo("MultiInputPolicy", vec, seed=seed, verbose=0, device=device,
                policy_kwargs={"net_arch": list(net_arch or DEFAULT_NET)}, **kw)


def load_model(path: str | Path, device: str = "cpu", env=None):
    """A saved policy, MaskablePPO or PPO (the zip records which); with ``env`` (a vector
    env), ready to train on."""
    from stable_baselines3.common.save_util import load_from_zip_file
    data, _, _ = load_from_zip_file(str(path), device=device, load_data=True)
    cls = data.get("policy_class")
    maskable = any("sb3_contrib.common.maskable" in f"{c.__module__}.{c.__name__}"
                   for c in (cls.__mro__ if isinstance(cls, type) else ())) or (
        "sb3_contrib.common.maskable" in str(cls))
    if maskable:
        from sb3_contrib import MaskablePPO as Algo
    else:
        from stable_baselines3 import PPO as Algo
    return Algo.load(str(path), device=device, env=env)


class PolicyAgent:
    """A trained policy as an agent on the discrete interface (deterministic by
    default). It builds the policy's view itself (the :class:`AgentView` the policy was
    trained with, read from its observation space): the keys it knows, and its own
    ``taken`` vector when it was trained with history."""

    def __init__(self, model, *, deterministic: bool = True):
        self.model = model
        self.deterministic = deterministic
        self.maskable = "Maskable" in type(model).__name__
        space = model.observation_space
        self.history = isinstance(space, spaces.Dict) and HISTORY_KEY in space.spaces
        self.keys = [k for k in space.spaces if k not in MEMORY_KEYS]
        self.memory = Memory(int(model.action_space.n))

    def reset(self) -> None:
        self.memory.reset()

    def act(self, observation: dict, info: dict) -> int:
        obs = {k: observation[k] for k in self.keys}
        if self.history:
            obs.update(self.memory.arrays())
        kw = {"action_masks": np.asarray(info["action_mask"], dtype=bool)} if self.maskable else {}
        a, _ = self.model.predict(obs, deterministic=self.deterministic, **kw)
        a = int(a)
        self.memory.record(a)
        return a


class SB3Agent(PolicyAgent):
    """For ``netarena-gym eval --agent netarena_gym.train.ppo:SB3Agent --interface
    discrete``: loads the policy named by the ``NETARENA_POLICY`` environment variable."""

    def __init__(self, env=None, path: str | None = None):
        path = path or os.environ.get("NETARENA_POLICY")
        if not path:
            raise ValueError("set NETARENA_POLICY to the saved policy (policy.zip)")
        if env is not None and env.unwrapped.interface != "discrete":
            raise ValueError("SB3Agent acts on the discrete interface; use --interface discrete")
        super().__init__(load_model(path))


CURVE_FIELDS = ("timesteps", "wall_seconds", "train_episodes", "train_correct", "eval_correctness",
                "eval_safety", "eval_mean_steps", "eval_mean_reward", "eval_mean_cost")


def _callback_class():
    from stable_baselines3.common.callbacks import BaseCallback

    class CurveCallback(BaseCallback):
        """Every ``every`` steps: deterministic evaluation on fixed seeds (the eval
        protocol) and the success rate of the recent training episodes; then, with a
        ``checkpoint_dir``, a ``checkpoint-N`` with the curve and ``stateful``'s states."""

        def __init__(self, *, env_id, level, every, episodes, seed, env_kwargs, t0,
                     rows=(), checkpoint_dir=None, stateful=None, keep=2):
            super().__init__()
            self.env_id, self.level, self.every = env_id, level, every
            self.episodes, self.seed, self.env_kwargs = episodes, seed, env_kwargs
            self.t0 = t0
            self.rows: list[dict] = list(rows)
            self._next = every
            self._eval_seconds = 0.0
            self.checkpoint_dir, self.stateful, self.keep = checkpoint_dir, stateful or {}, keep

        def _on_training_start(self) -> None:
            self._next = (self.num_timesteps // self.every + 1) * self.every

        def _on_step(self) -> bool:
            if self.num_timesteps >= self._next:
                self._next += self.every
                self.record()
            return True

        def record(self) -> None:
            buf = list(self.model.ep_info_buffer or [])
            t = time.perf_counter()
            levels = self.level if isinstance(self.level, list) else [self.level]
            per = [evaluate(self.env_id, PolicyAgent(self.model), level=lvl,
                            episodes=self.episodes, seed=self.seed, env_kwargs=self.env_kwargs)
                   for lvl in levels]
            s = {k: float(np.mean([p[k] for p in per]))
                 for k in ("correctness", "safety", "mean_steps", "mean_reward", "mean_cost")}
            self._eval_seconds += time.perf_counter() - t
            self.rows.append({
                "timesteps": int(self.num_timesteps),
                # training wall time, evaluation excluded
                "wall_seconds": round(time.perf_counter() - self.t0 - self._eval_seconds, 2),
                "train_episodes": len(buf),
                "train_correct": (float(np.mean([e.get("correct", 0) for e in buf]))
                                  if buf else float("nan")),
                "eval_correctness": s["correctness"], "eval_safety": s["safety"],
                "eval_mean_steps": s["mean_steps"], "eval_mean_reward": s["mean_reward"],
                "eval_mean_cost": s["mean_cost"],
                # Wilson 95% interval of the correctness (one level; a mix: none)
                "eval_ci95": per[0]["correctness_ci95"] if len(per) == 1 else None})
            if self.checkpoint_dir is not None:
                from netarena_gym.train.ppo_callbacks import save_checkpoint
                save_checkpoint(self.checkpoint_dir, self.model, {
                    "curve": self.rows,
                    "callbacks": {k: cb.state() for k, cb in self.stateful.items()}},
                    keep=self.keep)

    return CurveCallback


def train(*, algo: str = "maskable_ppo", env_id: str, level, timesteps: int, n_envs: int = 8,
          seed: int = 0, hyper: dict | None = None, net_arch: list[int] | None = None,
          env_kwargs: dict | None = None, history: bool = True, drop: tuple[str, ...] = (),
          subproc: bool = False, vec: str | None = None, workers: int | None = None,
          eval_every: int = 25_000, eval_episodes: int = 100, eval_seed: int = 0,
          on_record=None, progress_bar: bool = False, log_dir: str | Path | None = None,
          report_to: str = "none", checkpoint_dir: str | Path | None = None,
          resume_from: str | Path | None = None, curriculum=None, lagrangian=None,
          policy: str = "mlp", fault_shaping: float = 0.0,
          stop_after_seconds: float | None = None):
    """Train; returns ``(model, curve_rows)``. ``level``: one level, or one per env.
    Evaluation seeds ``eval_seed + i`` are the ``netarena-gym eval --seed`` ones (a mix is
    evaluated on each of its levels and averaged); training episodes come from the vector
    env's own seeded stream (from ``seed + 7919 + steps done``), not from the evaluation
    seeds; a resumed run's stream starts where its checkpoint's steps put it.

    ``log_dir``: SB3's logger writes ``progress.csv`` there (with each reward component,
    the episode cost, ...; see :mod:`~netarena_gym.train.ppo_callbacks`), and TensorBoard
    events for ``report_to`` ``"tensorboard"``/``"wandb"``. ``checkpoint_dir``: a
    ``checkpoint-N`` at every curve point; ``resume_from``: such a checkpoint, trained on
    up to ``timesteps`` in all. ``curriculum``: a
    :class:`~netarena_gym.train.curriculum.Curriculum` the training envs follow (the curve
    still evaluates ``level``). ``lagrangian``: a
    :class:`~netarena_gym.train.lagrangian.LagrangeConfig` (or dict) for the cost penalty
    with a learned multiplier. ``policy``: one of :data:`POLICIES`. ``fault_shaping``:
    the weight of :class:`~netarena_gym.train.curriculum.FaultShaping` in training.
    ``stop_after_seconds``: end training early (at the next step) once this much wall
    time has passed, evaluations included; the curve then ends with a point there.
    ``vec`` and ``workers``: the training vector env (:func:`make_vec_env`; ``subproc=True``
    is ``vec="subproc"``)."""
    import torch
    from stable_baselines3.common.callbacks import CallbackList

    from netarena_gym.train.lagrangian import LagrangeConfig, lagrange_callback
    from netarena_gym.train.ppo_callbacks import (POLICY_FILE, EpisodeMetrics, configure_logger,
                                                  finish_tracking, read_checkpoint)
    torch.set_num_threads(1)
    lagrangian = LagrangeConfig.coerce(lagrangian)
    vec = make_vec_env(env_id, level, n_envs, seed=seed, env_kwargs=env_kwargs,
                       history=history, drop=drop, subproc=subproc, vec=vec, workers=workers,
                       curriculum=curriculum,
                       cost_penalty=lagrangian is not None, fault_shaping=fault_shaping)
    state: dict = {"curve": [], "callbacks": {}}
    if resume_from is not None:
        model = load_model(Path(resume_from) / POLICY_FILE, env=vec)
        state = read_checkpoint(resume_from)
    else:
        model = new_model(algo, vec, seed=seed, hyper=hyper, net_arch=net_arch, policy=policy)
    # over SB3's reseed with the model's seed: clear of eval seeds, new episodes on resume
    vec.seed(seed + 7919 + int(model.num_timesteps))
    if log_dir is not None:
        model.set_logger(configure_logger(log_dir, report_to, config={
            "algo": algo, "env_id": env_id, "level": str(level), "timesteps": timesteps,
            "seed": seed, "hyper": hyper or {}},
            resumed_at=model.num_timesteps if resume_from is not None else None))
    stateful = {}
    callbacks = [EpisodeMetrics()]
    if lagrangian is not None:
        stateful["lagrangian"] = lagrange_callback(lagrangian)
    if curriculum is not None:
        from netarena_gym.train.curriculum import curriculum_callback
        callbacks.append(curriculum_callback(curriculum))
    for name, cb in stateful.items():
        if name in state["callbacks"]:
            cb.load_state(state["callbacks"][name])
        callbacks.append(cb)
    done_wall = state["curve"][-1]["wall_seconds"] if state["curve"] else 0.0
    t0 = time.perf_counter() - done_wall
    distinct = sorted(set(level), key=str) if isinstance(level, (list, tuple)) else [level]
    cb = _callback_class()(env_id=env_id, level=distinct, every=eval_every, episodes=eval_episodes,
                           seed=eval_seed, env_kwargs=env_kwargs, t0=t0, rows=state["curve"],
                           checkpoint_dir=checkpoint_dir, stateful=stateful)
    if on_record is not None:
        orig = cb.record

        def record():
            orig()
            on_record(cb.rows[-1])
        cb.record = record
    callbacks.append(cb)
    if stop_after_seconds is not None:
        from netarena_gym.train.ppo_callbacks import StopAfter
        callbacks.append(StopAfter(time.perf_counter() + stop_after_seconds))
    # stable-baselines3's own bar (rich, through tqdm.rich): timesteps, rate and time left
    remaining = max(0, timesteps - model.num_timesteps)
    if remaining:
        model.learn(total_timesteps=remaining, callback=CallbackList(callbacks),
                    progress_bar=progress_bar, reset_num_timesteps=resume_from is None)
    if not cb.rows or cb.rows[-1]["timesteps"] < model.num_timesteps:
        cb.model, cb.num_timesteps = model, model.num_timesteps
        cb.record()
    if log_dir is not None:
        model.logger.close()
        finish_tracking(report_to)
    vec.close()
    return model, cb.rows


def write_curve(rows: list[dict], out_dir: str | Path, title: str = "") -> tuple[Path, Path]:
    """``learning_curve.csv`` and ``learning_curve.png`` in ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path, png_path = out / "learning_curve.csv", out / "learning_curve.png"
    write_csv(csv_path, rows, CURVE_FIELDS)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    xs = [r["timesteps"] for r in rows]
    ax.plot(xs, [r["eval_correctness"] for r in rows], marker="o",
            label="eval correctness (deterministic)")
    ax.plot(xs, [r["eval_safety"] for r in rows], linestyle="--", label="eval safety")
    ax.plot(xs, [r["train_correct"] for r in rows], alpha=0.6, label="training episodes correct")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("fraction of episodes")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)
    return csv_path, png_path


def write_json(obj: Any, path: str | Path) -> None:
    Path(path).write_text(json.dumps(obj, indent=2, default=str) + "\n")
