"""The configuration of ``NetArena-K8sPolicy-v0`` (see :class:`~netarena_gym.k8s.env.K8sPolicyEnv`)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from netarena_gym.core.config import EnvConfig
from netarena_gym.errors import InvalidConfig
from netarena_gym.k8s.commands.allowlist import DEFAULT_VERBS


#: an RFC 1123 label, what Kubernetes takes as a namespace's name
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


@dataclass(frozen=True, kw_only=True)
class K8sPolicyConfig(EnvConfig):
    probe_set: str | None = None
    probe_mode: str = "policy"
    namespace: str | None = None
    fault_types: tuple[str, ...] | None = None
    allowed_verbs: object = DEFAULT_VERBS
    # the connectivity report before the first step; None: shown, except in compat
    # (upstream's agent starts blind, with <NO PREVIOUS OUTPUT>)
    initial_report: bool | None = None
    end_port: bool = True
    kubeconfig: str | None = None
    agent_user: object = "nobody"
    app: str = "boutique"

    name_lists: ClassVar[tuple[str, ...]] = ("fault_types", "allowed_verbs")
    flags: ClassVar[tuple[str, ...]] = ("end_port",)
    optional_flags: ClassVar[tuple[str, ...]] = ("initial_report",)

    def __post_init__(self):
        super().__post_init__()
        bad = sorted(set(self.allowed_verbs) - DEFAULT_VERBS)
        if bad or not self.allowed_verbs:
            raise InvalidConfig(f"allowed_verbs must be a non-empty subset of "
                                f"{sorted(DEFAULT_VERBS)} (the verbs the env implements and its "
                                f"RBAC Role grants), got {sorted(self.allowed_verbs)}")
        for name in ("probe_set", "kubeconfig"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                raise InvalidConfig(f"{name} must be a string or None, got {v!r}")
        if self.namespace is not None and not (isinstance(self.namespace, str)
                                               and DNS_LABEL.fullmatch(self.namespace)):
            raise InvalidConfig(f"namespace must be a Kubernetes name (lower-case letters, "
                                f"digits and '-', at most 63), got {self.namespace!r}")
