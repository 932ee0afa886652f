"""Lagrangian PPO: safety as a constraint on the episode cost, with a learned multiplier.

The constrained problem of Safety-Gymnasium (Ray, Achiam & Amodei 2019, "Benchmarking
Safe Exploration in Deep RL", PPO-Lagrangian): maximise the return ``J_r`` subject to the
expected episode cost ``J_c = E[sum_t info["cost"]] <= d``. Its Lagrangian relaxation
trains PPO on the penalised reward ``r_t - lambda * c_t`` and moves the multiplier by
gradient ascent on the constraint after every rollout::

    lambda <- max(0, lambda + lr * (mean episode cost of the rollout - d))

:class:`CostPenalty` applies the penalty inside each training env (the multiplier is
pushed to every env through ``VecEnv.env_method``, so it works with Dummy and Subproc
vector envs); :class:`LagrangeCallback` updates it and logs ``cost/lambda`` and
``cost/limit``. The env's own ``info["cost"]`` is the cost (routing and K8s: the pairs or
probes the step newly broke; capacity planning: the new constraint violations); train with
the reward's fixed ``safety`` weight at 0 (``reward={"safety": 0}``) so that the
multiplier is the only safety signal, as Safety-Gymnasium keeps reward and cost apart.

What it leaves out: the PID-Lagrangian and the cost critic of OmniSafe's PPO-Lag (the
penalty is folded into the reward, so PPO's one value head estimates the penalised
return).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

import gymnasium as gym

from netarena_gym.errors import InvalidConfig


@dataclass(frozen=True, kw_only=True)
class LagrangeConfig:
    """``cost_limit``: the episode cost budget ``d``; ``lr``: the multiplier's step size
    per rollout; ``init``: its starting value (>= 0)."""
    cost_limit: float = 0.0
    lr: float = 0.05
    init: float = 0.0

    def __post_init__(self):
        if self.cost_limit < 0 or self.lr <= 0 or self.init < 0:
            raise InvalidConfig(f"need cost_limit >= 0, lr > 0 and init >= 0, got {self}")

    @classmethod
    def coerce(cls, obj: "LagrangeConfig | dict | None") -> "LagrangeConfig | None":
        if obj is None or isinstance(obj, cls):
            return obj
        known = {f.name for f in fields(cls)}
        bad = set(obj) - known
        if bad:
            raise InvalidConfig(f"unknown Lagrangian settings {sorted(bad)}; known: {sorted(known)}")
        return cls(**obj)

    def to_dict(self) -> dict:
        return asdict(self)


class CostPenalty(gym.Wrapper):
    """Reward ``r - multiplier * info["cost"]``; ``set_multiplier`` changes the multiplier."""

    def __init__(self, env: gym.Env, multiplier: float = 0.0):
        super().__init__(env)
        self.multiplier = float(multiplier)

    def set_multiplier(self, value: float) -> None:
        self.multiplier = float(value)

    def step(self, action):
        obs, r, term, trunc, info = self.env.step(action)
        return obs, float(r) - self.multiplier * float(info["cost"]), term, trunc, info

    def action_masks(self):
        return self.env.get_wrapper_attr("action_masks")()


def lagrange_callback(config: LagrangeConfig):
    """The :class:`LagrangeCallback` for ``config`` (stable-baselines3 imported here)."""
    from stable_baselines3.common.callbacks import BaseCallback

    class LagrangeCallback(BaseCallback):
        """After each rollout: the multiplier's ascent step on ``mean episode cost - d``
        (episodes that ended in the rollout; none ended: no step)."""

        def __init__(self):
            super().__init__()
            self.config = config
            self.multiplier = config.init
            self._cost = None
            self._ended: list[float] = []

        def _on_training_start(self) -> None:
            import numpy as np
            self._cost = np.zeros(self.training_env.num_envs)
            self.training_env.env_method("set_multiplier", self.multiplier)

        def _on_step(self) -> bool:
            for i, info in enumerate(self.locals["infos"]):
                self._cost[i] += float(info.get("cost", 0.0))
                if self.locals["dones"][i]:
                    self._ended.append(float(self._cost[i]))
                    self._cost[i] = 0.0
            return True

        def _on_rollout_end(self) -> None:
            if self._ended:
                jc = sum(self._ended) / len(self._ended)
                self.multiplier = max(0.0, self.multiplier
                                      + self.config.lr * (jc - self.config.cost_limit))
                self._ended = []
                self.training_env.env_method("set_multiplier", self.multiplier)
            self.logger.record("cost/lambda", self.multiplier)
            self.logger.record("cost/limit", self.config.cost_limit)

        def state(self) -> dict:
            return {"multiplier": self.multiplier}

        def load_state(self, state: dict) -> None:
            self.multiplier = float(state["multiplier"])

    return LagrangeCallback()


__all__ = ["LagrangeConfig", "CostPenalty", "lagrange_callback"]
