"""benchmarks/bench_speed.py: the batch's random masked actions, ``--only``, the vector
rows and the CartPole pairing (their figures are measured by the benchmark, never asserted
here: the pairing runs on a simulated clock)."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_speed  # noqa: E402


def test_masked_choice_is_uniform_over_the_valid_entries():
    masks = np.zeros((2, 6), dtype=np.int8)
    masks[0, [1, 4]] = 1
    masks[1, [0, 2, 5]] = 1
    rng = np.random.default_rng(0)
    picks = np.array([bench_speed.masked_choice(masks, rng) for _ in range(3000)])
    assert set(picks[:, 0]) == {1, 4} and set(picks[:, 1]) == {0, 2, 5}
    assert abs(np.mean(picks[:, 0] == 1) - 0.5) < 0.05
    assert all(abs(np.mean(picks[:, 1] == k) - 1 / 3) < 0.05 for k in (0, 2, 5))


def test_only_rejects_unknown_sections_and_partial_readme(tmp_path):
    with pytest.raises(SystemExit):
        bench_speed.main(["--only", "vectors"])
    with pytest.raises(SystemExit):
        bench_speed.main(["--only", "vector", "--readme", str(tmp_path / "README.md")])


def test_vector_speedup_runs_both_vector_envs():
    kw = {"level": 1, "interface": "discrete", "info": "lean"}
    for kind in ("netarena", "gymnasium"):
        ratio, main_us, bound = bench_speed.vector_speedup("NetArena-K8sPolicy-v0", kw, 0.5, kind)
        assert ratio > 0 and main_us > 0 and bound > 0


def test_vector_text_rows_read_the_envs_text():
    """Text rows: Gymnasium's env without shared memory (its Text shared memory is read
    back only when built), ours through :func:`netarena_gym.vector.make_vec`; both return
    the router's output."""
    kw = {"level": 1, "interface": "text", "info": "lean"}
    for kind in ("netarena", "gymnasium"):
        v = bench_speed.make_vector(kind, "NetArena-Routing-v0", kw)
        try:
            assert not v.shared_memory
            v.reset(seed=0)
            obs = v.step([bench_speed.TEXT_ACTION] * 2)[0]
            assert "192.168." in obs[0] and "192.168." in obs[1]
        finally:
            v.close()
    assert bench_speed.vector_speedup("CartPole-v1", {}, 0.3)[0] > 0


class _IntOnly:
    """An env that, as NASim's flat action space does, accepts only a plain ``int``."""

    def __init__(self):
        from gymnasium import spaces
        self.action_space = spaces.Discrete(3)
        self.steps = 0

    def reset(self, seed=None):
        return 0, {}

    def step(self, a):
        assert type(a) is int, f"{a!r} is not a plain int"
        self.steps += 1
        return 0, 0.0, self.steps % 5 == 0, False, {}


def test_nasim_shim_hands_the_env_plain_ints():
    env = _IntOnly()
    rate, step_rate = bench_speed.throughput(bench_speed._GymnasiumShim(env), 0.05, warmup=1)
    assert env.steps > 0 and rate > 0 and step_rate >= rate


def test_masked_choice_gives_0_for_a_row_without_a_valid_entry_and_reads_bool_masks():
    masks = np.zeros((3, 5), dtype=bool)
    masks[0, 4] = True
    masks[2, [0, 3]] = True
    rng = np.random.default_rng(1)
    picks = np.array([bench_speed.masked_choice(masks, rng) for _ in range(200)])
    assert set(picks[:, 0]) == {4} and set(picks[:, 1]) == {0} and set(picks[:, 2]) == {0, 3}


def test_an_expert_that_cannot_run_here_is_a_skipped_row(monkeypatch):
    def fail(*a, **k):
        raise bench_speed.NetArenaError("bwrap not found on PATH")
    monkeypatch.setattr(bench_speed.benchkit, "decision_ms", fail)
    table = bench_speed.measure(0.05, 2, 1, 0.1, only=("expert",))["table"]
    rows = [r for r in table if r["figure"].startswith("expert ")]
    assert rows and all(r["value"] is None and "bwrap" in r["skipped"] for r in rows)
    assert "skipped: bwrap not found on PATH" in bench_speed.markdown(table)


class _Machine:
    """A simulated CPU clock whose speed drops to a third at ``slow_after`` seconds, as a
    shared VM's did (CartPole-v1 alone read 79,000 then 47,000 steps/s)."""

    def __init__(self, slow_after: float):
        self.t, self.slow_after = 0.0, slow_after

    def __call__(self) -> float:
        return self.t

    def work(self, cost: float) -> None:
        self.t += cost * (3.0 if self.t >= self.slow_after else 1.0)


class _Costly:
    """An env whose step takes ``cost`` simulated seconds and whose episodes last 4 steps;
    it records the episode of every step."""

    def __init__(self, machine: _Machine, cost: float):
        from gymnasium import spaces
        self.machine, self.cost = machine, cost
        self.action_space, self.unwrapped = spaces.Discrete(2), self
        self.t = self.resets = 0
        self.episode_of_steps: list[int] = []

    def reset(self, seed=None):
        self.t, self.resets = 0, self.resets + 1
        return 0, {}

    def step(self, a):
        self.machine.work(self.cost)
        self.t += 1
        self.episode_of_steps.append(self.resets)
        return 0, 0.0, self.t == 4, False, {}


def test_paired_throughput_shares_a_change_of_machine_speed(monkeypatch):
    """The env costs twice the reference per step. Run after the reference (the bench's
    old order), a slowdown between the two runs reads as 6x; taking turns, both sides
    see it and the ratio stays 2x."""
    machine = _Machine(slow_after=1.0)
    monkeypatch.setattr(bench_speed, "clock", machine)
    env, ref = _Costly(machine, 0.002), _Costly(machine, 0.001)
    ref_rate = bench_speed.throughput(ref, 1.0, warmup=0)[0]
    alone = bench_speed.throughput(env, 1.0, warmup=0)[0]
    assert ref_rate / alone == pytest.approx(6.0, rel=0.05)

    machine = _Machine(slow_after=1.0)
    monkeypatch.setattr(bench_speed, "clock", machine)
    env, ref = _Costly(machine, 0.002), _Costly(machine, 0.001)
    with_resets, step_only, ref_rate = bench_speed.paired_throughput(env, ref, 1.0, slices=10)
    assert ref_rate / with_resets == pytest.approx(2.0, rel=0.1)
    assert step_only == pytest.approx(with_resets, rel=1e-9)  # resets cost nothing here


def test_a_stepper_goes_on_with_its_episode_from_one_slice_to_the_next(monkeypatch):
    machine = _Machine(slow_after=1e9)
    monkeypatch.setattr(bench_speed, "clock", machine)
    env = _Costly(machine, 0.01)
    s = bench_speed.Stepper(env, warmup=2)
    assert env.resets == 3  # two untimed warm-up resets, then the first episode's
    s.run(0.05)
    s.run(0.05)
    eps = env.episode_of_steps
    assert len(eps) == s.steps == 200  # one batch of 100 steps per slice
    # every episode is 4 steps long, across the slices' boundary too: no reset between them
    assert all(eps.count(e) == 4 for e in set(eps))
    assert s.episodes == 50 and s.rates()[0] == pytest.approx(200 / 2.0)
