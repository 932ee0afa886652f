"""Thin wrapper kept for old command lines: ``python training/ppo.py ARGS`` is
``netarena-gym train ppo ARGS`` (:mod:`netarena_gym.train.cli.ppo`; docs/training.md)."""
from netarena_gym.train.cli.ppo import main

if __name__ == "__main__":
    main()
