"""``netarena-gym train ppo|grpo|sft|cross-level``: help with defaults, dispatch, wrappers."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from netarena_gym.cli import build_parser, main
from netarena_gym.train.cli import TRAINERS, trainer_module

from .conftest import requires_sb3


@pytest.mark.parametrize("name", sorted(TRAINERS))
def test_help_shows_every_options_default(name, capsys):
    assert main(["train", name, "--help"]) == 0  # main returns the exit status
    out = capsys.readouterr().out
    assert out.startswith(f"usage: netarena-gym train {name}")
    opts = [a for a in trainer_module(name).build_parser()._actions
            if a.option_strings and a.dest != "help"]
    assert out.count("(default:") >= len(opts)


def test_the_cli_parses_what_the_trainer_parses():
    argv = ["--level", "1:0.7,2:0.3", "--timesteps", "512", "--no-history"]
    cli = vars(build_parser().parse_args(["train", "ppo", *argv]))
    own = vars(trainer_module("ppo").build_parser().parse_args(argv))
    assert {k: cli[k] for k in own} == own and cli["trainer"] == "ppo"


def test_unknown_trainer_is_an_argparse_error(capsys):
    assert main(["train", "dqn"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'dqn'" in err and len(err.strip().splitlines()) == 1


def test_training_scripts_are_thin_wrappers():
    out = subprocess.run([sys.executable, "training/sft.py", "--help"], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert out.startswith("usage: netarena-gym train sft")


@requires_sb3
def test_train_ppo_through_the_cli_writes_its_evaluation(tmp_path):
    out = tmp_path / "ppo"
    rc = main(["train", "ppo", "--timesteps", "256", "--n-envs", "2", "--eval-every", "256",
               "--eval-episodes", "1", "--final-episodes", "3", "--out", str(out), "--quiet"])
    assert rc == 0
    ev = json.loads((out / "eval.json").read_text())
    assert ev["1"]["episodes"] == 3 and len(ev["1"]["correctness_ci95"]) == 2


def test_tracking_options_find_the_last_checkpoint(tmp_path, capsys):
    from netarena_gym.train.cli.common import TrainParser, add_tracking_args, tracking
    p = add_tracking_args(TrainParser(prog="t"))
    assert vars(p.parse_args([])) == {"report_to": "none", "resume": False}
    for n in (5, 12, 100):
        (tmp_path / f"checkpoint-{n}").mkdir()
    (tmp_path / "checkpoint-999").write_text("a file, not a checkpoint")
    t = tracking(p.parse_args(["--resume"]), tmp_path)
    assert t.resume_from == tmp_path / "checkpoint-100"  # numeric, not lexicographic order
    assert t.train_kwargs() == {"resume_from_checkpoint": str(tmp_path / "checkpoint-100")}
    assert tracking(p.parse_args([]), tmp_path).train_kwargs() == {}
    fresh = tracking(p.parse_args(["--resume"]), tmp_path / "empty")
    assert fresh.resume_from is None and "starting from scratch" in capsys.readouterr().err
    assert tracking(p.parse_args(["--report-to", "none"]), tmp_path).trainer_overrides() == {
        "report_to": "none"}


def test_report_to_a_missing_tracker_says_how_to_install_it(tmp_path, monkeypatch):
    import importlib.util

    from netarena_gym.errors import DependencyNotInstalled
    from netarena_gym.train.cli.common import TrainParser, add_tracking_args, tracking
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "wandb" else real(name, *a))
    args = add_tracking_args(TrainParser(prog="t")).parse_args(["--report-to", "wandb"])
    with pytest.raises(DependencyNotInstalled, match="pip install wandb"):
        tracking(args, tmp_path)


@requires_sb3
def test_ppo_trains_on_the_batched_vec_env(tmp_path, capsys):
    """``--vec batched --workers 2``: trains, saves and evaluates as with DummyVecEnv (the
    config records it); ``--workers`` with another ``--vec`` is a usage error."""
    from netarena_gym.train.cli import ppo
    out = tmp_path / "run"
    res = ppo.main(["--level", "1", "--timesteps", "512", "--n-envs", "4", "--vec", "batched",
                    "--workers", "2", "--eval-every", "512", "--eval-episodes", "2",
                    "--final-episodes", "2", "--out", str(out), "--quiet"])
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["vec"] == "batched" and cfg["workers"] == 2 and cfg["timesteps_done"] >= 512
    assert json.loads((out / "eval.json").read_text())["1"]["episodes"] == 2 and res
    with pytest.raises(SystemExit) as e:
        ppo.main(["--workers", "2", "--out", str(tmp_path / "x")])
    assert e.value.code == 2
    assert "--workers is for --vec batched" in capsys.readouterr().err


@pytest.mark.parametrize("args, says", [
    (["--topology-of", "9"], "argument --topology-of: a routing level"),
    (["--env-kwargs", '{"reward": 1}', "--progress-shaping", "0.5"], "must be an object"),
    (["--env-kwargs", "[1]"], "argument --env-kwargs: a JSON object"),
    (["--env-kwargs", "nojson"], "argument --env-kwargs: not JSON"),
    (["--eval-every", "0"], "argument --eval-every: must be >= 1"),
    (["--n-envs", "0"], "argument --n-envs: must be >= 1"),
    (["--timesteps", "-5"], "argument --timesteps: must be >= 1"),
])
def test_bad_ppo_options_are_one_line_and_write_nothing(args, says, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["train", "ppo", "--out", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert not out.exists()
