"""Builds side by side. The URL is the state: ?builds=a,b,c[&model=…&precision=…]."""

import re
from collections.abc import Iterable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from app.deps import SessionDep, SettingsDep
from app.errors import DomainError, InvalidInput
from app.problems import PROBLEM_JSON
from app.schemas.compare import MAX_COMPARE, MIN_COMPARE, STORY_MODEL, CompareOut, CompareQuery
from app.services.compare import compare_builds
from app.services.estimates import cost_assumptions
from app.web.charts import SVG_HEADERS
from app.web.common import Notice, notices_from, parse_query, raw_query, render
from app.web.form_choices import PARALLELISM, RUNTIME_OPTIONS
from app.web.pages import filter_options, precision_options
from app.web.serving_sections import (
    ServingSection,
    compare_chart_svg,
    limits_of,
    serving_section,
)
from app.web.urls import with_query

router = APIRouter(include_in_schema=False)


def requested_slugs(request: Request) -> list[str]:
    """Build slugs from ?builds=a,b and/or repeated ?builds=a&builds=b, in order, deduplicated."""
    slugs: list[str] = []
    for value in request.query_params.getlist("builds"):
        for part in value.replace("\x00", "").split(","):
            slug = part.strip()
            if slug and slug not in slugs:
                slugs.append(slug)
    return slugs


# Characters that start inline Markdown markup (emphasis, code, links, images, strikethrough,
# table cells) or raw HTML; line-start markup (#, -, +) cannot occur inside a table cell. Names
# come from the catalog, which admins and imports write: a name like `<svg/onload=...>` or
# `[x](javascript:...)` must stay text wherever the Markdown is pasted.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]!|~])")
_HTML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def markdown_text(text: str) -> str:
    """`text` as literal Markdown text: markup characters escaped, HTML as entities."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return "".join(_HTML_ENTITIES.get(char, char) for char in escaped)


def markdown_table(comparison: CompareOut) -> str:
    """The comparison as a GitHub-flavoured Markdown table (for pasting into notes)."""

    def cell(text: Any) -> str:
        return markdown_text(str(text).replace("\n", " "))

    header = ["", *[cell(b.name) for b in comparison.builds]]
    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join(["---"] * len(header)) + " |",
    ]
    for row in comparison.rows:
        lines.append("| " + " | ".join([cell(row.label), *map(cell, row.display)]) + " |")
    return "\n".join(lines) + "\n"


def _evaluate(
    request: Request, session: Any, settings: Any
) -> tuple[CompareOut | None, CompareQuery | None, list[str], dict[str, str], list[Notice]]:
    raw = raw_query(request)
    notices: list[Notice] = []
    known = {slug for slug, _ in filter_options(session).builds}
    slugs = requested_slugs(request)
    unknown = [s for s in slugs if s not in known]
    for slug in unknown:
        notices.append(Notice(f"builds: unknown build '{slug[:80]}' was left out", field="builds"))
    slugs = [s for s in slugs if s in known]
    if len(slugs) > MAX_COMPARE:
        notices.append(
            Notice(f"builds: at most {MAX_COMPARE} builds side by side; the first "
                   f"{MAX_COMPARE} are shown", field="builds")
        )
        slugs = slugs[:MAX_COMPARE]
    if len(slugs) < MIN_COMPARE:
        if slugs or unknown:
            notices.append(
                Notice(f"Pick {MIN_COMPARE - len(slugs)} more build"
                       f"{'' if MIN_COMPARE - len(slugs) == 1 else 's'} to compare.", level="info")
            )
        return None, None, slugs, raw, notices
    parsed = parse_query(CompareQuery, {**raw, "builds": ",".join(slugs)})
    notices += parsed.notices
    query = parsed.query
    try:
        comparison = compare_builds(session, query=query, costs=cost_assumptions(settings))
    except DomainError as error:
        notices += notices_from(error.errors) or [Notice(error.detail)]
        query = query.model_copy(update={"model": None})
        comparison = compare_builds(session, query=query, costs=cost_assumptions(settings))
    return comparison, query, slugs, raw, notices


def _state(query: CompareQuery | None, slugs: list[str]) -> dict[str, Any]:
    state: dict[str, Any] = {"builds": ",".join(slugs) or None}
    if query is not None:
        fields = CompareQuery.model_fields
        for key in ("model", "precision", "context_tokens", "batch"):
            value = getattr(query, key)
            if value != fields[key].default:
                state[key] = value
    return state


def _story_model_name(comparison: CompareOut | None, models: Iterable[tuple[str, str]]) -> str:
    """What the model select's empty choice judges on: the service's pick when no model was
    given, else the story model by name (the largest-model fallback only applies without it)."""
    if comparison and comparison.model and not comparison.model.given:
        return comparison.model.name
    return dict(models).get(STORY_MODEL, "the largest catalog model")


@router.get("/compare", response_class=HTMLResponse)
def compare_page(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    """Builds side by side, differences highlighted, shareable and copyable as Markdown."""
    comparison, query, slugs, raw, notices = _evaluate(request, session, settings)
    state = _state(query, slugs)
    options = filter_options(session)
    names = dict(options.builds)
    remove_links = [
        (s, with_query("/compare", {**state, "builds": ",".join(x for x in slugs if x != s)}))
        for s in slugs
    ]
    json_url = with_query("/api/v1/compare", state) if comparison else "/api/v1/builds"
    sections = _serving_sections(session, settings, comparison, query, raw)
    serving_state = {**state, **limits_of(raw)}
    return render(
        request,
        session,
        "compare/page.html",
        {
            "comparison": comparison,
            "query": query,
            "slugs": slugs,
            "chosen": [(s, names.get(s, s)) for s in slugs],
            "raw": raw,
            "state": state,
            "options": options,
            "addable": [(s, n) for s, n in options.builds if s not in slugs],
            "can_add": len(slugs) < MAX_COMPARE,
            "remove_links": remove_links,
            "markdown": markdown_table(comparison) if comparison else "",
            "markdown_url": with_query("/compare.md", state),
            "precisions": precision_options(),
            "runtimes": RUNTIME_OPTIONS,
            "parallelism": PARALLELISM,
            "notices": notices,
            "min_compare": MIN_COMPARE,
            "story_model": STORY_MODEL,
            "story_model_name": _story_model_name(comparison, options.models),
            "max_compare": MAX_COMPARE,
            "serving": sections,
            "serving_limits": limits_of(raw),
            "serving_chart_url": with_query("/compare/serving.svg", serving_state)
            if any(s.answer and s.answer.curve for s in sections)
            else None,
            "serving_json_url": with_query("/compare/serving.json", serving_state),
        },
        json_url=json_url,
        canonical=with_query("/compare", state),
    )


@router.get("/compare.md")
def compare_markdown(request: Request, session: SessionDep, settings: SettingsDep) -> Response:
    """The comparison as a Markdown table (the no-JavaScript "copy as Markdown")."""
    comparison, _query, _slugs, _raw, notices = _evaluate(request, session, settings)
    if comparison is None:
        text = "\n".join(n.message for n in notices)
        text = text or f"Give {MIN_COMPARE} to {MAX_COMPARE} builds."
        return Response(text + "\n", status_code=422, media_type="text/plain; charset=utf-8")
    return Response(markdown_table(comparison), media_type="text/markdown; charset=utf-8")


def _serving_sections(
    session: Any,
    settings: Any,
    comparison: CompareOut | None,
    query: CompareQuery | None,
    raw: dict[str, str],
) -> list[ServingSection]:
    """Each compared build's serving curve for the model the user chose (none without one)."""
    if comparison is None or comparison.model is None or query is None or query.model is None:
        return []
    model = comparison.model.slug
    return [
        serving_section(session, settings, raw, build=b.slug, model=model,
                        precision=query.precision)
        for b in comparison.builds
    ]


@router.get("/compare/serving.svg")
def compare_serving_chart(
    request: Request, session: SessionDep, settings: SettingsDep
) -> Response:
    """The compared builds' serving curves on one chart, one line per build, as SVG."""
    comparison, query, _slugs, raw, _notices = _evaluate(request, session, settings)
    sections = _serving_sections(session, settings, comparison, query, raw)
    if not any(s.answer and s.answer.curve for s in sections):
        return Response("no serving curve for this comparison (choose a model)",
                        status_code=422, media_type="text/plain")
    svg = compare_chart_svg(sections, with_query("", sorted(raw.items())), session)
    return Response(svg, media_type="image/svg+xml", headers=SVG_HEADERS)


@router.get("/compare/serving.json")
def compare_serving_json(
    request: Request, session: SessionDep, settings: SettingsDep
) -> Response:
    """Compare's serving section as JSON: each build's POST /api/v1/serving answer."""
    comparison, query, _slugs, raw, notices = _evaluate(request, session, settings)
    sections = _serving_sections(session, settings, comparison, query, raw)
    if not sections:
        reasons = [n.message for n in notices] or ["give 2 to 6 builds and a model"]
        error = InvalidInput("; ".join(reasons))
        return JSONResponse(error.problem(instance=request.url.path), status_code=422,
                            media_type=PROBLEM_JSON)
    return JSONResponse(
        {
            "builds": [
                {
                    "build": s.query["build"],
                    "serving_url": with_query("/serving", s.query),
                    "answer": s.answer.model_dump(mode="json") if s.answer else None,
                    "errors": [n.message for n in s.notices],
                }
                for s in sections
            ]
        }
    )
