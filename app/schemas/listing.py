"""Query models for the catalog lists (JSON, CSV and the HTML pages share them) and list items."""

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from app.engine import PRECISIONS, RUNTIMES
from app.schemas.accelerator import MemoryKind
from app.schemas.build import BuildListItem, Tier
from app.schemas.common import Page
from app.schemas.model_profile import ModelListItem

MAX_PER_PAGE = 200
DEFAULT_PER_PAGE = 50
# The tier-line story quotes DeepSeek-V3 at FP8 (671B -> ~805 GB): FP8 is the API's default
# weight precision wherever a precision is optional (fits_model, compare, recommend, tiers).
DEFAULT_PRECISION = "fp8"
DEFAULT_CONTEXT_TOKENS = 4096
MAX_CONTEXT_TOKENS = 10_000_000
MAX_BATCH = 100_000

if TYPE_CHECKING:
    PrecisionName = str
    RuntimeName = str
else:  # enums of the engine's names, so OpenAPI lists them and unknown ones are 422
    PrecisionName = Literal[tuple(PRECISIONS)]
    RuntimeName = Literal[tuple(RUNTIMES)]
Parallelism = Literal["auto", "tensor", "pipeline"]
RUNTIME_DESCRIPTION = (
    "inference runtime; null = from the inputs: GGUF precisions and Apple builds -> llama.cpp, "
    "otherwise vLLM (answers say which runtime ran)"
)


def no_nul(value: str) -> str:
    """Refuse NUL characters (PostgreSQL text cannot hold them)."""
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


SearchText = Annotated[str, Field(max_length=200), AfterValidator(no_nul)]
SlugRef = Annotated[
    str,
    Field(pattern=r"^[a-z0-9][a-z0-9-]{0,79}$", description="a catalog slug"),
]
ContextTokens = Annotated[int, Field(ge=1, le=MAX_CONTEXT_TOKENS)]
Money = Annotated[float, Field(ge=0, le=1e12, allow_inf_nan=False)]
Measure = Annotated[float, Field(ge=0, le=1e12, allow_inf_nan=False)]


def sort_param(fields: tuple[str, ...]) -> Any:
    """The `sort` query parameter of a list, its values (each field, `-field`) listed in OpenAPI.

    The empty value is "default order" (an HTML form's unset select sends it).
    """
    values = ["", *fields, *(f"-{name}" for name in fields)]

    def document(schema: dict[str, Any]) -> None:
        for branch in schema.get("anyOf", [schema]):
            if branch.get("type") == "string":
                branch["enum"] = values

    return Field(
        default=None,
        max_length=64,
        description="a sort field, prefixed with '-' for descending; nulls always sort last",
        json_schema_extra=document,
    )


class ListQuery(BaseModel):
    """Paging, sorting and text search shared by every list."""

    # Unknown query parameters are ignored (cache busters, tracking tags), not refused.
    model_config = ConfigDict(extra="ignore")

    SORT_FIELDS: ClassVar[tuple[str, ...]] = ()
    DEFAULT_SORT: ClassVar[str] = "name"

    q: SearchText | None = Field(
        default=None, description="case-insensitive text search (slug, name, vendor, ...)"
    )
    sort: str | None = Field(
        default=None,
        max_length=64,
        description="a sort field, prefixed with '-' for descending; nulls always sort last",
    )
    page: int = Field(default=1, ge=1, le=1_000_000, description="1-based page number")
    per_page: int = Field(default=DEFAULT_PER_PAGE, ge=1, le=MAX_PER_PAGE)

    @field_validator("sort")
    @classmethod
    def _known_sort(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        name = value[1:] if value.startswith("-") else value
        if name not in cls.SORT_FIELDS:
            raise PydanticCustomError(
                "unknown_sort_field",
                "unknown sort field '{name}'; use one of {known} (prefix '-' for descending)",
                {"name": name, "known": ", ".join(cls.SORT_FIELDS)},
            )
        return value

    @property
    def sort_key(self) -> tuple[str, bool]:
        """(field, descending)."""
        value = self.sort or self.DEFAULT_SORT
        return (value[1:], True) if value.startswith("-") else (value, False)

    def filters(self) -> dict[str, Any]:
        """The filter values that are set (paging and sorting left out)."""
        return {
            k: v
            for k, v in self.model_dump().items()
            if v is not None and k not in {"sort", "page", "per_page"}
        }


class BuildQuery(ListQuery):
    """Filters for builds; `fits_model` keeps only builds that run that model (engine verdict)."""

    SORT_FIELDS: ClassVar[tuple[str, ...]] = (
        "tier",
        "name",
        "slug",
        "price_usd",
        "power_w",
        "total_memory_gb",
        "pooled_memory_gb",
        "accelerator_count",
        "nodes",
        "accelerator_memory_gb",
        "intra_node_bandwidth_gbs",
    )
    DEFAULT_SORT: ClassVar[str] = "tier"
    sort: str | None = sort_param(SORT_FIELDS)

    tier: Tier | None = None
    vendor: SearchText | None = Field(
        default=None, description="accelerator vendor, case-insensitive (e.g. NVIDIA, AMD, Apple)"
    )
    accelerator: SlugRef | None = Field(default=None, description="accelerator slug")
    min_memory_gb: Measure | None = Field(default=None, description="total accelerator memory")
    max_price_usd: Money | None = Field(
        default=None, description="builds without a known price are left out when set"
    )
    fits_model: SlugRef | None = Field(
        default=None, description="model slug: keep builds on which the engine says it fits"
    )
    precision: PrecisionName = Field(
        default=DEFAULT_PRECISION, description="weight precision for fits_model"
    )
    context_tokens: ContextTokens = Field(
        default=DEFAULT_CONTEXT_TOKENS, description="KV-cache tokens per sequence for fits_model"
    )
    runtime: RuntimeName | None = Field(
        default=None, description=f"for fits_model: {RUNTIME_DESCRIPTION}"
    )
    parallelism: Parallelism = Field(
        default="auto", description="for fits_model: how the model is split over accelerators"
    )

    def filters(self) -> dict[str, Any]:
        out = super().filters()
        if self.fits_model is None:
            # these only matter with fits_model; keep CSV/JSON links tidy.
            for name in ("precision", "context_tokens", "runtime", "parallelism"):
                out.pop(name, None)
        elif self.parallelism == "auto":
            out.pop("parallelism")  # the default; keep links short
        return out


class AcceleratorQuery(ListQuery):
    """Filters for accelerators."""

    SORT_FIELDS: ClassVar[tuple[str, ...]] = (
        "name",
        "slug",
        "vendor",
        "memory_gb",
        "memory_bandwidth_gbs",
        "fp16_tflops",
        "fp8_tflops",
        "tdp_w",
        "price_usd",
        "launch_year",
    )
    sort: str | None = sort_param(SORT_FIELDS)

    vendor: SearchText | None = None
    memory_kind: MemoryKind | None = None
    min_memory_gb: Measure | None = None
    max_price_usd: Money | None = None


class ModelQuery(ListQuery):
    """Filters for model profiles."""

    SORT_FIELDS: ClassVar[tuple[str, ...]] = (
        "name",
        "slug",
        "organization",
        "params_total",
        "params_active",
        "max_context_tokens",
        "kv_cache_bytes_per_token",
    )
    sort: str | None = sort_param(SORT_FIELDS)

    attention: Literal["mha", "gqa", "mqa", "mla"] | None = None
    is_moe: bool | None = None
    organization: SearchText | None = None
    min_params_b: Measure | None = Field(default=None, description="billions of total parameters")
    max_params_b: Measure | None = Field(default=None, description="billions of total parameters")


class AcceleratorListItem(BaseModel):
    """An accelerator in a list."""

    slug: str
    name: str
    vendor: str
    memory_gb: float
    memory_kind: MemoryKind
    memory_type: str | None
    memory_bandwidth_gbs: float
    fp16_tflops: float
    fp8_tflops: float | None
    fp4_tflops: float | None
    tdp_w: float | None
    price_usd: float | None
    launch_year: int | None


class BuildPage(Page[BuildListItem]):
    """One page of builds."""


class AcceleratorPage(Page[AcceleratorListItem]):
    """One page of accelerators."""


class ModelPage(Page[ModelListItem]):
    """One page of model profiles."""
