"""Compatibility with upstream NetArena beyond the envs' ``level="compat"``: replaying its
recorded runs (:mod:`netarena_gym.compat.replay`, the ``compat-replay`` command)."""
