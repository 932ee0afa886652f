"""EvalSpec.identity: what a resumed run must share with the run in its directory."""
from netarena_gym.eval.spec import EvalSpec
from netarena_gym.eval.store import RunStore


def test_identity_reads_env_options_as_run_json_holds_them_and_maps_renamed_ones():
    new = EvalSpec("NetArena-K8sPolicy-v0", env_options={"probe_set": "x", "sizes": (1, 2)})
    recorded = EvalSpec("NetArena-K8sPolicy-v0", env_options={"probes": "x", "sizes": [1, 2]})
    assert new.identity() == recorded.identity()
    other = EvalSpec("NetArena-K8sPolicy-v0", env_options={"probe_set": "y", "sizes": (1, 2)})
    assert other.identity() != recorded.identity()


def test_a_run_with_a_tuple_env_option_resumes_in_its_directory(tmp_path):
    spec = EvalSpec("NetArena-Routing-v0", episodes=1, env_options={"x": (1, 2)})
    store = RunStore(tmp_path / "r")
    store.open(spec)
    store.close()
    (tmp_path / "r" / "episodes.jsonl").write_text("")
    store = RunStore(tmp_path / "r")
    assert store.open(spec) == {}  # refused as "another configuration" before
    store.close()
