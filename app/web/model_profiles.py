"""Model pages: the filterable list and each model's profile with the builds that run it."""

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.caching import snapshot
from app.deps import SessionDep, SettingsDep
from app.engine import rule_of_thumb_gb
from app.schemas.listing import ModelQuery
from app.schemas.model_profile import ModelRead
from app.schemas.recommend import RecommendQuery
from app.services.accuracy import measured_vs_predicted_for_model
from app.services.estimates import cost_assumptions
from app.services.model_profiles import get_model_profile, list_model_profiles
from app.services.recommend import recommend
from app.web.common import parse_query, raw_query, render
from app.web.form_choices import PARALLELISM, RUNTIME_OPTIONS
from app.web.list_pages import render_list_page
from app.web.pages import precision_options
from app.web.urls import with_query

router = APIRouter(include_in_schema=False)

MODEL_COLUMNS = (
    ("Model", "name", False, None),
    ("Organization", "organization", False, None),
    ("Total parameters", "params_total", True, None),
    ("Active parameters", "params_active", True, None),
    ("Max context", "max_context_tokens", True, "tokens"),
    ("KV cache per token", "kv_cache_bytes_per_token", True, "BF16"),
)
ATTENTION_KINDS = (
    ("gqa", "Grouped-query (GQA)"),
    ("mla", "Multi-head latent (MLA)"),
    ("mha", "Multi-head (MHA)"),
    ("mqa", "Multi-query (MQA)"),
)
ATTENTION_NAMES = dict(ATTENTION_KINDS)
RULE_OF_THUMB_PRECISIONS = ("bf16", "fp8", "int4", "q4_k_m")


@router.get("/models", response_class=HTMLResponse)
def models_page(request: Request, session: SessionDep) -> HTMLResponse:
    """The model catalog: filters, sortable columns, pages and JSON/CSV links."""
    return render_list_page(
        request,
        session,
        schema=ModelQuery,
        list_rows=lambda session, query: list_model_profiles(session, query=query),
        template="model_profiles/list.html",
        path="/models",
        api_path="/api/v1/models",
        context={
            "columns": MODEL_COLUMNS,
            "attention_kinds": ATTENTION_KINDS,
            "attention_names": ATTENTION_NAMES,
        },
    )


@router.get("/models/{slug}", response_class=HTMLResponse)
def model_page(
    request: Request, session: SessionDep, settings: SettingsDep, slug: str
) -> HTMLResponse:
    """One model's profile and the builds that run it, cheapest first."""
    model = get_model_profile(session, slug=slug)
    raw = raw_query(request)
    # The recommend service answers "which builds run it"; this page keeps its default order
    # (price, cheapest first) and its precision/context/batch parameters.
    parsed = parse_query(RecommendQuery, {**raw, "model": slug, "sort": "price_usd"})
    query = parsed.query
    answer = recommend(session, query=query, costs=cost_assumptions(settings))
    state = {
        "precision": query.precision,
        "context_tokens": query.context_tokens,
        "batch": query.batch,
        "runtime": query.runtime,
        "parallelism": query.parallelism,
    }
    rules = [(p, rule_of_thumb_gb(model.params_total, p)) for p in RULE_OF_THUMB_PRECISIONS]
    return render(
        request,
        session,
        "model_profiles/detail.html",
        {
            "model": model,
            "answer": answer,
            "query": query,
            "raw": raw,
            "precisions": precision_options(),
            "attention_name": ATTENTION_NAMES.get(model.attention, model.attention),
            "rules": rules,
            "head_dims": head_dimensions(model),
            "runtimes": RUNTIME_OPTIONS,
            "parallelism_choices": PARALLELISM,
            "recommend_url": with_query("/recommend", {"model": slug, **state}),
            "builds_json_url": with_query(
                "/api/v1/recommend", {"model": slug, "sort": "price_usd", **_non_default(state)}
            ),
            "notices": parsed.notices,
            "measured": measured_vs_predicted_for_model(snapshot(session), slug=slug),
        },
        json_url=f"/api/v1/models/{slug}",
        canonical=with_query(f"/models/{slug}", _non_default(state)),
    )


def head_dimensions(model: ModelRead) -> list[tuple[str, int]]:
    """The attention head sizes to show. MLA models (DeepSeek-V3, Kimi K2) split a query/key head
    into a part without position (nope) and a RoPE part, and give values their own size; the
    single `head_dim` a config may also carry (or that hidden/heads gives) means nothing there."""
    config = model.config
    nope, rope, value = (
        config.get(k) for k in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
    )
    if (
        model.attention == "mla"
        and isinstance(nope, int)
        and isinstance(rope, int)
        and isinstance(value, int)
    ):
        return [
            ("query/key", nope + rope),
            ("of which without position (nope)", nope),
            ("RoPE", rope),
            ("value", value),
        ]
    return [("per head", model.head_dim)]


def _non_default(state: dict[str, Any]) -> dict[str, Any]:
    fields = RecommendQuery.model_fields
    return {k: v for k, v in state.items() if v != fields[k].default}
