"""GET /api/v1/recommend: query and answer."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.build import BuildListItem
from app.schemas.estimate import RUNTIME_DESCRIPTION, Parallelism, RuntimeName
from app.schemas.listing import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_PRECISION,
    MAX_BATCH,
    MAX_CONTEXT_TOKENS,
    Money,
    PrecisionName,
    SlugRef,
)

# Below this many listed builds the answer is "short" and worth the lower-precision retries.
SHORT_ANSWER = 3

RecommendSort = Literal[
    "price_usd",
    "-price_usd",
    "usd_per_million_tokens",
    "-decode_tokens_per_s",
    "decode_tokens_per_s",
]


class RecommendQuery(BaseModel):
    """Which builds run this model, and which are worth their price."""

    model_config = ConfigDict(extra="ignore")

    model: SlugRef = Field(description="model slug")
    precision: PrecisionName = DEFAULT_PRECISION
    context_tokens: int = Field(default=DEFAULT_CONTEXT_TOKENS, ge=1, le=MAX_CONTEXT_TOKENS)
    batch: int = Field(default=1, ge=1, le=MAX_BATCH, description="concurrent sequences")
    runtime: RuntimeName | None = Field(default=None, description=RUNTIME_DESCRIPTION)
    parallelism: Parallelism = "auto"
    min_decode_tokens_per_s: float | None = Field(
        default=None, ge=0, le=1e9, allow_inf_nan=False, description="per sequence"
    )
    max_price_usd: Money | None = None
    sort: RecommendSort = Field(
        default="price_usd", description="ranking; unknown prices/costs sort last"
    )


class FiguresOut(BaseModel):
    """The engine's figures for one build and one model."""

    fits: bool
    verdict: str
    decode_tokens_per_s: float | None
    aggregate_decode_tokens_per_s: float | None
    time_to_first_token_s: float | None
    bottleneck: str | None
    usd_per_million_tokens: float | None
    memory_total_gb: float
    memory_per_accelerator_gb: float
    rule_of_thumb_gb: float
    plan: str
    max_context_tokens_that_fit: int | None
    runtime: str = Field(description="the runtime the figures are for")
    launch_command: str = Field(description="how to run the plan with that runtime")
    objective: str = Field(description="what the automatic plan choice optimised")


class RecommendItem(FiguresOut):
    """A build that runs the model, with its rank and whether it is on the Pareto front."""

    rank: int
    build: BuildListItem
    pareto: bool = Field(
        description="no other listed build is at most as expensive (price_usd) and at least "
        "as fast (decode_tokens_per_s per sequence), and strictly better in one"
    )


class RecommendExcluded(BaseModel):
    """Why considered builds are not listed; a build over both limits counts under each."""

    does_not_fit: int = Field(description="the model does not fit at this precision/context/batch")
    too_slow: int = Field(description="fits, but decodes below min_decode_tokens_per_s")
    over_max_price: int = Field(description="fits, but its price_usd is above max_price_usd")
    unpriced: int = Field(description="fits, but has no price to hold against max_price_usd")


class RecommendMiss(FiguresOut):
    """A build that fits but is held back by one limit."""

    build: BuildListItem


class PrecisionThatFits(BaseModel):
    """The highest precision below the query's at which more builds pass the same limits."""

    precision: str
    fitting: int = Field(description="builds on which the model fits at this precision")
    passing: int = Field(description="of those, builds that also pass the speed/price limits")


class NearestMisses(BaseModel):
    """The closest ways out of an empty or short answer."""

    cheapest_too_slow: RecommendMiss | None = Field(
        description="the cheapest priced build held back only by min_decode_tokens_per_s"
    )
    fastest_too_expensive: RecommendMiss | None = Field(
        description="the fastest build held back only by max_price_usd"
    )
    precision_that_fits: PrecisionThatFits | None = Field(
        description=f"tried only when fewer than {SHORT_ANSWER} builds pass; "
        "null when no lower precision helps"
    )


class RecommendModel(BaseModel):
    """The model the recommendation is for."""

    slug: str
    name: str
    params_total: int
    params_active: int
    rule_of_thumb_gb: float


class RecommendOut(BaseModel):
    """The builds that fit, ranked, with the cost/speed Pareto front marked."""

    model: RecommendModel
    workload: dict[str, str | int | float | None]
    sort: str
    pareto_axes: list[str]
    items: list[RecommendItem]
    considered: int = Field(description="catalog builds evaluated")
    fitting: int = Field(description="builds on which the model fits (before the filters)")
    excluded: RecommendExcluded
    nearest_misses: NearestMisses
