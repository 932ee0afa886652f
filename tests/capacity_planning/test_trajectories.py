"""Episodes are a function of the seeds and the actions: digests of whole trajectories
(observations, rewards, ends, every ``info`` and the rendered text, which shows each tool's
output) at every level of the tool interfaces, pinned. The pins were taken before the speed
work of issue 14 (lazy tool texts, cheaper resets and grading), so they prove those changes
kept every episode byte-identical; a change that alters episodes on purpose re-pins them
(run this file as a script)."""
import hashlib
import json
import sys

import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401 - registers the envs

ENV_ID = "NetArena-CapacityPlanning-v0"

EPISODES = {"discrete": 150, "text": 40}
# (level, interface, history) -> sha256 of the trajectories
PINNED = {
    (1, 'discrete', 0): '1ce18ab06022f9e2703cf94d95f6abd17459f483eb23f27529adfbcffd47b0cc',
    (2, 'discrete', 0): '1c399acf1a50ed97c05427b79bf94b86e14d829e4854dac326cad81434cc27d5',
    (3, 'discrete', 0): '556c2d0dc79ed8e905921b99cc579efeddec7a540c14f7454b24fd6a2c297025',
    (4, 'discrete', 0): '3fbfe100df2f065e1dd0e0c2a3c421323372fe3315726548fea3a24d653a2707',
    (1, 'text', 2): 'f60a590e210b89ccfb9baa7708a9ee370dac8bb65681ac79cba4dfe039380ba6',
    (2, 'text', 2): '5186067c3e110dcf42cbb3ebbc1d2b4363dd325f821d65959f271c26cbe2b46f',
    (3, 'text', 2): 'f1cffe5e96c97473c26cb796c7c6eafe77cc11bba509da8643f8a8c72b949aa5',
    (4, 'text', 2): '3160653f8dfec58326ffebe88cf947b3964f64aa50e36468110f6f382eb6b16a',
}


def _plain(v):
    if isinstance(v, np.ndarray):
        return [v.dtype.str, list(v.shape), v.tobytes().hex()]
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(type(v))


def _feed(h, *values) -> None:
    for v in values:
        h.update(json.dumps(v, sort_keys=True, default=_plain).encode())
        h.update(b"\0")


def digest(level: int, interface: str, history: int = 0) -> str:
    """Random masked episodes (seeds 0..n-1): every even seed renders the text observation
    (the tool outputs) at every step, odd seeds never do."""
    env = gym.make(ENV_ID, level=level, interface=interface, history=history,
                   render_mode="ansi")
    base = env.unwrapped
    rng = np.random.default_rng(1000 * level + history)
    h = hashlib.sha256()
    for seed in range(EPISODES[interface]):
        obs, info = env.reset(seed=seed)
        _feed(h, obs, info)
        done = False
        while not done:
            idx = int(rng.choice(np.flatnonzero(info["action_mask"])))
            action = idx if interface == "discrete" else base.catalogue.entries[idx].action
            obs, r, term, trunc, info = env.step(action)
            _feed(h, obs, r, term, trunc, info, env.render() if seed % 2 == 0 else "")
            done = term or trunc
    env.close()
    return h.hexdigest()


CASES = [(lvl, "discrete", 0) for lvl in (1, 2, 3, 4)] + [(lvl, "text", 2) for lvl in (1, 2, 3, 4)]


@pytest.mark.parametrize("level,interface,history", CASES)
def test_trajectories_are_byte_identical_to_the_pinned_ones(level, interface, history):
    assert digest(level, interface, history) == PINNED[(level, interface, history)]


if __name__ == "__main__":  # print the pins
    for case in CASES:
        print(f"    {case!r}: {digest(*case)!r},", file=sys.stdout, flush=True)
