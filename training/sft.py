"""Thin wrapper kept for old command lines: ``python training/sft.py ARGS`` is
``netarena-gym train sft ARGS`` (:mod:`netarena_gym.train.cli.sft`; docs/training.md)."""
from netarena_gym.train.cli.sft import main

if __name__ == "__main__":
    main()
