from __future__ import annotations

import json

import gymnasium as gym
import pytest

import netarena_gym
from netarena_gym.cli import main

ENV_IDS = sorted(netarena_gym.ENV_IDS)


def first_level(env_id: str):
    env = gym.make(env_id)
    try:
        return env.unwrapped.levels[0]
    finally:
        env.close()


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def read_jsonl(path) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f]


TIMING = ("agent_seconds", "env_seconds", "wall_seconds", "node_id")  # node_id: placement


def comparable(rec: dict) -> dict:
    """A record without its timings and placement (the part that must not depend on
    workers)."""
    r = {k: v for k, v in rec.items() if k not in TIMING}
    r["metrics"] = {k: v for k, v in rec["metrics"].items() if k not in TIMING}
    r["trajectory"] = [{k: v for k, v in t.items() if k not in TIMING}
                       for t in rec["trajectory"]]
    return r


@pytest.fixture(params=ENV_IDS)
def env_id(request):
    return request.param
