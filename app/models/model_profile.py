"""A model profile: a Hugging Face config.json plus the architecture fields drawn from it."""

from typing import Any

from sqlalchemy import JSON, BigInteger, CheckConstraint, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models._mixins import SHORT_TEXT_LENGTH, CatalogRecord


class ModelProfile(CatalogRecord, Base):
    __tablename__ = "model_profile"
    __table_args__ = (
        CheckConstraint("params_total > 0", name="params_total_positive"),
        CheckConstraint(
            "params_active > 0 AND params_active <= params_total", name="params_active"
        ),
        CheckConstraint("num_hidden_layers > 0", name="layers_positive"),
        CheckConstraint("hidden_size > 0", name="hidden_size_positive"),
    )

    organization: Mapped[str] = mapped_column(String(SHORT_TEXT_LENGTH), default="")
    license: Mapped[str] = mapped_column(String(SHORT_TEXT_LENGTH), default="")
    # Published counts; the engine's computed counts are shown beside them.
    params_total: Mapped[int] = mapped_column(BigInteger)
    params_active: Mapped[int] = mapped_column(BigInteger)
    max_context_tokens: Mapped[int | None] = mapped_column(Integer)
    # The raw config.json is the source of truth; the columns below are drawn from it
    # (by the engine's parser) so lists can filter and sort without parsing JSON.
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    architecture: Mapped[str] = mapped_column(String(SHORT_TEXT_LENGTH), default="")
    attention: Mapped[str] = mapped_column(String(16))
    is_moe: Mapped[bool] = mapped_column(default=False)
    num_hidden_layers: Mapped[int] = mapped_column(Integer)
    hidden_size: Mapped[int] = mapped_column(Integer)
    num_attention_heads: Mapped[int] = mapped_column(Integer)
    num_key_value_heads: Mapped[int] = mapped_column(Integer)
    head_dim: Mapped[int] = mapped_column(Integer)
    vocab_size: Mapped[int] = mapped_column(Integer)
    n_routed_experts: Mapped[int] = mapped_column(Integer, default=0)
    num_experts_per_tok: Mapped[int] = mapped_column(Integer, default=0)
    kv_lora_rank: Mapped[int | None] = mapped_column(Integer)
    sliding_window: Mapped[int | None] = mapped_column(Integer)
