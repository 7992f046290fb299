"""Request and response shapes of the admin JSON API."""

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, model_validator

from app.schemas.accelerator import AcceleratorIn
from app.schemas.build import BuildIn, Tier
from app.schemas.common import (
    AsOf,
    HfConfig,
    Name,
    Notes,
    ShortText,
    SourceUrl,
    StrictModel,
    storable_text,
)
from app.schemas.measurement import MeasurementIn
from app.schemas.model_profile import MAX_PARAMS, ModelIn, ModelSlug

# Path segments and filters that reach a query: PostgreSQL text holds neither NUL nor a lone
# surrogate, so such input is refused as invalid (422 naming the parameter) rather than failing
# in the database.
StorableText = AfterValidator(storable_text)


class AcceleratorAdmin(AcceleratorIn):
    """An accelerator as the admin API answers it: the document plus its version (= ETag)."""

    version: int


class BuildAdmin(BuildIn):
    """A build as the admin API answers it: the document, its derived tier and its version."""

    tier: Tier  # type: ignore[assignment]
    version: int


class ModelAdmin(ModelIn):
    """A model profile as the admin API answers it: the document plus its version (= ETag)."""

    version: int


class MeasurementAdmin(MeasurementIn):
    """A measurement as the admin API answers it: the document plus its version (= ETag)."""

    version: int


class ModelFromConfig(StrictModel):
    """A Hugging Face config.json (or the model's Hub id, to fetch it) and what it does not say;
    missing counts are computed."""

    slug: ModelSlug
    name: Name
    # The same bounded config type as model records and inline models: NaN, infinities and
    # numbers past 1e12 are field errors here, not failures in the engine.
    config: HfConfig | None = Field(
        default=None, description="the model's config.json, as published (or give hf_id)"
    )
    hf_id: str | None = Field(
        default=None, max_length=200, examples=["meta-llama/Llama-3.1-8B"],
        description="a Hugging Face model id (org/name): its config.json is fetched from the Hub "
        "(TIERLINE_HF_ENDPOINT, TIERLINE_HF_TOKEN for gated models); give this or config",
    )
    source_url: SourceUrl | None = Field(
        default=None, description="required with config; with hf_id, defaults to its Hub page"
    )
    as_of: AsOf | None = Field(default=None, description="defaults to today")
    params_total: int | None = Field(
        default=None, strict=True, gt=0, le=MAX_PARAMS,
        description="published total parameters; omitted: the engine's count, marked estimated",
    )
    params_active: int | None = Field(
        default=None, strict=True, gt=0, le=MAX_PARAMS,
        description="published active parameters; omitted: the engine's count, marked estimated",
    )
    max_context_tokens: int | None = Field(
        default=None, strict=True, ge=1, le=100_000_000,
        description="defaults to the config's max_position_embeddings",
    )
    organization: ShortText = ""
    license: ShortText = ""
    notes: Notes = ""

    @model_validator(mode="after")
    def _one_config_source(self) -> "ModelFromConfig":
        if (self.config is None) == (self.hf_id is None):
            raise ValueError("give either config (the config.json) or hf_id (org/name), not both")
        if self.config is not None and self.source_url is None:
            raise ValueError("source_url is required with a pasted config")
        return self


class RecordRefOut(BaseModel):
    """A record named by kind and slug."""

    kind: str
    slug: str


class ImportErrorOut(BaseModel):
    """One invalid record or field of an imported document."""

    kind: str
    slug: str | None
    index: int | None
    field: str
    message: str


class ImportResultOut(BaseModel):
    """What an import did, or in a dry run would do; a dry run answers exactly like the run."""

    created: list[RecordRefOut]
    updated: list[RecordRefOut]
    unchanged: list[RecordRefOut]
    errors: list[ImportErrorOut] = Field(description="the first 100 problems, in document order")
    error_count: int = Field(description="how many problems there are in all")


def _utc(value: datetime) -> datetime:
    # OpenAPI promises an RFC 3339 date-time, which needs a zone: SQLite gives the stored UTC
    # time back without one, PostgreSQL gives it in the session's zone.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class AuditEventOut(BaseModel):
    """One change: who (token name), when, what, and the record before and after."""

    id: int
    at: Annotated[datetime, AfterValidator(_utc)] = Field(description="when, in UTC")
    actor: str
    action: str
    kind: str
    slug: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None


class AuditPage(BaseModel):
    """A page of the audit log, newest first."""

    items: list[AuditEventOut]
    total: int
    page: int
    per_page: int
    next_url: str | None = None
