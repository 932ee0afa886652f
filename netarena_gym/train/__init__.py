"""Training, reached as ``netarena-gym train ppo|grpo|sft|cross-level`` (see
docs/training.md; ``training/*.py`` are thin wrappers kept for old command lines).

* :mod:`~netarena_gym.train.cli`: the subcommands (``build_parser``, ``run``, ``main``);

* :mod:`~netarena_gym.train.tools`: the envs as TRL ``environment_factory`` classes
  (one tool per atomic command; the env owns the reward);
* :mod:`~netarena_gym.train.data`: seeded scenario rows, expert demonstrations as
  tool-calling chat JSONL, conversion of episode records;
* :mod:`~netarena_gym.train.grpo`, :mod:`~netarena_gym.train.sft`: trainer construction
  and the CPU / single-GPU presets;
* the trained LLMs are evaluated as :class:`~netarena_gym.agents.hf.HFToolAgent` through
  :func:`~netarena_gym.agents.episode.play_episode` and
  :func:`~netarena_gym.agents.summary.summarize`, as ``netarena-gym eval`` does;
* :mod:`~netarena_gym.train.ppo`: stable-baselines3 PPO / MaskablePPO, learning curves,
  policy agents and the ``netarena-gym eval`` protocol;
* :mod:`~netarena_gym.train.ppo_slots`: the slot policy (one shared scorer per catalogue
  slot, ``--policy slots``), :mod:`~netarena_gym.train.curriculum` (level mixes, progress
  and per-fault shaping) and :mod:`~netarena_gym.train.lagrangian` (safety as a cost);
* :mod:`~netarena_gym.train.tiny`: a tiny Qwen3 built locally (tests, smoke runs);
* :mod:`~netarena_gym.train.common`: shared command-line pieces.

Only :mod:`tools` and :mod:`data` import without the ``train`` extra; the rest need
torch and the libraries of docs/training.md#install, imported when used.
"""
