"""GET /api/v1/recommend: query and answer."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.build import BuildListItem
from app.schemas.estimate import (
    OFFLOAD_DESCRIPTION,
    RUNTIME_DESCRIPTION,
    Offload,
    Parallelism,
    RuntimeName,
)
from app.schemas.listing import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_PRECISION,
    MAX_BATCH,
    MAX_CONTEXT_TOKENS,
    Money,
    PrecisionName,
    SlugRef,
)
from app.schemas.model_profile import ModelListItem
from app.schemas.serving import MAX_CONCURRENT_USERS, ServingPointOut

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
    offload: Offload = Field(default="auto", description=OFFLOAD_DESCRIPTION)
    min_decode_tokens_per_s: float | None = Field(
        default=None, ge=0, le=1e9, allow_inf_nan=False, description="per sequence"
    )
    max_price_usd: Money | None = None
    sort: RecommendSort = Field(
        default="price_usd", description="ranking; unknown prices/costs sort last"
    )
    # The serving question (issue 17): with any of these set, `at_slo` ranks the listed builds
    # at their best operating point under the limits, cheapest per million output tokens first.
    ttft_s_max: float | None = Field(
        default=None, gt=0, le=86_400, allow_inf_nan=False,
        description="SLO: time to first token at most, seconds",
    )
    itl_ms_max: float | None = Field(
        default=None, gt=0, le=3_600_000, allow_inf_nan=False,
        description="SLO: inter-token latency at most, milliseconds",
    )
    tokens_per_s_per_user_min: float | None = Field(
        default=None, gt=0, le=1e6, allow_inf_nan=False,
        description="SLO: generated tokens/s each user sees, at least",
    )
    concurrent_users: int | None = Field(
        default=None, ge=1, le=MAX_CONCURRENT_USERS,
        description="SLO load: users served at once (sizes the copies of a build needed)",
    )

    @property
    def has_slo(self) -> bool:
        """True when any SLO or load parameter is given."""
        return any(
            v is not None
            for v in (
                self.ttft_s_max,
                self.itl_ms_max,
                self.tokens_per_s_per_user_min,
                self.concurrent_users,
            )
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


class ModelFitOut(FiguresOut):
    """One catalog model on one build (the build page's "what it runs"; not an API answer)."""

    model: ModelListItem
    offloaded: bool = Field(description="weights kept in host RAM (CPU offload)")


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


class SloRankItem(ServingPointOut):
    """A listed build at its best operating point under the SLO (all figures estimates)."""

    rank: int
    build: BuildListItem
    plan: str = Field(description="the plan chosen for the SLO")
    copies_needed: int | None = Field(
        description="copies of the build concurrent_users needs; null without it"
    )
    accelerators_needed: int | None
    price_usd_for_copies: float | None = Field(
        description="price_usd x copies_needed (x 1 without a load); null when unpriced"
    )
    usd_per_million_output_tokens_at_load: float | None = Field(
        description="with concurrent_users: the copies' cost per million output tokens the "
        "users generate, every user at the operating point's speed (an upper bound); the "
        "ranking with a load; null without one or when unpriced"
    )


SloLimit = Literal["ttft_s_max", "itl_ms_max", "tokens_per_s_per_user_min"]


class SloMiss(BaseModel):
    """A listed build that meets the SLO at no concurrency, and which limit stops it."""

    build: BuildListItem
    limits: list[SloLimit] = Field(
        description="the limits that even one request misses; every limit set when each "
        "alone is met at one request but not all together"
    )
    one_request: ServingPointOut | None = Field(
        description="the build serving one request: the best latency it reaches; null when "
        "it holds no request of these lengths in accelerator memory (e.g. a model partly in "
        "host RAM), and then `limits` is empty"
    )


class RecommendAtSlo(BaseModel):
    """The listed builds ranked at the SLO: cheapest per million output tokens first (at the
    load when concurrent_users is given)."""

    ttft_s_max: float | None
    itl_ms_max: float | None
    tokens_per_s_per_user_min: float | None
    concurrent_users: int | None
    input_tokens: int = Field(description="prompt tokens per request (the workload's prompt)")
    output_tokens: int = Field(description="answer tokens per request (context - prompt)")
    items: list[SloRankItem]
    missed: list[SloMiss] = Field(description="listed builds that cannot meet the SLO")


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
    at_slo: RecommendAtSlo | None = Field(
        default=None, description="the ranking at the SLO; null when no SLO parameter is given"
    )
