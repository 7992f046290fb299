"""Serving inputs: requests, speculative decoding and service levels, validated."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .errors import EngineInputError
from .specs import ModelSpec, Workload

SPECULATIVE_KINDS = ("none", "mtp", "draft")

# Published multi-token-prediction acceptance per model family (name prefix, lower case).
# DeepSeek-V3 technical report (arXiv:2412.19437, section 5.4.3): "the acceptance rate of the
# second token prediction ranges between 85% and 90%"; we take the low end. One MTP module, so
# one drafted token per step. DeepSeek-R1 shares the V3 architecture and MTP module.
MTP_ACCEPTANCE = (("deepseek-v3", 0.85), ("deepseek-r1", 0.85))
MTP_DRAFT_TOKENS = 1
# A separate draft model: Leviathan et al. 2023 (arXiv:2211.17192) report empirical acceptance
# rates from about 0.5 to about 0.9 depending on the pair and sampling; 0.6 is deliberately low.
DRAFT_ACCEPTANCE = 0.6
DRAFT_TOKENS = 4


@dataclass(frozen=True, slots=True)
class Speculative:
    """Speculative decoding: none, multi-token-prediction heads, or a separate draft model."""

    kind: str = "none"  # none | mtp | draft
    acceptance_rate: float | None = None  # per drafted token; None = the family default
    draft_tokens: int | None = None  # tokens drafted per step; None = 1 for MTP, 4 for a draft
    draft_model: ModelSpec | None = None  # required when kind == "draft"


@dataclass(frozen=True, slots=True)
class ServingWorkload:
    """Requests the build serves: prompt and answer lengths, speculative decoding."""

    input_tokens: int = 2048
    output_tokens: int = 2048
    speculative: Speculative = Speculative()


@dataclass(frozen=True, slots=True)
class ServiceLevel:
    """Latency limits and an optional target load (concurrent users or requests per second)."""

    ttft_s_max: float | None = None
    itl_ms_max: float | None = None
    tokens_per_s_per_user_min: float | None = None
    concurrent_users: int | None = None
    requests_per_s: float | None = None

    @property
    def has_limits(self) -> bool:
        """True when any latency limit is set."""
        limits = (self.ttft_s_max, self.itl_ms_max, self.tokens_per_s_per_user_min)
        return any(v is not None for v in limits)

    @property
    def has_load(self) -> bool:
        """True when a target load is set."""
        return self.concurrent_users is not None or self.requests_per_s is not None

    @property
    def is_set(self) -> bool:
        """True when the caller asked an SLO or sizing question."""
        return self.has_limits or self.has_load


def default_acceptance(kind: str, model_name: str) -> float | None:
    """The published acceptance rate for a speculation kind and model family (None: unknown)."""
    if kind == "draft":
        return DRAFT_ACCEPTANCE
    if kind == "mtp":
        name = model_name.lower().replace(" ", "-")
        for prefix, rate in MTP_ACCEPTANCE:
            if name.startswith(prefix):
                return rate
    return None


def resolved_speculation(spec: Speculative, model: ModelSpec) -> tuple[float, int]:
    """(acceptance rate, drafted tokens per step), validated."""
    if spec.kind not in SPECULATIVE_KINDS:
        raise EngineInputError("speculative.kind", f"must be one of {', '.join(SPECULATIVE_KINDS)}")
    if spec.kind == "none":
        return 0.0, 0
    rate = spec.acceptance_rate
    if rate is None:
        rate = default_acceptance(spec.kind, model.name)
        if rate is None:
            raise EngineInputError(
                "speculative.acceptance_rate",
                f"no published MTP acceptance rate for {model.name}; give one",
            )
    if not 0 <= rate < 1:
        raise EngineInputError("speculative.acceptance_rate", "must be in [0, 1)")
    if spec.kind == "draft" and spec.draft_model is None:
        raise EngineInputError("speculative.draft_model", "required when kind is draft")
    default_k = MTP_DRAFT_TOKENS if spec.kind == "mtp" else DRAFT_TOKENS
    k = spec.draft_tokens if spec.draft_tokens is not None else default_k
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 16:
        raise EngineInputError("speculative.draft_tokens", "must be an integer from 1 to 16")
    return rate, k


def expected_tokens_per_step(acceptance_rate: float, draft_tokens: int) -> float:
    """Tokens a verify step yields per sequence: (1 - a^(k+1)) / (1 - a) (Leviathan et al.)."""
    if draft_tokens == 0:
        return 1.0
    a = acceptance_rate
    return (1.0 - a ** (draft_tokens + 1)) / (1.0 - a)


def validate_serving(serving: ServingWorkload, slo: ServiceLevel, workload: Workload) -> None:
    """Raise EngineInputError naming the first invalid serving or SLO field."""
    if workload.mode != "inference":
        raise EngineInputError("mode", "serving curves are for inference")
    for name in ("input_tokens", "output_tokens"):
        value = getattr(serving, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise EngineInputError(f"serving.{name}", f"must be a positive integer, got {value!r}")
    for name in ("ttft_s_max", "itl_ms_max", "tokens_per_s_per_user_min", "requests_per_s"):
        value = getattr(slo, name)
        if value is not None and not (isinstance(value, int | float) and 0 < value < math.inf):
            raise EngineInputError(f"serving.{name}", "must be a positive finite number")
    users = slo.concurrent_users
    if users is not None and (isinstance(users, bool) or not isinstance(users, int) or users < 1):
        raise EngineInputError("serving.concurrent_users", "must be a positive integer")


def serving_base_workload(workload: Workload, serving: ServingWorkload) -> Workload:
    """The engine workload for serving: each slot holds a whole request (prompt + answer)."""
    return replace(
        workload,
        context_tokens=serving.input_tokens + serving.output_tokens,
        prompt_tokens=serving.input_tokens,
        batch=1,
    )


def concurrency_grid(max_batch: int) -> tuple[int, ...]:
    """1, 2, 3, 4, 6, 8, 12 … (powers of two and 1.5x steps) up to max_batch, which closes it."""
    out: list[int] = []
    power = 1
    while power <= max_batch:
        out.append(power)
        half_step = power * 3 // 2
        if power >= 2 and half_step <= max_batch:
            out.append(half_step)
        power *= 2
    if max_batch >= 1 and out[-1] != max_batch:
        out.append(max_batch)
    return tuple(out)
