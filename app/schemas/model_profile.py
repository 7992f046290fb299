"""Model profile records as seeded, exported, read and written."""

from pydantic import Field, model_validator

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


class ModelIn(StrictModel):
    """A model profile: published parameter counts plus its Hugging Face config.json."""

    slug: Slug
    name: Name
    organization: ShortText = ""
    license: ShortText = ""
    params_total: int = Field(gt=0, le=MAX_PARAMS, description="published total parameters")
    params_active: int = Field(gt=0, le=MAX_PARAMS, description="published active parameters")
    max_context_tokens: int | None = Field(default=None, ge=1, le=100_000_000)
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
