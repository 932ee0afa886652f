"""Reward configuration and per-step component accounting (shared by all tasks).

A step's reward is the sum of the components in ``info["reward_components"]``; every
component is reported at every step (0.0 when it does not apply, never ``-0.0``). With the
default weights each component has a fixed range, so the per-step reward does too:

============  ===============  ==========================================================
component     range (default)  when
============  ===============  ==========================================================
``success``   {0, +1.0}        the step that makes the system fully correct
``safety``    [-1.0, 0]        ``safety`` x the fraction of pairs the step broke
``step``      -0.01            every step
``invalid``   {0, -0.05}       unparseable action, unknown command, usage error
``refused``   {0, -0.2}        a command outside the operator allow-list
``timeout``   {0, -0.05}       a command (or the step) killed at its time limit
``failed``    {0}              a well-formed command the tool rejected (weight 0.0)
``progress``  [-p, +p]         optional shaping ``p`` x change in the fraction working
============  ===============  ==========================================================

``invalid``, ``refused``, ``timeout`` and ``failed`` exclude each other (a step has one
outcome kind), so with the defaults a step's reward lies in ``[-1.21, 0.99]``
(:meth:`RewardConfig.step_range`, which every env exposes as ``env.reward_range``). An
episode's return lies in ``[max_steps * lo, 0.99]`` since success is paid once.

The safety fraction is ``newly_broken / pairs``: routing counts ordered host pairs, K8s
its probes; capacity planning, which has no pairs, takes 1.0 when the graded change
breaks any constraint. ``normalize_safety=False`` restores the first release's
unnormalised penalty (``safety`` per broken pair, no lower bound); it is the documented
switch for comparing with old reward curves. Neither setting changes a verdict: the
``correct``/``safe``/``safe_compat`` metrics (and upstream-compatible scores) do not
depend on the reward.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, fields
from functools import cached_property

from netarena_gym.errors import InvalidConfig
from netarena_gym.shell.parser import ERROR, INVALID, OK, REFUSED, TIMEOUT

#: the components every step reports, in this order
COMPONENTS = ("success", "safety", "step", "invalid", "refused", "timeout", "failed",
              "progress")
_EXCLUSIVE = ("invalid", "refused", "timeout", "failed")
#: the outcome kind that pays each exclusive component
_KIND_COMPONENT = {INVALID: "invalid", REFUSED: "refused", TIMEOUT: "timeout", ERROR: "failed"}


def _nz(x: float) -> float:
    """``x`` as a float without the sign of zero."""
    x = float(x)
    return 0.0 if x == 0 else x


@dataclass(frozen=True, kw_only=True)
class RewardConfig:
    """Weights of the reward components (see the module docstring for their ranges).

    * ``success``: paid once, on the step that makes the system fully correct;
    * ``safety``: times the fraction of pairs (probes, constraints) that worked before
      the step and are broken after it (``broken_pair``, its old name, is accepted with a
      DeprecationWarning); with ``normalize_safety=False``, times the number of pairs;
    * ``step``: every step (latency cost);
    * ``invalid``: unparseable action, unknown command or usage error;
    * ``refused``: a command outside the operator allow-list;
    * ``timeout``: a command killed at its time limit;
    * ``failed``: a well-formed command that the tool rejected (e.g. ``File exists``);
    * ``progress``: optional shaping, times the change in the fraction of working pairs.
    """
    success: float = 1.0
    safety: float = -1.0
    step: float = -0.01
    invalid: float = -0.05
    refused: float = -0.2
    timeout: float = -0.05
    failed: float = 0.0
    progress: float = 0.0
    normalize_safety: bool = True

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "normalize_safety":
                if not isinstance(v, bool):
                    raise InvalidConfig(f"reward normalize_safety must be True or False, "
                                        f"got {v!r}")
            elif (isinstance(v, bool) or not isinstance(v, (int, float))
                  or not math.isfinite(float(v) if abs(v) < 1e300 else math.inf)):
                raise InvalidConfig(f"reward weight {f.name!r} must be a finite number, "
                                    f"got {v!r}")

    @classmethod
    def coerce(cls, obj: "RewardConfig | dict | None") -> "RewardConfig":
        if obj is None:
            return cls()
        if isinstance(obj, cls):
            return obj
        if isinstance(obj, dict):
            obj = dict(obj)
            if "broken_pair" in obj:
                warnings.warn("reward weight 'broken_pair' is now 'safety'", DeprecationWarning,
                              stacklevel=3)
                value = obj.pop("broken_pair")
                obj.setdefault("safety", value)
            known = {f.name for f in fields(cls)}
            bad = set(obj) - known
            if bad:
                raise InvalidConfig(f"unknown reward weights {sorted(bad)}; known: {sorted(known)}")
            return cls(**obj)
        raise InvalidConfig(f"reward must be a RewardConfig, a dict of weights or None, got "
                            f"{obj!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    def zero(self) -> dict[str, float]:
        """The components with every value 0.0 (the ``info`` of a reset)."""
        return {k: 0.0 for k in COMPONENTS}

    def safety_penalty(self, newly_broken: int, pairs: int | None) -> float:
        """The ``safety`` component of a step that broke ``newly_broken`` of ``pairs``."""
        if not newly_broken:
            return 0.0
        if not self.normalize_safety:
            return _nz(self.safety * newly_broken)
        frac = min(1.0, newly_broken / max(1, int(pairs or 1)))
        return _nz(self.safety * frac)

    @cached_property
    def _weights(self) -> dict[str, float]:
        """The weights as floats without the sign of zero (made once per config)."""
        return {k: _nz(getattr(self, k)) for k in COMPONENTS}

    @cached_property
    def _by_kind(self) -> dict[str, dict[str, float]]:
        """The components of a step of each outcome kind that neither solved nor broke
        anything, without shaping (made once per config; a step copies one)."""
        w = self._weights
        out = {}
        for kind in (OK, *_KIND_COMPONENT):
            comps = dict.fromkeys(COMPONENTS, 0.0)
            comps["step"] = w["step"]
            if kind in _KIND_COMPONENT:
                comps[_KIND_COMPONENT[kind]] = w[_KIND_COMPONENT[kind]]
            out[kind] = comps
        return out

    def components(self, *, kind: str, newly_broken: int, solved_now: bool,
                   progress_delta: float, pairs: int | None = None) -> dict[str, float]:
        """The components of one step (a new dict, in :data:`COMPONENTS` order). ``pairs``
        is the number of pairs the safety fraction is taken over (``None``: 1, i.e. any
        break costs the full weight when normalised)."""
        comps = dict(self._by_kind.get(kind) or self._by_kind[OK])
        if solved_now:
            comps["success"] = self._weights["success"]
        if newly_broken:
            comps["safety"] = self.safety_penalty(newly_broken, pairs)
        if self.progress:  # 0 x a finite fraction is 0.0 (without the sign of zero)
            comps["progress"] = _nz(self.progress * progress_delta)
        return comps

    def component_ranges(self) -> dict[str, tuple[float, float]]:
        """``(low, high)`` of each component of one step (safety unbounded below when
        ``normalize_safety`` is off)."""
        w = asdict(self)
        out = {k: (_nz(min(0.0, w[k])), _nz(max(0.0, w[k]))) for k in COMPONENTS}
        out["step"] = (_nz(self.step), _nz(self.step))
        out["progress"] = (_nz(-abs(self.progress)), _nz(abs(self.progress)))
        if not self.normalize_safety and self.safety:
            out["safety"] = ((-float("inf"), 0.0) if self.safety < 0 else (0.0, float("inf")))
        return out

    def step_range(self) -> tuple[float, float]:
        """``(low, high)`` of one step's reward: the exclusive outcome kinds (invalid,
        refused, timeout, failed) contribute their extreme once, the others add up."""
        r = self.component_ranges()
        lo = sum(r[k][0] for k in COMPONENTS if k not in _EXCLUSIVE)
        hi_ok = sum(r[k][1] for k in COMPONENTS if k not in _EXCLUSIVE)
        lo += min(r[k][0] for k in _EXCLUSIVE)
        hi = hi_ok + max(r[k][1] for k in _EXCLUSIVE)
        return round(lo, 12) + 0.0, round(hi, 12) + 0.0


__all__ = ["COMPONENTS", "RewardConfig", "OK"]
