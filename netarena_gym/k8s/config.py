"""The configuration of ``NetArena-K8sPolicy-v0`` (see :class:`~netarena_gym.k8s.env.K8sPolicyEnv`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from netarena_gym.core.config import EnvConfig
from netarena_gym.k8s.commands.allowlist import DEFAULT_VERBS


@dataclass(frozen=True, kw_only=True)
class K8sPolicyConfig(EnvConfig):
    probe_set: str | None = None
    probe_mode: str = "policy"
    namespace: str | None = None
    fault_types: tuple[str, ...] | None = None
    allowed_verbs: object = DEFAULT_VERBS
    initial_report: bool = True
    end_port: bool = True
    kubeconfig: str | None = None
    agent_user: object = "nobody"
    app: str = "boutique"

    name_lists: ClassVar[tuple[str, ...]] = ("fault_types",)
