"""The pingall text: the same as Mininet's cell-by-cell rendering, whatever rows fail."""
import numpy as np
import pytest

from netarena_gym.core.metrics import loss_percent
from netarena_gym.routing.render import pingall_text


def cell_by_cell(names, m) -> str:
    """The reference: one cell at a time, as Mininet's pingAll prints."""
    lines = ["*** Ping: testing ping reachability"]
    n = len(names)
    for i in range(n):
        lines.append(f"{names[i]} -> " + " ".join(names[j] if m[i][j] else "X"
                                                  for j in range(n) if j != i))
    lines.append(f"*** Results: {loss_percent(m)}% dropped ({int(m.sum()) - n}/{n * (n - 1)} "
                 "received)")
    return "\n".join(lines)


@pytest.mark.parametrize("n", [1, 2, 5, 14, 40])
@pytest.mark.parametrize("p", [0.0, 0.5, 0.95, 1.0])
def test_pingall_text_is_mininets_rendering(n, p):
    rng = np.random.default_rng(n)
    names = [f"h{i}" for i in range(1, n)] + ["r0"]
    for _ in range(5):
        m = rng.random((n, n)) < p
        np.fill_diagonal(m, True)
        assert pingall_text(names, m) == cell_by_cell(names, m)
        m[0, 0] = False  # a node that cannot reach itself: every other cell still shown
        assert pingall_text(names, m) == cell_by_cell(names, m)


def test_a_working_row_is_every_other_name():
    m = np.ones((3, 3), dtype=bool)
    m[1, 2] = False
    assert pingall_text(["h1", "h2", "r0"], m).splitlines()[1:4] == [
        "h1 -> h2 r0", "h2 -> h1 X", "r0 -> h1 h2"]
