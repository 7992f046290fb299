"""Model profile records as seeded, exported, read and written."""

from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from app.schemas.accelerator import check_estimated_names
from app.schemas.common import (
    AsOf,
    HfConfig,
    Name,
    Notes,
    ShortText,
    Slug,
    SourceUrl,
    StrictModel,
)

MAX_PARAMS = 100_000_000_000_000  # 100T: beyond any published model, inside BIGINT
# Path segments of admin routes beside /api/v1/admin/models/{slug}: a model with such a slug could
# never be read, replaced or deleted there, so no model may take one.
RESERVED_MODEL_SLUGS = ("from-config",)


def _not_reserved(value: str) -> str:
    if value in RESERVED_MODEL_SLUGS:
        raise ValueError(f"'{value}' is reserved (it names an admin route); choose another slug")
    return value


ModelSlug = Annotated[
    Slug,
    AfterValidator(_not_reserved),
    Field(json_schema_extra={"not": {"enum": list(RESERVED_MODEL_SLUGS)}}),
]


class ModelIn(StrictModel):
    """A model profile: published parameter counts plus its Hugging Face config.json."""

    slug: ModelSlug
    name: Name
    organization: ShortText = ""
    license: ShortText = ""
    params_total: int = Field(
        strict=True, gt=0, le=MAX_PARAMS, description="published total parameters"
    )
    params_active: int = Field(
        strict=True, gt=0, le=MAX_PARAMS, description="published active parameters"
    )
    max_context_tokens: int | None = Field(default=None, strict=True, ge=1, le=100_000_000)
    config: HfConfig
    estimated: list[ShortText] = Field(default_factory=list, max_length=40)
    notes: Notes = ""
    source_url: SourceUrl
    as_of: AsOf

    @model_validator(mode="after")
    def _consistent(self) -> "ModelIn":
        check_estimated_names(self, self.estimated)
        if self.params_active > self.params_total:
            raise ValueError("params_active exceeds params_total")
        return self


class ModelRead(ModelIn):
    """The full record with the architecture the engine reads from the config."""

    version: int
    architecture: str
    attention: str
    is_moe: bool
    num_hidden_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    vocab_size: int
    n_routed_experts: int
    num_experts_per_tok: int
    kv_lora_rank: int | None
    sliding_window: int | None
    params_total_computed: int
    params_active_computed: int
    kv_cache_bytes_per_token: float


class ModelListItem(StrictModel):
    """A model in a list."""

    slug: str
    name: str
    organization: str
    params_total: int
    params_active: int
    attention: str
    is_moe: bool
    max_context_tokens: int | None
    kv_cache_bytes_per_token: float
