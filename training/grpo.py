"""Thin wrapper kept for old command lines: ``python training/grpo.py ARGS`` is
``netarena-gym train grpo ARGS`` (:mod:`netarena_gym.train.cli.grpo`; docs/training.md)."""
from netarena_gym.train.cli.grpo import main

if __name__ == "__main__":
    main()
