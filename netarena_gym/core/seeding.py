"""Seeded randomness. Every draw comes from a :class:`numpy.random.Generator` that the env
owns (``env.np_random``) or that is built from an explicit seed; no global state."""
from __future__ import annotations

import numpy as np

SEED_SPACE = 2**31 - 1


def rng_from_seed(seed: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(int(seed)))


def draw_seed(rng: np.random.Generator) -> int:
    """A fresh episode seed from an owning generator."""
    return int(rng.integers(0, SEED_SPACE))


def choice(rng: np.random.Generator, seq):
    """Uniform choice from a sequence (keeps element types, unlike ``rng.choice``)."""
    return seq[int(rng.integers(0, len(seq)))]


def sample(rng: np.random.Generator, seq, k: int) -> list:
    idx = rng.permutation(len(seq))[:k]
    return [seq[int(i)] for i in idx]
