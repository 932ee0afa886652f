"""The core's step loop gives the same trajectories it gave before it was made faster.

For every task, interface and ``info`` mode, seeded episodes with seeded random masked
actions (every fifth action invalid: an index outside the catalogue or a masked one, text
that is not an action, or a command outside the allow-list) are hashed: every observation,
reward, ``terminated``, ``truncated`` and ``info`` (key order, value types and dtypes
included). The hashes in
``PINNED`` were recorded from main before the core's per-step work was cut (issue 14);
a change to the core that alters any observation, reward or info breaks them.

A task change that alters its trajectories on purpose re-pins them with
``PYTHONPATH=. python tests/core/test_env_trajectories.py`` (it prints ``PINNED``).
"""
from __future__ import annotations

import hashlib

import gymnasium as gym
import numpy as np
import pytest

import netarena_gym  # noqa: F401

EPISODES = 8
CASES = {  # name -> (env id, make kwargs)
    "routing-discrete": ("NetArena-Routing-v0", {"level": 1, "interface": "discrete"}),
    "routing-text": ("NetArena-Routing-v0", {"level": 1, "interface": "text", "history": 2}),
    "k8s-discrete": ("NetArena-K8sPolicy-v0", {"level": 1, "interface": "discrete"}),
    "k8s-text": ("NetArena-K8sPolicy-v0", {"level": 1, "interface": "text"}),
    "capacity-discrete": ("NetArena-CapacityPlanning-v0", {"level": 1, "interface": "discrete"}),
    "capacity-text": ("NetArena-CapacityPlanning-v0", {"level": 1, "interface": "text"}),
    "routing-shaped-full": ("NetArena-Routing-v0", {
        "level": 2, "interface": "discrete", "observability": "full",
        "reward": {"progress": 0.5, "normalize_safety": False}}),
    "k8s-shaped-full": ("NetArena-K8sPolicy-v0", {
        "level": 2, "interface": "text", "observability": "full", "history": 3,
        "reward": {"progress": 0.5, "failed": -0.1}}),
}
REFUSED = {"routing": {"machine": "r0", "command": "reboot"},  # outside the allow-lists
           "k8s": {"command": "kubectl delete namespace default"}}
PINNED = {
    "capacity-discrete/full": "1e452269b95fdcf7ddda66eae8bb03bd5633e2f6c311b30ed5254c8f0a1c6b3c",
    "capacity-discrete/lean": "cdfd3f080896246814e5f94bf3fbef0d87bb7082ec930a96d35997b3ff3fdf0f",
    "capacity-text/full": "aa8accdaa01867510126c6f965e67412c31b00337a6fd0aef7e83662f388dec2",
    "capacity-text/lean": "18f1d777a451ad71db7e79706d1ee831f21ffad3c65332e05310bec09c31387c",
    "k8s-discrete/full": "7ce67dc42d735417a37184ee2659caf5bd6a17cacf177ab05dea4d8ca387922e",
    "k8s-discrete/lean": "5086743172491aaa07a0565fd7febc593ea3b626bd27b4a75198afbc1d57be4b",
    "k8s-shaped-full/full": "c6e7362c455ecd9042244a8abb0098f0e2a33c268e67ec07a9195b78a0a83350",
    "k8s-shaped-full/lean": "97cac7c8bb6ebcdaef6b8abf370d48e44f7823d549142f29b9fce6408240a4fe",
    "k8s-text/full": "593a0bbc55f06ca34eb54c4b85780e744f13199f814fa9bbcbdac4910d4a2de3",
    "k8s-text/lean": "dd1efdc6aab71f5ca207e1690158316616c085051b9bebf5eb24915948fad18c",
    "routing-discrete/full": "95acd752b7f979cf481d81a0ec120870c4da8e8fcb306dddf7690ea4fe6b05e9",
    "routing-discrete/lean": "72397141cd8a3ceade0768355e2dc910f4d82a8cb3daad899290203aaa23777f",
    "routing-shaped-full/full": "d1ea01b8cd06a3f3795dd400c50aa8be5da4f87d40419629f8919a8d63047d40",
    "routing-shaped-full/lean": "d6fdda222fb044b4fd366d5a5ccc9c5e2ec071d7cbba5d842f13dfbfe8a9daf0",
    "routing-text/full": "67c89f067de486fb79b5e9171b1e00e2b76ce377aefb6783c537d9c936c40ea0",
    "routing-text/lean": "c979a6a093b9a2a9c2dd615c4793deacb8edfce5be78b5c10c5a362d4be46f92",
}


def _feed(h, x) -> None:
    """Hash ``x`` with its type: dicts in their own key order, arrays with dtype and shape."""
    if isinstance(x, dict):
        h.update(b"{")
        for k, v in x.items():
            _feed(h, k)
            _feed(h, v)
        h.update(b"}")
    elif isinstance(x, (list, tuple)):
        h.update(b"[" if isinstance(x, list) else b"(")
        for v in x:
            _feed(h, v)
        h.update(b"]")
    elif isinstance(x, np.ndarray):
        h.update(f"nd{x.dtype.str}{x.shape}".encode())
        h.update(np.ascontiguousarray(x).tobytes())
    else:
        h.update(f"{type(x).__name__}:{x!r};".encode())


def _action(env, info, rng, t: int):
    base = env.unwrapped
    size = base.catalogue.size
    if t % 5 == 4:  # an invalid action
        if base.interface == "discrete":
            masked = np.flatnonzero(info["action_mask"] == 0)
            return int(masked[0]) if t % 10 == 4 and len(masked) else size + 3
        return REFUSED.get(base.task, "not an action {") if t % 10 == 9 else "not an action {"
    valid = np.flatnonzero(info["action_mask"])
    idx = int(valid[rng.integers(len(valid))])
    if base.interface == "discrete":
        return idx
    return dict(base.catalogue.entries[idx].action)


def trajectory_hash(name: str, mode: str) -> str:
    env_id, kw = CASES[name]
    env = gym.make(env_id, info=mode, **kw)
    rng = np.random.default_rng(7)
    h = hashlib.sha256()
    try:
        for ep in range(EPISODES):
            obs, info = env.reset(seed=100 + ep)
            _feed(h, (obs, info))
            done, t = False, 0
            while not done:
                obs, r, term, trunc, info = env.step(_action(env, info, rng, t))
                _feed(h, (obs, r, term, trunc, info))
                done, t = term or trunc, t + 1
    finally:
        env.close()
    return h.hexdigest()


@pytest.mark.parametrize("mode", ["full", "lean"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_trajectories_are_unchanged(name, mode):
    assert trajectory_hash(name, mode) == PINNED[f"{name}/{mode}"]


def test_hash_sees_types_and_dtypes():
    def one(x):
        h = hashlib.sha256()
        _feed(h, x)
        return h.hexdigest()
    assert one({"a": 1}) != one({"a": 1.0}) != one({"a": True})
    assert one(np.zeros(2, np.int8)) != one(np.zeros(2, np.int16))
    assert one({"a": 0.0}) != one({"a": -0.0})


if __name__ == "__main__":
    print("PINNED = {")
    for _name in sorted(CASES):
        for _mode in ("full", "lean"):
            print(f'    "{_name}/{_mode}": "{trajectory_hash(_name, _mode)}",')
    print("}")
