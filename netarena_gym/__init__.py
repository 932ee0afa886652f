"""netarena_gym: Gymnasium environments for network-operations agents.

``import netarena_gym`` registers the environments with Gymnasium::

    import gymnasium as gym, netarena_gym
    env = gym.make("NetArena-Routing-v0", level=2)

Each id also gets a ``vector_entry_point`` (:data:`VECTOR_ENTRY_POINTS`,
:mod:`netarena_gym.vector`), so ``gym.make_vec(id, num_envs=8)``, whose default mode then
is ``"vector_entry_point"``, gives the batched ``NetArenaBatchedVectorEnv`` (several envs
per worker process, ``info="full"`` unless told); ``vectorization_mode="sync"`` or
``"async"`` give Gymnasium's own vector envs as before.
"""
from gymnasium.envs.registration import register, registry

__version__ = "0.1.0"

ENV_IDS = {
    "NetArena-Routing-v0": "netarena_gym.routing.env:RoutingEnv",
    "NetArena-CapacityPlanning-v0": "netarena_gym.capacity_planning.env:CapacityPlanningEnv",
    "NetArena-K8sPolicy-v0": "netarena_gym.k8s.env:K8sPolicyEnv",
}

#: env id -> ``gym.make_vec``'s vector entry point (imported only when used)
VECTOR_ENTRY_POINTS = {
    "NetArena-Routing-v0": "netarena_gym.vector:routing_vec",
    "NetArena-CapacityPlanning-v0": "netarena_gym.vector:capacity_planning_vec",
    "NetArena-K8sPolicy-v0": "netarena_gym.vector:k8s_policy_vec",
}

for _id, _entry in ENV_IDS.items():
    if _id not in registry:
        register(id=_id, entry_point=_entry, vector_entry_point=VECTOR_ENTRY_POINTS[_id])

__all__ = ["ENV_IDS", "VECTOR_ENTRY_POINTS", "__version__"]
