"""The build catalog pages: the filterable list and each build's spec sheet."""

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.orm import Session

from app.api._common import catalog_session, settings_of
from app.caching import snapshot
from app.config import Settings
from app.deps import SessionDep
from app.errors import DomainError
from app.formatting import tier_name
from app.models import TIERS
from app.schemas.listing import BuildQuery
from app.services.accuracy import accuracy_notes_for_build, measured_vs_predicted_for_build
from app.services.builds import build_parts, get_build, list_builds
from app.web.common import Notice, cached_page, notices_from, parse_query, raw_query, render
from app.web.form_choices import PARALLELISM, RUNTIME_OPTIONS, PlanChoice
from app.web.pages import STORY_MODEL, build_model_fits, filter_options, precision_options
from app.web.serving_sections import build_page_section
from app.web.urls import with_query

router = APIRouter(include_in_schema=False)

@dataclass(frozen=True)
class Column:
    """A column of the build list: its key (for ?hide=), heading, sort field and unit hint."""

    key: str
    label: str
    sort: str | None
    numeric: bool = False
    hint: str | None = None
    optional: bool = True  # the column picker can hide it


# In priority order: the build's name is always shown; the picker hides any of the others.
BUILD_COLUMNS = (
    Column("name", "Build", "name", optional=False),
    Column("tier", "Tier", "tier"),
    Column("accelerators", "Accelerators", "accelerator_count"),
    # Catalog capacities are vendor labels (binary GB); the engine's figures are 10^9 bytes.
    Column("total_memory_gb", "Total memory", "total_memory_gb", True, "GB (vendor)"),
    Column("price_usd", "Price", "price_usd", True, "USD"),
    Column("power_w", "Power", "power_w", True, "W"),
    Column("pooled_memory_gb", "Pooled memory", "pooled_memory_gb", True, "GB (vendor)"),
    Column("link", "GPU-to-GPU link", "intra_node_bandwidth_gbs", False, "GB/s"),
)
HIDEABLE = {c.key for c in BUILD_COLUMNS if c.optional}


def hidden_columns(request: Request) -> list[str]:
    """The columns the picker hid (?hide=power_w&hide=link), known keys only, in column order."""
    asked = set(request.query_params.getlist("hide"))
    return [c.key for c in BUILD_COLUMNS if c.key in asked and c.key in HIDEABLE]


PER_PAGE_CHOICES = (10, 25, 50, 100, 200)


@router.get("/builds", response_class=HTMLResponse)
def builds_page(request: Request, session: SessionDep) -> HTMLResponse:
    """The build catalog: filters, sortable columns, pages, JSON/CSV links, compare picker."""
    raw = raw_query(request)
    parsed = parse_query(BuildQuery, raw)
    query = parsed.query
    notices: list[Notice] = list(parsed.notices)
    try:
        result = list_builds(session, query=query)
    except DomainError as error:
        # An unknown fits_model: say so and list without that filter.
        notices.extend(notices_from(error.errors) or [Notice(error.detail)])
        query = query.model_copy(update={"fits_model": None})
        raw = {k: v for k, v in raw.items() if k != "fits_model"}
        result = list_builds(session, query=query)

    filters = query.filters()
    sort = query.sort or BuildQuery.DEFAULT_SORT
    hidden = hidden_columns(request)
    # State every link keeps: filters, sort, hidden columns and page size (page is per link).
    state: dict[str, Any] = {**filters, "sort": query.sort, "hide": hidden or None}
    if query.per_page != BuildQuery.model_fields["per_page"].default:
        state["per_page"] = query.per_page
    paged = {**state, "page": query.page if query.page > 1 else None}
    # The JSON and CSV carry every column whatever the picker shows.
    data_state = {k: v for k, v in state.items() if k != "hide"}
    json_url = with_query("/api/v1/builds", {**data_state, "page": paged["page"]})
    csv_url = with_query("/api/v1/builds.csv", data_state)
    canonical = with_query("/builds", paged)
    options = filter_options(session)
    fits_model_name = dict(options.models).get(query.fits_model or "", None)
    return render(
        request,
        session,
        "builds/list.html",
        {
            "result": result,
            "query": query,
            "raw": raw,
            "state": state,
            "sort": sort,
            "columns": [c for c in BUILD_COLUMNS if c.key not in hidden],
            "all_columns": BUILD_COLUMNS,
            "hidden": hidden,
            "tiers": [(t, tier_name(t)) for t in TIERS],
            "options": options,
            "precisions": precision_options(),
            "runtimes": RUNTIME_OPTIONS,
            "parallelism_choices": PARALLELISM,
            "per_page_choices": PER_PAGE_CHOICES,
            "csv_url": csv_url,
            "fits_model_name": fits_model_name,
            "notices": notices,
        },
        json_url=json_url,
        canonical=canonical,
    )


# Spec-sheet groups: (heading, [(label, read-shape field, filter)]).
SPEC_GROUPS: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...] = (
    (
        "Accelerators",
        (
            ("Nodes", "nodes", "int_commas"),
            ("Cards per node", "accelerators_label", "text"),
            ("Accelerators per node", "accelerators_per_node", "int_commas"),
            ("Accelerators in total", "accelerator_count", "int_commas"),
        ),
    ),
    (
        "Memory",
        (
            ("Total accelerator memory", "total_memory_gb", "vendor_gb"),
            ("Pooled memory per scale-up domain", "pooled_memory_gb", "vendor_gb"),
            ("Memory pooled across accelerators", "memory_pooled", "yes_no"),
            ("Smallest card's memory", "min_accelerator_memory_gb", "vendor_gb"),
            ("Host memory", "host_memory_gb", "gb"),
        ),
    ),
    (
        "Host",
        (
            ("CPU", "host.cpu", "text"),
            ("CPU cores", "host.cpu_cores", "int_commas"),
            ("RAM", "host_memory_gb", "gb"),
            ("RAM channels", "host.ram_channels", "int_commas"),
            ("RAM speed, MT/s", "host.ram_speed_mts", "int_commas"),
            ("RAM bandwidth (peak)", "host.ram_bandwidth_gbs", "gbs"),
            ("Slowest card-to-host PCIe link, per direction", "slowest_pcie_gbs", "gbs"),
        ),
    ),
    (
        "Links",
        (
            ("GPU-to-GPU link (in a node)", "intra_node_link.kind", "link_name"),
            ("GPU-to-GPU bandwidth, per accelerator and direction", "intra_node_link.bandwidth_gbs",
             "gbs"),
            ("GPU-to-GPU latency", "intra_node_link.latency_us", "microseconds"),
            ("Node-to-node network", "inter_node_link.kind", "link_name"),
            ("Network bandwidth per node", "inter_node_link.bandwidth_gbps", "gbps"),
            ("Network latency", "inter_node_link.latency_us", "microseconds"),
            ("Accelerators in one scale-up domain", "scale_up_domain_accelerators", "int_commas"),
        ),
    ),
    ("Power", (("System power", "power_w", "watts"),)),
    (
        "Price",
        (
            ("Price", "price_usd", "usd"),
            ("Price per GB of accelerator memory", "usd_per_gb", "usd"),
        ),
    ),
    (
        "Operations",
        (
            ("Failover", "failover", "text"),
            ("Scheduling", "scheduling", "text"),
        ),
    ),
)


def _field(read: dict[str, Any], path: str) -> Any:
    value: Any = read
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


@router.get("/builds/{slug}", response_class=HTMLResponse)
def build_page(request: Request, slug: str) -> Response:
    """One build's spec sheet and the catalog models it runs."""
    # Session and settings read directly, as on the home page (two thread-pool hops fewer).
    with catalog_session(request) as session:
        settings = settings_of(request)
        return cached_page(
            request, session, lambda: _build_page(request, session, settings, slug)
        )


def _build_page(request: Request, session: Session, settings: Settings, slug: str) -> Response:
    read = get_build(session, slug=slug).model_dump()
    raw = raw_query(request)
    plan_query = parse_query(PlanChoice, raw)
    plan = plan_query.query
    try:
        fits = build_model_fits(
            session,
            build_slug=slug,
            settings=settings,
            runtime=plan.runtime,
            parallelism=plan.parallelism,
        )
    except DomainError as error:
        # A runtime/plan this build cannot use (e.g. MLX off Apple): say so, judge by default.
        plan_query.notices.extend(notices_from(error.errors) or [Notice(error.detail)])
        plan = PlanChoice()
        fits = build_model_fits(session, build_slug=slug, settings=settings)
    story = next((f for f in fits.runs if f.model.slug == STORY_MODEL), None)
    read["pooled_memory_gb"] = fits.pooled_memory_gb
    read["usd_per_gb"] = fits.usd_per_gb
    estimated = set(read.get("estimated") or [])
    groups = []
    for heading, rows in SPEC_GROUPS:
        shown = []
        for label, path, fmt in rows:
            value = _field(read, path)
            shown.append(
                {
                    "label": label,
                    "value": value,
                    "format": fmt,
                    "estimated": path in estimated or path.split(".")[0] in estimated,
                }
            )
        groups.append((heading, shown))
    section = build_page_section(session, settings, raw, slug=slug, fits=fits)
    return render(
        request,
        session,
        "builds/detail.html",
        {
            "build": read,
            "groups": groups,
            "fits": fits,
            "raw": raw,
            "plan": plan,
            "runtimes": RUNTIME_OPTIONS,
            "parallelism_choices": PARALLELISM,
            "story": story,
            "notices": plan_query.notices,
            "serving": section,
            "serving_models": [(f.model.slug, f.model.name) for f in fits.runs],
            "precisions": precision_options(),
            "serving_chart_url": with_query("/serving/curve.svg", section.query)
            if section and section.answer and section.answer.curve
            else None,
            "parts": build_parts(session, slug=slug),
            "measured": measured_vs_predicted_for_build(snapshot(session), slug=slug),
            "accuracy_notes": accuracy_notes_for_build(snapshot(session), slug=slug),
        },
        json_url=f"/api/v1/builds/{slug}",
        canonical=with_query(f"/builds/{slug}", plan.state()),
        status_code=section.status if section and section.status >= 400 else 200,
    )

