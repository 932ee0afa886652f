"""The agent protocol (``reset()``, ``act(observation, info) -> action``) and the
random baseline, which works on both interfaces of every task."""
from __future__ import annotations

from typing import Any

import numpy as np

from netarena_gym.core.protocols import Agent  # noqa: F401  (the protocol lives in core.protocols)


class RandomAgent:
    """Uniform over the valid entries of the env's action catalogue. On the discrete
    interface it returns the index; on the text interface, the entry's text action."""

    def __init__(self, env, seed: int | None = None):
        self.env = env.unwrapped
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        pass

    def act(self, observation: Any, info: dict) -> Any:
        mask = info["action_mask"]
        valid = np.flatnonzero(mask)
        idx = int(valid[self.rng.integers(0, len(valid))]) if len(valid) else 0
        if self.env.interface == "discrete":
            return idx
        return dict(self.env.catalogue.render(idx))
