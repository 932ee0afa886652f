"""netarena_gym: Gymnasium environments for network-operations agents.

``import netarena_gym`` registers the environments with Gymnasium::

    import gymnasium as gym, netarena_gym
    env = gym.make("NetArena-Routing-v0", level=2)
"""
from gymnasium.envs.registration import register, registry

__version__ = "0.1.0"

ENV_IDS = {
    "NetArena-Routing-v0": "netarena_gym.routing.env:RoutingEnv",
    "NetArena-CapacityPlanning-v0": "netarena_gym.capacity_planning.env:CapacityPlanningEnv",
    "NetArena-K8sPolicy-v0": "netarena_gym.k8s.env:K8sPolicyEnv",
}

for _id, _entry in ENV_IDS.items():
    if _id not in registry:
        register(id=_id, entry_point=_entry)

__all__ = ["ENV_IDS", "__version__"]
