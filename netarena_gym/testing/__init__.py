"""The env test kit every NetArena env must pass, shipped like PettingZoo's ``api_test``.

Run it on a new task (or a new level, interface or backend of an existing one) before
anything else::

    from netarena_gym.testing import check_netarena_env
    check_netarena_env("NetArena-Routing-v0", level=2, interface="discrete")

It raises :class:`KitFailure` on the first failure, with a message naming the check and the
step. The checks, in order (see :mod:`netarena_gym.testing.checks`):

1. Gymnasium's :func:`~gymnasium.utils.env_checker.check_env`;
2. determinism: the same seed gives the same observation and trajectory, in one instance and
   across two; ``reset()`` without a seed after ``reset(seed=s)`` (what autoreset calls)
   gives the same episodes on two instances and does not replay one episode for ever
   (:func:`~netarena_gym.testing.checks.check_unseeded_resets`); and the env never seeds,
   draws from or changes the global random state (``np.random``, ``random``): all its
   randomness comes from ``env.np_random``;
3. replay: ``reset(options={"scenario": info["scenario"]})`` gives the same episode: the same
   first observation and info, then, under the same actions, the same observations, rewards,
   flags and info at every step to the end of the episode;
4. the ``info`` schema (:mod:`netarena_gym.core.info`): the same keys with the same value
   types at reset and at every step, ``info["cost"]`` (Safety-Gymnasium's cost: what
   the step newly broke) a non-negative count, 0 at reset (:func:`check_cost`), and the
   reward the sum of ``info["reward_components"]`` (within 1e-9) inside ``reward_range``
   (:func:`~netarena_gym.testing.checks.check_reward`);
5. ``action_space.contains`` for every action the catalogue and the expert produce;
6. observations inside ``observation_space`` over random and hostile steps (out-of-range
   indices, ``inf``, deep nesting, huge strings, bytes, wrong types, shell tricks), none of
   which may raise; every hostile action comes back as ``command_kind`` ``"invalid"`` or
   ``"refused"`` with a negative reward component of that kind and a negative reward, and
   no step touches the global random state;
7. vector envs with autoreset: ``"sync"``, ``"async"`` and ``"default"`` (what
   ``gym.make_vec(env_id)`` gives: the registered vector entry point, the package's
   :class:`~netarena_gym.vector.NetArenaBatchedVectorEnv`); async and default step beside
   sync on the same seed and actions and must return the same observations, rewards and
   flags (async on a text interface is built with ``shared_memory=False``: Gymnasium's
   shared ``Text`` buffer would give its padding, not the env's text);
8. the same behaviour after the episode ends in every task: ``step`` raises
   :class:`~netarena_gym.errors.ResetNeeded` until ``reset``.
"""
from netarena_gym.testing.checks import (
    KitFailure, check_actions_in_space, check_after_end, check_cost, check_determinism,
    check_gymnasium, check_hostile_outcome, check_info_schema, check_netarena_env, check_replay,
    check_reward, check_robust_steps, check_unseeded_resets, check_vector)
from netarena_gym.testing.hostile import hostile_actions

__all__ = ["KitFailure", "check_netarena_env", "check_gymnasium", "check_determinism",
           "check_unseeded_resets", "check_replay", "check_info_schema", "check_cost", "check_reward",
           "check_actions_in_space", "check_robust_steps", "check_hostile_outcome", "check_vector",
           "check_after_end", "hostile_actions"]
