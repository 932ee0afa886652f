"""``netarena-gym report``, ``generate``, the overlap analysis and Ray local mode."""
from __future__ import annotations

import base64
import json
import sys

import gymnasium as gym
import pytest

from netarena_gym.errors import BackendUnavailable, DependencyNotInstalled
from netarena_gym.eval import EvalSpec, evaluate
from netarena_gym.eval.report import build_report
from netarena_gym.eval.executors import ROOT_RESOURCE, backend_resources, ray_capacity
from netarena_gym.eval.overlap import overlap_curve, sample_sizes
from tests.eval.conftest import comparable, read_jsonl, run_cli


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for agent in ("expert", "random"):
        evaluate(EvalSpec("NetArena-Routing-v0", levels=(1, 2), episodes=30, seed=1,
                          agent=agent), out=str(root / agent), progress=False)
    return root / "expert", root / "random"


def test_report_on_two_runs_writes_figures_and_a_self_contained_page(two_runs, tmp_path,
                                                                      capsys):
    pytest.importorskip("matplotlib", reason="report figures need matplotlib: "
                                             "pip install -e \".[report]\"")
    out = tmp_path / "rep"
    rc, _, _ = run_cli(capsys, "report", *two_runs, "--out", out, "--subsamples", 20)
    assert rc == 0
    names = {p.name for p in out.iterdir()}
    assert {"categories.png", "spider_level_1.png", "spider_level_2.png", "scatter.png",
            "overlap.png", "report.html", "report.json"} <= names
    for png in out.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    page = (out / "report.html").read_text()
    assert "expert (expert)" in page and "random (random)" in page
    imgs = page.split('src="data:image/png;base64,')[1:]
    assert len(imgs) == 5
    assert base64.b64decode(imgs[0].split('"')[0])[:4] == b"\x89PNG"
    assert 'src="http' not in page and "<link" not in page and "<script" not in page
    data = json.loads((out / "report.json").read_text())
    cur = data["overlap"]["NetArena-Routing-v0"]["correct"]
    assert cur["paired"] and cur["n"][-1] == 60 and cur["share"][-1] == 0.0
    assert [r["summary"]["correctness"] for r in data["runs"]][0] == 1.0


def test_report_without_matplotlib_says_so(two_runs, tmp_path, capsys, monkeypatch):
    for mod in ("matplotlib", "matplotlib.pyplot"):  # None in sys.modules: import fails
        monkeypatch.setitem(sys.modules, mod, None)
    with pytest.raises(DependencyNotInstalled, match=r"netarena-gym\[report\]"):
        build_report(two_runs, tmp_path / "z")
    rc, _, err = run_cli(capsys, "report", *two_runs, "--out", tmp_path / "x")
    assert rc == 2 and 'pip install "netarena-gym[report]"' in err and "--no-figures" in err
    rc, _, _ = run_cli(capsys, "report", *two_runs, "--out", tmp_path / "y", "--no-figures",
                       "--label", "E", "--label", "R")
    assert rc == 0
    page = (tmp_path / "y" / "report.html").read_text()
    assert "<td>E</td>" in page and "(no figures)" in page


def test_report_rejects_a_directory_without_records(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    rc, _, err = run_cli(capsys, "report", tmp_path / "empty", "--no-figures",
                         "--out", tmp_path / "o")
    assert rc == 2 and "empty" in err


def test_overlap_shrinks_with_sample_size():
    import numpy as np

    rng = np.random.default_rng(0)
    keys = [f"k{i}" for i in range(5000)]
    runs = {"a": dict(zip(keys, rng.random(5000) < 0.60, strict=True)),
            "b": dict(zip(keys, rng.random(5000) < 0.64, strict=True)),
            "c": dict(zip(keys, rng.random(5000) < 0.60, strict=True))}
    cur = overlap_curve(runs, subsamples=50)
    assert cur["n"] == [50, 100, 200, 500, 1000, 2000, 5000] and cur["pairs"] == 3
    assert cur["share"][0] > 0.9  # at 50 episodes (nearly) every pair overlaps
    assert cur["share"][-1] < cur["share"][0]
    assert 1 / 3 - 1e-9 <= cur["share"][-1] < 1.0  # a and c stay together; b separates
    same = overlap_curve({"x": runs["a"], "y": dict(runs["a"])}, subsamples=5)
    assert all(s == 1.0 for s in same["share"])
    assert sample_sizes(30) == [7, 15, 30] and sample_sizes(120) == [50, 100, 120]


def test_generate_exports_queries_and_demos_and_reloads(tmp_path, capsys):
    datasets = pytest.importorskip("datasets", reason="needs datasets: pip install -e \".[report]\"")
    out = tmp_path / "gen"
    rc, stdout, _ = run_cli(capsys, "generate", "--env", "NetArena-Routing-v0", "--level", "1",
                            "compat", "--episodes", 4, "--seed", 7, "--out", out,
                            "--prompt", "fewshot")
    assert rc == 0 and "demo_steps" in stdout
    queries = read_jsonl(out / "queries.jsonl")
    demos = read_jsonl(out / "demos.jsonl")
    assert len(queries) == 8 and {q["level"] for q in queries} == {1, "compat"}
    ds = datasets.load_from_disk(str(out / "hf"))
    assert ds["queries"].num_rows == 8 and ds["demos"].num_rows == len(demos)
    assert ds["demos"][0]["messages"][0]["role"] == "system"
    assert "Examples of good single steps" in ds["demos"][0]["messages"][0]["content"]
    # a query replays exactly from its scenario record
    q = queries[5]
    env = gym.make("NetArena-Routing-v0", level=q["level"])
    obs, _ = env.reset(options={"scenario": json.loads(ds["queries"][5]["scenario"])})
    assert obs == q["observation"]
    # the demonstrated commands solve it, and the messages end with the expert's reply
    steps = [d for d in demos if d["key"] == q["key"]]
    assert steps[-1]["solved"] and steps[-1]["done"]
    for d in steps:
        assert d["messages"][-1] == {"role": "assistant", "content": d["command"]}
        assert d["messages"][-2]["content"].endswith(d["prompt"].rstrip())
        obs, _, _, _, info = env.step(json.loads(d["command"]))
        assert obs == d["output"]
    assert info["correct"]


def test_generate_jsonl_only(tmp_path, capsys):
    rc, _, _ = run_cli(capsys, "generate", "--env", "NetArena-Routing-v0", "--episodes", 2,
                       "--out", tmp_path, "--no-hf", "--no-demos")
    assert rc == 0
    assert len(read_jsonl(tmp_path / "queries.jsonl")) == 2
    assert not (tmp_path / "demos.jsonl").exists() and not (tmp_path / "hf").exists()


def test_generate_refuses_to_leave_an_earlier_runs_files_beside_its_own(tmp_path, capsys):
    """A level-1 demos.jsonl stayed beside a later level-2 run's queries, and ``bytes``
    counted every file under --out."""
    (tmp_path / "blob.bin").write_bytes(b"x" * 100_000)  # not generate's: never counted
    rc, stdout, _ = run_cli(capsys, "generate", "--env", "NetArena-Routing-v0", "--episodes",
                            1, "--out", tmp_path, "--no-hf", "--format", "chat")
    assert rc == 0
    written = sum((tmp_path / f).stat().st_size for f in ("queries.jsonl", "demos.jsonl"))
    assert f"bytes: {written}\n" in stdout
    before = (tmp_path / "queries.jsonl").read_text()
    rc, _, err = run_cli(capsys, "generate", "--env", "NetArena-Routing-v0", "--level", "2",
                         "--episodes", 1, "--out", tmp_path, "--no-hf", "--no-demos")
    assert rc == 2 and "demos.jsonl from an earlier run" in err
    assert (tmp_path / "queries.jsonl").read_text() == before


def test_emulator_backends_ask_ray_for_root():
    assert backend_resources(EvalSpec("NetArena-Routing-v0", backend="mininet")) == {
        ROOT_RESOURCE: 1.0}
    assert backend_resources(EvalSpec("NetArena-Routing-v0")) == {}


def test_ray_actors_capped_at_what_the_cluster_can_place():
    # more actors than CPUs would leave episodes queued on actors that never start
    sim, mn = EvalSpec("NetArena-Routing-v0"), EvalSpec("NetArena-Routing-v0", backend="mininet")
    two_nodes = {"CPU": 2.0, ROOT_RESOURCE: 1.0, "worker_b": 1.0}
    assert ray_capacity(two_nodes, sim) == 2
    assert ray_capacity(two_nodes, mn) == 1          # one node offers root
    with pytest.raises(BackendUnavailable, match=ROOT_RESOURCE):
        ray_capacity({"CPU": 4.0}, mn)


@pytest.mark.slow
def test_ray_local_mode_gives_the_same_records(tmp_path, capsys):
    pytest.importorskip("ray", reason="Ray is not installed: pip install -e \".[ray]\"")
    args = ("eval", "--env", "NetArena-Routing-v0", "--agent", "random", "--level", "1", "2",
            "--episodes", 4, "--seed", 2, "--quiet", "--format", "json")
    rc, stdout, _ = run_cli(capsys, *args, "--out", tmp_path / "ray", "--ray", "--workers", 2)
    assert rc == 0
    s = json.loads(stdout)
    assert s["executor"] == "ray" and s["episodes"] == 8
    rc, _, _ = run_cli(capsys, *args, "--out", tmp_path / "local")
    ray_recs = {r["key"]: comparable(r) for r in read_jsonl(tmp_path / "ray" / "episodes.jsonl")}
    local = {r["key"]: comparable(r) for r in read_jsonl(tmp_path / "local" / "episodes.jsonl")}
    assert ray_recs == local and len(local) == 8


def test_report_groups_like_the_eval_table(two_runs, tmp_path, capsys):
    rc, out, _ = run_cli(capsys, "report", *two_runs, "--out", tmp_path / "t", "--by", "type",
                         "--no-figures", "--subsamples", 5)
    assert rc == 0 and f"wrote {tmp_path / 't' / 'report.json'}" in out
    data = json.loads((tmp_path / "t" / "report.json").read_text())
    assert data["by"] == "type"
    rows = data["runs"][0]["tables"]["2"]  # level 2: two fault types per episode
    assert sum(b["episodes"] for g, b in rows.items() if g != "(all)") > rows["(all)"]["episodes"]
    page = (tmp_path / "t" / "report.html").read_text()
    assert "<h2>By type</h2>" in page and "L2 remove_ip" in page
