"""Episodes do not depend on Python's string hashing: the same seeds and actions give the
same verdicts (including upstream's first-failure message) under any PYTHONHASHSEED."""
import os
import subprocess
import sys

SCRIPT = """
import numpy as np, gymnasium as gym, netarena_gym
env = gym.make("NetArena-CapacityPlanning-v0", level=1, interface="discrete")
rng = np.random.default_rng(0)
for ep in range(4):
    obs, info = env.reset(seed=ep)
    done = False
    while not done:
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, r, t, tr, info = env.step(a)
        done = t or tr
    v = info["extra"]["verdict"]
    print(ep, r, v["safe"], v["violations"], v["compat_message"])
"""


def _run(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, check=True, timeout=300).stdout


def test_verdicts_do_not_depend_on_string_hashing():
    a, b = _run("0"), _run("1")
    assert "Found isolated node" in a  # an unsafe episode whose message names a first failure
    assert a == b


CODE_SCRIPT = r'''
import gymnasium as gym, netarena_gym
env = gym.make("NetArena-CapacityPlanning-v0", level=1, interface="code")
code = """
import random
def process_graph(graph):
    print(random.random(), hash("ju1"), list({"a", "b", "c", "d"}))
    raise ValueError("x")
"""
for ep in range(2):
    env.reset(seed=ep)
    print(env.step(code)[0][-300:])
    print(env.step(code)[0][-300:])
env.close()
'''


def test_agent_code_sees_the_same_random_and_hashes_in_every_run():
    """The code's ``random`` (seeded from urandom) and the worker's hash seed (its own per
    process) made the observation of the same seed and code differ from run to run."""
    runs = [subprocess.run([sys.executable, "-c", CODE_SCRIPT],
                           env={**os.environ, "PYTHONHASHSEED": h}, capture_output=True,
                           text=True, check=True, timeout=300).stdout for h in ("0", "1")]
    assert runs[0] == runs[1] and "printed:" in runs[0]
    draws = [ln for ln in runs[0].splitlines() if ln.startswith("0.")]
    assert len(draws) == 4 and len(set(draws)) == 4  # per submission and episode
