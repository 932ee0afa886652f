"""A slot policy for MaskablePPO on the routing catalogue: one shared scorer per action.

The routing catalogue (:mod:`netarena_gym.routing.catalogue`) lays its actions out in
fixed slots, router x (router command | interface x interface command | route slot), and
the discrete observation (:mod:`netarena_gym.routing.features`) has one feature row per
router, per router interface and per route slot. A flat MLP has to learn each
(feature slot, action slot) pair on its own: 248 of them on level-3 networks, each seen
only when a fault lands there. This policy scores every action with one small MLP over
the action's *own* slot: its command type (one-hot), its router's features, its
interface's or route's features (zeros for router commands), the agent's memory bits
``taken``/``last`` for it when present, and a summary of the whole network (the mean of
each feature over routers, interfaces and routes). What is learnt at one slot holds at
every other; nothing is hand-coded about which feature a command repairs. The value
head reads the max-pool of the per-action hidden vectors and the network summary.

It mirrors the per-entity ("pointer") action heads common in RL over combinatorial
action spaces; it leaves out attention between slots (the summary is the only context).
Only the routing task's layout is supported (:func:`slot_layout` raises otherwise).
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces

from netarena_gym.errors import DependencyNotInstalled, InvalidConfig
from netarena_gym.routing.catalogue import IFACE_ACTIONS, ROUTER_ACTIONS

try:
    import torch as th
    from sb3_contrib.common.maskable.policies import MaskableMultiInputActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from torch import nn
except ImportError as e:  # pragma: no cover - the train extra is missing
    raise DependencyNotInstalled(f"the slot policy needs the train extra ({e}); "
                                 "pip install 'netarena-gym[train]'") from None

KINDS = len(ROUTER_ACTIONS) + len(IFACE_ACTIONS) + 1  # router commands, iface commands, route
FEATURE_KEYS = ("router_features", "iface_features", "route_features")


def slot_layout(space: spaces.Dict, n_actions: int) -> dict[str, np.ndarray]:
    """For every catalogue action: its router, interface, route slot and command type
    (the interface commands are ``IFACE_ACTIONS``, plus ``BATCH_ACTION`` on large
    networks, told apart by the catalogue's size; its kind comes before the route's)."""
    if not all(k in space.spaces for k in FEATURE_KEYS):
        raise InvalidConfig(f"the slot policy needs {FEATURE_KEYS} in the observation "
                            f"(routing's discrete interface); got {list(space.spaces)}")
    routers, ifaces = space["iface_features"].shape[:2]
    routes = space["route_features"].shape[1]
    for n_iface in (len(IFACE_ACTIONS), len(IFACE_ACTIONS) + 1):
        per = len(ROUTER_ACTIONS) + n_iface * ifaces + routes
        if routers * per == n_actions:
            break
    else:
        raise InvalidConfig(f"catalogue of {n_actions} actions does not match {routers} "
                            f"routers x {per} slots")
    r, i, s, kind = [], [], [], []
    for ri in range(routers):
        for j in range(len(ROUTER_ACTIONS)):
            r.append(ri), i.append(-1), s.append(-1), kind.append(j)
        for ii in range(ifaces):
            for k in range(n_iface):
                r.append(ri), i.append(ii), s.append(-1), kind.append(len(ROUTER_ACTIONS) + k)
        for si in range(routes):
            r.append(ri), i.append(-1), s.append(si), kind.append(len(ROUTER_ACTIONS)
                                                                  + n_iface)
    return {k: np.asarray(v, dtype=np.int64) for k, v in
            (("router", r), ("iface", i), ("route", s), ("kind", kind))}


class SlotExtractor(BaseFeaturesExtractor):
    """Per-action logits (first ``n`` outputs) and a value embedding (the rest)."""

    def __init__(self, observation_space: spaces.Dict, n_actions: int = 0, hidden: int = 64):
        lay = slot_layout(observation_space, n_actions)
        super().__init__(observation_space, features_dim=n_actions + hidden)
        self.n, self.hidden = n_actions, hidden
        sp = observation_space.spaces
        self.nr, self.ni = sp["router_features"].shape[1], sp["iface_features"].shape[2]
        self.ns = sp["route_features"].shape[2]
        self.memory = [k for k in ("taken", "last") if k in sp]
        self.layout = lay  # what forward's block order reproduces (tests check it)
        glob = self.nr + self.ni + self.ns
        # the first layer over [kind one-hot, router, interface, route, memory, summary],
        # applied per entity and gathered per action (the same map, without the copies)
        # one kind per command type: KINDS, plus BATCH_ACTION's on large networks
        self.kinds = int(lay["kind"].max()) + 1
        self.kind = nn.Embedding(self.kinds, hidden)
        self.proj_router = nn.Linear(self.nr, hidden, bias=False)
        self.proj_iface = nn.Linear(self.ni, hidden, bias=False)
        self.proj_route = nn.Linear(self.ns, hidden, bias=False)
        self.proj_glob = nn.Linear(glob, hidden, bias=False)
        self.proj_memory = nn.Parameter(th.zeros(len(self.memory), hidden))
        self.score = nn.Linear(hidden, 1)
        self.summary = nn.Sequential(nn.Linear(hidden + glob, hidden), nn.ReLU())

    def forward(self, obs: dict) -> th.Tensor:
        rf, itf, rt = obs["router_features"], obs["iface_features"], obs["route_features"]
        present = itf[..., :1]  # the interface exists
        glob = th.cat([rf.mean(1), (itf * present).sum((1, 2)) / present.sum((1, 2)).clamp(min=1),
                       rt.mean((1, 2))], dim=1)
        b, nk = rf.shape[0], len(ROUTER_ACTIONS)
        pr = self.proj_router(rf).unsqueeze(2)  # (B, R, 1, H)
        k = self.kind.weight
        h_router = pr + k[:nk]
        h_iface = (pr.unsqueeze(2) + self.proj_iface(itf).unsqueeze(3) + k[nk:self.kinds - 1])
        h_route = pr + self.proj_route(rt) + k[self.kinds - 1]
        h = th.cat([h_router, h_iface.flatten(2, 3), h_route], dim=2).reshape(b, self.n, -1)
        h = h + self.proj_glob(glob).unsqueeze(1)
        for j, k in enumerate(self.memory):
            h = h + obs[k].float().unsqueeze(-1) * self.proj_memory[j]
        h = th.relu(h)
        logits = self.score(h).squeeze(-1)
        if "action_mask" in obs:
            h = h.masked_fill(obs["action_mask"].unsqueeze(-1) < 0.5, 0.0)
        return th.cat([logits, self.summary(th.cat([h.max(1).values, glob], dim=1))], dim=1)


class Split(nn.Module):
    """The extractor's logits go to the actor as they are; the embedding to the critic."""

    def __init__(self, n: int, hidden: int):
        super().__init__()
        self.n, self.latent_dim_pi, self.latent_dim_vf = n, n, hidden

    def forward(self, x):
        return self.forward_actor(x), self.forward_critic(x)

    def forward_actor(self, x):
        return x[:, :self.n]

    def forward_critic(self, x):
        return x[:, self.n:]

class SlotPolicy(MaskableMultiInputActorCriticPolicy):
    """MaskablePPO's multi-input policy with :class:`SlotExtractor` as its networks."""

    def __init__(self, observation_space, action_space, lr_schedule, hidden: int = 64,
                 **kwargs):
        kwargs.pop("net_arch", None)
        self.slot_hidden = hidden
        kwargs["features_extractor_class"] = SlotExtractor
        kwargs["features_extractor_kwargs"] = {"n_actions": int(action_space.n),
                                               "hidden": hidden}
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = Split(int(self.action_space.n), self.slot_hidden)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()
        self.features_extractor.score.apply(lambda m: self.init_weights(m, gain=0.01))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),
                                              **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data["hidden"] = self.slot_hidden
        return data


__all__ = ["KINDS", "slot_layout", "SlotExtractor", "SlotPolicy"]
