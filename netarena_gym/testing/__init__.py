"""The env test kit every NetArena env must pass, shipped like PettingZoo's ``api_test``.

Run it on a new task (or a new level, interface or backend of an existing one) before
anything else::

    from netarena_gym.testing import check_netarena_env
    check_netarena_env("NetArena-Routing-v0", level=2, interface="discrete")

It raises :class:`KitFailure` on the first failure, with a message naming the check and the
step. The checks, in order (see :mod:`netarena_gym.testing.checks`):

1. Gymnasium's :func:`~gymnasium.utils.env_checker.check_env`;
2. determinism: the same seed gives the same observation and trajectory, in one instance and
   across two;
3. replay: ``reset(options={"scenario": info["scenario"]})`` gives the same episode;
4. the ``info`` schema (:mod:`netarena_gym.core.info`): the same keys with the same value
   types at reset and at every step, and ``info["cost"]`` (Safety-Gymnasium's cost: what
   the step newly broke) a non-negative count, 0 at reset (:func:`check_cost`);
5. ``action_space.contains`` for every action the catalogue and the expert produce;
6. observations inside ``observation_space`` over random and hostile steps (out-of-range
   indices, ``inf``, deep nesting, huge strings, bytes, wrong types, shell tricks), none of
   which may raise;
7. sync and async vector envs with autoreset;
8. the same behaviour after the episode ends in every task: ``step`` raises
   :class:`~netarena_gym.errors.ResetNeeded` until ``reset``.
"""
from netarena_gym.testing.checks import (
    KitFailure, check_actions_in_space, check_after_end, check_cost, check_determinism,
    check_gymnasium, check_info_schema, check_netarena_env, check_replay, check_robust_steps, check_vector)
from netarena_gym.testing.hostile import hostile_actions

__all__ = ["KitFailure", "check_netarena_env", "check_gymnasium", "check_determinism",
           "check_replay", "check_info_schema", "check_cost", "check_actions_in_space", "check_robust_steps",
           "check_vector", "check_after_end", "hostile_actions"]
