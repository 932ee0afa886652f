"""``netarena-gym eval --ray-address`` on a real two-node Ray cluster (``.ci/ray-cluster.sh
start``): the records name the node each episode ran on, and both nodes ran some; episodes
that need root (Mininet) ask Ray for the ``netarena_root`` resource, which only the head
node offers."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from netarena_gym.eval.executors import ROOT_RESOURCE, backend_resources
from netarena_gym.eval.spec import EvalSpec

ADDRESS = os.environ.get("NETARENA_RAY_ADDRESS")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
needs_cluster = pytest.mark.skipif(
    not ADDRESS, reason="no Ray cluster: run .ci/ray-cluster.sh start and export "
                        "NETARENA_RAY_ADDRESS (and RAY_AUTH_MODE/RAY_AUTH_TOKEN_PATH) it prints")


def eval_on_cluster(out, *extra):
    cmd = [sys.executable, "-m", "netarena_gym.cli", "eval", "--env", "NetArena-Routing-v0",
           "--agent", "expert", "--level", "1", "--episodes", "12", "--seed", "3",
           "--ray-address", ADDRESS, "--out", str(out), "--quiet", *extra]
    env = {**os.environ, "PYTHONPATH": ROOT}
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    with open(out / "episodes.jsonl") as f:
        return [json.loads(line) for line in f]


@pytest.mark.ray_cluster
@needs_cluster
def test_eval_runs_episodes_on_both_nodes(tmp_path):
    import ray

    ray.init(address=ADDRESS, log_to_driver=False)
    try:
        nodes = {n["NodeID"]: n["Resources"] for n in ray.nodes() if n["Alive"]}
    finally:
        ray.shutdown()
    assert len(nodes) >= 2
    root_nodes = {nid for nid, res in nodes.items() if res.get(ROOT_RESOURCE)}
    assert len(root_nodes) == 1

    recs = eval_on_cluster(tmp_path / "run")  # one actor per cluster CPU
    assert len(recs) == 12 and all(r["correct"] for r in recs)
    ran_on = {r["node_id"] for r in recs}
    assert ran_on <= set(nodes) and len(ran_on) == 2, ran_on


def test_mininet_episodes_ask_for_the_root_resource():
    spec = EvalSpec(env="NetArena-Routing-v0", agent="expert", backend="mininet")
    assert backend_resources(spec) == {ROOT_RESOURCE: 1.0}
    assert backend_resources(EvalSpec(env="NetArena-Routing-v0", agent="expert")) == {}
