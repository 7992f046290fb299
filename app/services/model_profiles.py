"""Model profiles: the catalog list (filters, sort, pages), CSV rows and the detail record.

Contract (callers: the JSON API and the HTML pages):
- `list_model_profiles(session, *, query: ModelQuery) -> ListResult[ModelListItem]`.
- `matching_model_profiles(session, *, query) -> list[ModelListItem]`: every match, sorted,
  unpaged (CSV).
- `get_model_profile(session, *, slug) -> ModelRead`: raw config.json plus the architecture the
  engine reads from it and its computed parameter counts, raising NotFound.
- `model_profile_rows(snap)` / `find_model_profile(snap, slug, field=...)`: cached rows with
  engine ModelSpecs for the other services.
Cached per catalog version; the typed answers are built once per row and returned as they are.
"""

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.caching import Snapshot, snapshot
from app.engine import EngineInputError, ModelSpec, rule_of_thumb_gb
from app.models import ModelProfile
from app.pagination import ListResult
from app.schemas.listing import ModelQuery
from app.schemas.model_profile import ModelListItem, ModelRead
from app.services.listing import contains, find_row, list_memo, page_rows, rows_by_slug, sorted_rows
from app.services.records import model_document
from app.services.specs import model_spec

# KV-cache bytes per token are quoted at 16-bit, the common serving default.
KV_QUOTE_PRECISION = "bf16"
# Sorted case-insensitively.
TEXT_FIELDS = ("name", "slug", "organization")


@dataclass(frozen=True)
class ModelProfileRow:
    """One model profile with its engine spec (read-only).

    `list_item` and `record` are the API's typed answers, validated once per catalog version;
    the filters, sort and other services read their attributes.
    """

    slug: str
    name: str
    list_item: ModelListItem
    record: ModelRead
    spec: ModelSpec
    params_total: int
    search_text: str
    version: int

    def rule_of_thumb_gb(self, precision: str) -> float:
        """Published total parameters x bytes per parameter x 1.2 (the figure people quote)."""
        return rule_of_thumb_gb(self.params_total, precision)


def _row(profile: ModelProfile) -> ModelProfileRow | None:
    try:
        spec = model_spec(profile)
    except EngineInputError:
        return None  # validated on write; a config the engine cannot read is left out
    kv = spec.kv_cache_bytes_per_token(KV_QUOTE_PRECISION)
    item = {
        "slug": profile.slug,
        "name": profile.name,
        "organization": profile.organization,
        "params_total": profile.params_total,
        "params_active": profile.params_active,
        "attention": profile.attention,
        "is_moe": profile.is_moe,
        "max_context_tokens": profile.max_context_tokens,
        "kv_cache_bytes_per_token": kv,
    }
    read = model_document(profile)
    read.update(
        version=profile.version,
        architecture=profile.architecture,
        attention=profile.attention,
        is_moe=profile.is_moe,
        num_hidden_layers=profile.num_hidden_layers,
        hidden_size=profile.hidden_size,
        num_attention_heads=profile.num_attention_heads,
        num_key_value_heads=profile.num_key_value_heads,
        head_dim=profile.head_dim,
        vocab_size=profile.vocab_size,
        n_routed_experts=profile.n_routed_experts,
        num_experts_per_tok=profile.num_experts_per_tok,
        kv_lora_rank=profile.kv_lora_rank,
        sliding_window=profile.sliding_window,
        params_total_computed=spec.params_total,
        params_active_computed=spec.params_active,
        kv_cache_bytes_per_token=kv,
    )
    search = " ".join([profile.slug, profile.name, profile.organization, profile.architecture])
    return ModelProfileRow(
        slug=profile.slug,
        name=profile.name,
        list_item=ModelListItem.model_validate(item),
        record=ModelRead.model_validate(read),
        spec=spec,
        params_total=profile.params_total,
        search_text=search.casefold(),
        version=profile.version,
    )


def model_profile_rows(snap: Snapshot) -> dict[str, ModelProfileRow]:
    """Every model profile by slug (slug order), parsed once per catalog version."""
    return rows_by_slug(
        snap, "model_profile_rows", lambda: select(ModelProfile).order_by(ModelProfile.slug), _row
    )


def find_model_profile(snap: Snapshot, slug: str, *, field: str = "slug") -> ModelProfileRow:
    """One model row by slug, or NotFound naming `field`."""
    return find_row(model_profile_rows(snap), slug, noun="model", field=field)


def _matching(snap: Snapshot, query: ModelQuery) -> list[ModelProfileRow]:
    def compute() -> list[ModelProfileRow]:
        org = query.organization.strip().casefold() if query.organization else None
        out = []
        for r in model_profile_rows(snap).values():
            item = r.list_item
            billions = item.params_total / 1e9
            if query.attention is not None and item.attention != query.attention:
                continue
            if query.is_moe is not None and item.is_moe != query.is_moe:
                continue
            if org is not None and item.organization.casefold() != org:
                continue
            if query.min_params_b is not None and billions < query.min_params_b:
                continue
            if query.max_params_b is not None and billions > query.max_params_b:
                continue
            if not contains(r.search_text, query.q):
                continue
            out.append(r)
        return sorted_rows(out, query.sort_key, text_fields=TEXT_FIELDS)

    return list_memo(snap, "model_list", query, compute)


def list_model_profiles(session: Session, *, query: ModelQuery) -> ListResult[ModelListItem]:
    """One page of model profiles matching the query."""
    return page_rows(_matching(snapshot(session), query), query)


def matching_model_profiles(session: Session, *, query: ModelQuery) -> list[ModelListItem]:
    """Every model matching the query's filters, sorted, without paging (CSV export)."""
    return [r.list_item for r in _matching(snapshot(session), query)]


def get_model_profile(session: Session, *, slug: str) -> ModelRead:
    """The full model profile, or NotFound."""
    return find_model_profile(snapshot(session), slug).record
