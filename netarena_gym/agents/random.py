"""The random baseline: one agent for every task and every interface.

It draws uniformly over the entries that ``info["action_mask"]`` marks valid in the env's
action catalogue. On the ``discrete`` interface it returns the index; on a text interface
(``text``, ``code``) the text action that entry stands for
(``env.unwrapped.catalogue.render(i)``). The generator is a local
:func:`numpy.random.default_rng` (no global state); :meth:`set_episode_seed` reseeds it from
the episode's seed so that a run's choices depend on the episode only, not on which worker
played it or what it played before.

Where the mask marks nothing valid (capacity planning's ``code`` interface has no
catalogue), it sends :data:`NO_ACTION` (index 0 on ``discrete``): the env scores it as an
invalid action, so the baseline is penalised rather than crashing.
"""
from __future__ import annotations

from typing import Any

import numpy as np

NO_ACTION = "(the random agent has no valid action)"


class RandomAgent:
    """Uniform over the valid catalogue entries (``seed`` mixed with the episode's seed)."""

    def __init__(self, env, seed: int | None = None):
        self.env = env.unwrapped
        self.base_seed = seed
        self.rng = np.random.default_rng(seed)

    def set_episode_seed(self, seed: int) -> None:
        self.rng = np.random.default_rng([int(seed), int(self.base_seed or 0)])

    def reset(self) -> None:
        pass

    def act(self, observation: Any, info: dict) -> Any:
        valid = np.flatnonzero(np.asarray(info["action_mask"]))
        discrete = self.env.interface == "discrete"
        if not len(valid):
            return 0 if discrete else NO_ACTION
        idx = int(valid[self.rng.integers(0, len(valid))])
        return idx if discrete else dict(self.env.catalogue.render(idx))
