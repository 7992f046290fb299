"""GET /api/v1/tiers: the tier line."""

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.build import Tier
from app.schemas.listing import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_PRECISION,
    MAX_CONTEXT_TOKENS,
    PrecisionName,
)


class TiersQuery(BaseModel):
    """At which precision (and context) to judge the largest runnable model."""

    model_config = ConfigDict(extra="ignore")

    precision: PrecisionName = DEFAULT_PRECISION
    context_tokens: int = Field(default=DEFAULT_CONTEXT_TOKENS, ge=1, le=MAX_CONTEXT_TOKENS)


class LargestModel(BaseModel):
    """The catalog model with the most parameters that fits the build."""

    slug: str
    name: str
    params_total: int
    rule_of_thumb_gb: float
    verdict: str
    offloaded: bool = Field(
        default=False,
        description="part of the weights stay in host RAM (llama.cpp offload): it runs, slowly",
    )
    decode_tokens_per_s: float | None = Field(
        default=None, description="single-stream decode speed there, an estimate"
    )


class TierBuild(BaseModel):
    """A build on the tier line."""

    slug: str
    name: str
    accelerator: str
    accelerator_name: str
    accelerator_count: int
    accelerators_label: str = Field(
        description='the cards of one node in words: "2× RTX 3090 + 1× RTX 4090"'
    )
    nodes: int
    total_memory_gb: float
    pooled_memory_gb: float = Field(description="memory one scale-up domain shares")
    memory_pooled: bool
    price_usd: float | None
    power_w: float | None
    largest_model: LargestModel | None


class TierGroup(BaseModel):
    """One tier and its builds (cheapest first; unknown prices last)."""

    tier: Tier
    builds: list[TierBuild]


class TiersOut(BaseModel):
    """desktop -> dgx -> cluster."""

    precision: str
    context_tokens: int
    tiers: list[TierGroup]
