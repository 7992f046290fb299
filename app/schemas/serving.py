"""POST /api/v1/serving: an estimate request plus `serving` (lengths, SLO, load, speculation)."""

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from app.schemas.common import StrictModel
from app.schemas.estimate import EstimateRequest
from app.schemas.estimate_answer import (
    BuildSubjectOut,
    FindingOut,
    ModelSubjectOut,
    PlanOut,
    WorkloadOut,
)
from app.schemas.inline import ModelRef
from app.schemas.listing import MAX_CONTEXT_TOKENS

MAX_CONCURRENT_USERS = 10**9
MAX_REQUESTS_PER_S = 1e9


class SpeculativeIn(StrictModel):
    """Speculative decoding: MTP heads or a draft model, with an acceptance rate."""

    kind: Literal["mtp", "draft", "none"] = "none"
    acceptance_rate: float | None = Field(
        strict=True,
        default=None,
        ge=0,
        lt=1,
        allow_inf_nan=False,
        description="share of drafted tokens the target accepts; null = the published figure "
        "for the model family (docs/engine.md)",
    )
    draft_tokens: int | None = Field(
        strict=True, default=None, ge=1, le=16,
        description="tokens drafted per step; null = 1 for MTP, 4 for a draft model",
    )
    draft_model: ModelRef | None = Field(
        default=None, description="the draft model (slug or inline); required with kind draft"
    )

    @model_validator(mode="after")
    def _draft_needs_model(self) -> "SpeculativeIn":
        if self.kind == "draft" and self.draft_model is None:
            raise ValueError("draft_model is required when kind is draft")
        return self


class ServingIn(StrictModel):
    """Request lengths, latency limits and target load; every field optional."""

    input_tokens: int | None = Field(
        strict=True, default=None, ge=1, le=MAX_CONTEXT_TOKENS,
        description="prompt tokens per request; null = the workload's prompt_tokens",
    )
    output_tokens: int | None = Field(
        strict=True, default=None, ge=1, le=MAX_CONTEXT_TOKENS,
        description="answer tokens per request; null = context_tokens - input_tokens "
        "(1024 when that is not positive)",
    )
    ttft_s_max: float | None = Field(
        strict=True, default=None, gt=0, le=86_400, allow_inf_nan=False,
        description="limit on time to first token, seconds",
    )
    itl_ms_max: float | None = Field(
        strict=True, default=None, gt=0, le=3_600_000, allow_inf_nan=False,
        description="limit on inter-token latency, milliseconds",
    )
    tokens_per_s_per_user_min: float | None = Field(
        strict=True, default=None, gt=0, le=1e6, allow_inf_nan=False,
        description="minimum generated tokens/s each user sees",
    )
    concurrent_users: int | None = Field(
        strict=True, default=None, ge=1, le=MAX_CONCURRENT_USERS,
        description="target load: requests in flight at once (sizing)",
    )
    requests_per_s: float | None = Field(
        strict=True, default=None, gt=0, le=MAX_REQUESTS_PER_S, allow_inf_nan=False,
        description="target load: Poisson arrivals per second (sizing, queueing)",
    )
    speculative: SpeculativeIn = Field(default_factory=SpeculativeIn)


class ServingRequest(EstimateRequest):
    """An estimate request (build, model, workload, costs) and the serving question."""

    serving: ServingIn = Field(default_factory=ServingIn)

    model_config = {
        "extra": "forbid",
        "json_schema_extra": {
            "examples": [
                {
                    "build": "dgx-h200",
                    "model": "deepseek-v3",
                    "workload": {"precision": "fp8"},
                    "serving": {
                        "input_tokens": 1024,
                        "output_tokens": 1024,
                        "ttft_s_max": 1,
                        "tokens_per_s_per_user_min": 30,
                        "concurrent_users": 2000,
                        "speculative": {"kind": "mtp"},
                    },
                }
            ]
        },
    }


# ---- answer --------------------------------------------------------------------------------


class ServingPointOut(BaseModel):
    """One concurrency on the curve; every figure is an estimate."""

    concurrency: int = Field(description="requests in flight on the whole build")
    tokens_per_s_per_user: float = Field(description="generated tokens/s each request sees")
    tokens_per_s_total: float = Field(description="generated tokens/s over the whole build")
    tokens_per_s_per_accelerator: float = Field(
        description="tokens_per_s_total / every accelerator of the build"
    )
    ttft_s: float = Field(description="time to first token, waiting for a slot included")
    itl_ms: float = Field(description="inter-token latency")
    usd_per_million_input_tokens: float | None
    usd_per_million_output_tokens: float | None
    requests_per_s: float
    input_tokens_per_s: float
    prefill_share: float = Field(description="share of GPU time spent prefilling prompts")
    queue_wait_s: float = Field(description="part of ttft_s spent waiting for a slot")
    tokens_per_step: float = Field(description="tokens a request gains per step (speculation)")
    bottleneck: str


class AtSloOut(ServingPointOut):
    """The best operating point under the limits and the copies the target load needs."""

    copies_needed: int | None = Field(description="copies of the build; null without a load")
    accelerators_needed: int | None
    utilization: float | None = Field(
        description="offered requests/s over the copies' capacity (requests_per_s load only)"
    )
    usd_per_hour_total: float | None = Field(description="$/hour of all copies")
    summary: str = Field(description="the operating point in words")


class ServingResolvedOut(BaseModel):
    """The serving inputs used (defaults filled in)."""

    input_tokens: int
    output_tokens: int
    ttft_s_max: float | None
    itl_ms_max: float | None
    tokens_per_s_per_user_min: float | None
    concurrent_users: int | None
    requests_per_s: float | None
    speculative_kind: str
    acceptance_rate: float | None
    draft_tokens: int | None
    draft_model: str | None


class ServingOut(BaseModel):
    """Throughput against interactivity for one build and model, and the SLO operating point."""

    build: BuildSubjectOut
    model: ModelSubjectOut
    workload: WorkloadOut
    serving: ServingResolvedOut
    fits: bool
    max_concurrency: int = Field(description="the largest batch that fits")
    curve: list[ServingPointOut]
    at_slo: AtSloOut | None
    plan: PlanOut
    findings: list[FindingOut]
    assumptions: list[str]
    estimated: bool = Field(description="always true: model estimates, not measurements")
