"""Thin wrapper kept for old command lines: ``python training/cross_level.py ARGS`` is
``netarena-gym train cross-level ARGS`` (:mod:`netarena_gym.train.cli.cross_level`; docs/training.md)."""
from netarena_gym.train.cli.cross_level import main

if __name__ == "__main__":
    main()
