"""The ``netarena-gym train`` subcommands, one module each: ``ppo`` (stable-baselines3 PPO /
MaskablePPO on the discrete interface), ``grpo`` (TRL GRPO with ``environment_factory``),
``sft`` (TRL SFT on expert demonstrations) and ``cross-level`` (train on one level mix,
evaluate on every level). Each module has ``build_parser()``, ``run(args)`` and
``main(argv)``; importing them loads no training library. See docs/training.md."""
from __future__ import annotations

import importlib

#: subcommand -> module under netarena_gym.train.cli
TRAINERS = {"ppo": "ppo", "grpo": "grpo", "sft": "sft", "cross-level": "cross_level"}


def trainer_module(name: str):
    return importlib.import_module(f"netarena_gym.train.cli.{TRAINERS[name]}")
