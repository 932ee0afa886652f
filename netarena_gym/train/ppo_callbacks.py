"""Callbacks of the PPO trainer (:mod:`netarena_gym.train.ppo`), on stable-baselines3's
``BaseCallback`` (SB3 2.x) and its logger.

* :class:`EpisodeMetrics` logs, per rollout, each reward component of the env
  (``info["reward_components"]``) summed over an episode and averaged over the episodes
  that ended in the rollout (``reward/success``, ``reward/safety``, ``reward/step`` ...),
  the episode cost (``cost/episode``: the sum of ``info["cost"]``, as Safety-Gymnasium
  reports it) and the share of those episodes that ended correct and safe
  (``episode/correct``, ``episode/safe``). They go wherever the model's logger writes:
  ``OUT/progress.csv`` always (with SB3's own ``rollout/``, ``train/`` and ``time/``
  keys), TensorBoard or Weights & Biases with ``--report-to``.
* :class:`StopAfter` ends training at the first step past a wall-clock deadline
  (``time.perf_counter()`` value), for runs that must fit a time slot.
* :func:`configure_logger` sets that logger up (SB3's ``csv`` and ``tensorboard`` output
  formats; for W&B, ``wandb.init(sync_tensorboard=True)``, the route W&B documents for SB3).
* :func:`save_checkpoint` / :func:`read_checkpoint`: ``OUT/checkpoint-N`` folders (the
  layout of transformers' ``Trainer``) holding ``policy.zip`` (weights and optimizer
  state) and ``state.json`` (the learning curve so far and each stateful callback's
  state, e.g. the Lagrange multiplier) for ``--resume``.

What it leaves out: SB3's own ``CheckpointCallback`` naming (``rl_model_N_steps.zip``),
so that one ``--resume`` finds checkpoints of every trainer the same way; the vector
envs' random state is not saved: a resumed run reseeds them from the seed and the
checkpoint's steps (:func:`~netarena_gym.train.ppo.train`), so it continues with fresh,
reproducible episode draws (not the original run's first ones) and is not step-for-step
identical to an uninterrupted one.
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger, configure

from netarena_gym.core.reward import COMPONENTS

#: file names inside a checkpoint folder
POLICY_FILE, STATE_FILE = "policy.zip", "state.json"


class EpisodeMetrics(BaseCallback):
    """Per-episode reward components, cost, correctness and safety, logged per rollout
    (means over the episodes that ended in it; nothing is logged for a rollout in which no
    episode ended)."""

    def __init__(self):
        super().__init__()
        self._sums: np.ndarray | None = None
        self._cost: np.ndarray | None = None
        self._ended: list[dict] = []

    def _on_training_start(self) -> None:
        n = self.training_env.num_envs
        self._sums = np.zeros((n, len(COMPONENTS)))
        self._cost = np.zeros(n)

    def _on_step(self) -> bool:
        infos, dones = self.locals["infos"], self.locals["dones"]
        for i, info in enumerate(infos):
            comps = info.get("reward_components") or {}
            self._sums[i] += [comps.get(k, 0.0) for k in COMPONENTS]
            self._cost[i] += float(info.get("cost", 0.0))
            if dones[i]:
                self._ended.append({**dict(zip(COMPONENTS, self._sums[i].tolist())),
                                    "cost": float(self._cost[i]),
                                    "correct": float(bool(info.get("correct"))),
                                    "safe": float(bool(info.get("safe")))})
                self._sums[i] = 0.0
                self._cost[i] = 0.0
        return True

    def _on_rollout_end(self) -> None:
        if not self._ended:
            return
        for k in COMPONENTS:
            self.logger.record(f"reward/{k}", float(np.mean([e[k] for e in self._ended])))
        self.logger.record("cost/episode", float(np.mean([e["cost"] for e in self._ended])))
        self.logger.record("episode/correct", float(np.mean([e["correct"] for e in self._ended])))
        self.logger.record("episode/safe", float(np.mean([e["safe"] for e in self._ended])))
        self.logger.record("episode/count", len(self._ended))
        self._ended = []


class StopAfter(BaseCallback):
    """Returns False (SB3: stop training) once ``time.perf_counter()`` passes ``deadline``."""

    def __init__(self, deadline: float):
        super().__init__()
        self.deadline = float(deadline)

    def _on_step(self) -> bool:
        return time.perf_counter() < self.deadline


def configure_logger(log_dir: str | Path, report_to: str = "none", *,
                     config: dict | None = None, resumed_at: int | None = None) -> Logger:
    """SB3's logger writing ``log_dir/progress.csv``, plus TensorBoard event files in
    ``log_dir`` for ``report_to="tensorboard"`` or ``"wandb"`` (W&B syncs them; its run is
    started here with ``config``). SB3 rewrites ``progress.csv`` when it opens it, so a
    run resumed at step ``resumed_at`` first moves the earlier one to
    ``progress-to-N.csv`` (TensorBoard keeps both parts: its steps are the timesteps)."""
    old = Path(log_dir) / "progress.csv"
    if resumed_at is not None and old.exists():
        old.rename(old.with_name(f"progress-to-{int(resumed_at)}.csv"))
    formats = ["csv"]
    if report_to in ("tensorboard", "wandb"):
        formats.append("tensorboard")
    if report_to == "wandb":
        import wandb
        wandb.init(project="netarena-gym", dir=str(log_dir), config=config or {},
                   sync_tensorboard=True, resume="allow")
    return configure(str(log_dir), formats)


def finish_tracking(report_to: str) -> None:
    """Close what :func:`configure_logger` opened beyond the files (the W&B run)."""
    if report_to == "wandb":
        import wandb
        wandb.finish()


def save_checkpoint(out: str | Path, model, state: dict, *, keep: int = 2) -> Path:
    """``out/checkpoint-N`` (N: the model's timesteps) with ``policy.zip`` and
    ``state.json``; older checkpoints beyond the ``keep`` newest are removed."""
    out = Path(out)
    path = out / f"checkpoint-{int(model.num_timesteps)}"
    path.mkdir(parents=True, exist_ok=True)
    model.save(path / POLICY_FILE)
    (path / STATE_FILE).write_text(json.dumps(state, indent=1, default=float) + "\n")
    found = sorted((int(p.name.split("-")[1]), p) for p in out.glob("checkpoint-*")
                   if p.is_dir() and p.name.split("-")[1].isdigit())
    for _, old in found[:-keep] if keep > 0 else []:
        shutil.rmtree(old)
    return path


def read_checkpoint(path: str | Path) -> dict:
    """A checkpoint's ``state.json``."""
    return json.loads((Path(path) / STATE_FILE).read_text())
