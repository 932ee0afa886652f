"""EpisodeMetrics keeps the working-pair count with the outcome vector; every figure must
equal its definition recomputed from the vectors, on matrices and vectors, changed,
unchanged (the same object again) and empty."""
import numpy as np
import pytest

from netarena_gym.core.metrics import EpisodeMetrics, loss_of, loss_percent, pairs_of


def reference(prev: np.ndarray, m: np.ndarray) -> tuple[int, int, bool, int]:
    """(newly broken, loss %, correct, broken) from the definitions."""
    newly = int(np.sum(prev & ~m))
    failed = m.size - int(np.sum(m))
    loss = int(100 * failed / m.size) if m.size else 0
    return newly, loss, bool(m.all()), failed


@pytest.mark.parametrize("shape", [(5, 5), (12,), (0,)])
def test_counts_follow_every_update(shape):
    rng = np.random.default_rng(1)
    m = rng.random(shape) < 0.6
    met = EpisodeMetrics(initial=m)
    prev = pairs_of(m) if m.ndim == 2 else m
    assert met.loss_history == [reference(prev, prev)[1]]
    for step in range(60):
        choice = rng.integers(3)
        if choice == 0:
            m = m  # the same object again: unchanged
        elif choice == 1:
            m = np.ones(shape, dtype=bool)  # all working
        else:
            m = rng.random(shape) < 0.7
        vec = pairs_of(m) if m.ndim == 2 else m
        newly, loss, correct, broken = reference(prev, vec)
        assert met.update(m) == newly
        assert met.loss_history[-1] == loss == loss_percent(m)
        assert met.correct is correct and met.broken == broken
        assert met.steps == step + 1
        prev = vec


def test_loss_of_matches_loss_percent():
    assert loss_of(0, 0) == 0 and loss_of(3, 2) == 33 and loss_of(4, 4) == 0
    m = np.array([True, False, False])
    assert loss_percent(m) == loss_of(3, 1) == 66


def test_compat_reference_replaces_the_initial_loss_for_the_first_step_only():
    """K8s upstream has no baseline: a reference of 100 lets the first step's loss rise
    above the initial state's; later steps compare with the step before."""
    initial = np.array([True, True, True, False])
    worse, worst = np.array([True, True, False, False]), np.array([True, False, False, False])
    plain = EpisodeMetrics(initial=initial)
    plain.update(worse)
    assert not plain.safe_compat
    met = EpisodeMetrics(initial=initial, compat_reference=100)
    assert met.loss_history == [25]
    met.update(worse)
    assert met.safe_compat and met.loss_history == [25, 50]
    met.update(worst)
    assert not met.safe_compat
    first_same = EpisodeMetrics(initial=initial, compat_reference=100)
    first_same.update(first_same.current)  # the identical vector: the shortcut path
    assert first_same.loss_history == [25, 25]
    first_same.update(worse)
    assert not first_same.safe_compat


def test_skip_counts_a_step_and_keeps_every_verdict():
    met = EpisodeMetrics(initial=np.array([True, False]))
    met.skip()
    assert (met.steps, met.correct, met.safe, met.safe_compat, met.loss_history) == \
        (1, False, True, True, [50])
