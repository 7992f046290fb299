"""Reference pages: the glossary, "About the numbers" and the engine documentation."""

import re
from dataclasses import asdict
from functools import lru_cache
from pathlib import Path

import markdown
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from app.deps import SessionDep, SettingsDep
from app.errors import NotFound
from app.web.common import render
from app.web.glossary import TERMS
from app.web.pages import catalog_provenance

router = APIRouter(include_in_schema=False)

ENGINE_DOC = "engine.md"
_ACCURACY_HEADING = re.compile(r"^(#{1,6})\s+.*accuracy", re.IGNORECASE | re.MULTILINE)


_HEADING_OR_TABLE = re.compile(r"<h[1-6][^>]*>(.*?)</h[1-6]>|<table>", re.DOTALL)
_TAGS = re.compile(r"<[^>]+>")


def _accessible_tables(html: str) -> str:
    """Give the Markdown tables what every table on the site has: a caption (the section's
    heading), scoped header cells and a horizontal scroller for narrow screens."""
    out: list[str] = []
    position = 0
    heading = "Table"
    counts: dict[str, int] = {}
    for match in _HEADING_OR_TABLE.finditer(html):
        out.append(html[position:match.start()])
        position = match.end()
        if match.group(0) != "<table>":
            heading = _TAGS.sub("", match.group(1)).strip() or "Table"
            out.append(match.group(0))
            continue
        counts[heading] = counts.get(heading, 0) + 1
        suffix = f" (table {counts[heading]})" if counts[heading] > 1 else ""
        out.append(
            '<div class="table-scroll" tabindex="0" role="region">'
            f"<table><caption>{heading}{suffix}</caption>"
        )
    out.append(html[position:])
    result = "".join(out).replace("</table>", "</table></div>")
    return re.sub(r"<th(?=[ >])(?![^>]*scope=)", '<th scope="col"', result)


def _render_markdown(text: str) -> str:
    # docs/ is part of the repository (trusted); tables and fenced code are used there.
    html = markdown.markdown(
        text, extensions=["tables", "fenced_code", "toc", "sane_lists"], output_format="html"
    )
    return _accessible_tables(html)


@lru_cache(maxsize=4)
def _doc_cached(path: str, mtime_ns: int) -> tuple[str, str, str]:
    text = Path(path).read_text(encoding="utf-8")
    accuracy = accuracy_section(text)
    return text, _render_markdown(text), _render_markdown(accuracy) if accuracy else ""


def load_engine_doc(docs_dir: Path) -> tuple[str, str, str] | None:
    """docs/engine.md as (markdown, html, accuracy-section html), re-read when it changes."""
    path = docs_dir / ENGINE_DOC
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return None
    return _doc_cached(str(path), mtime)


def accuracy_section(text: str) -> str:
    """The markdown of the first section whose heading mentions accuracy, up to the next
    heading of the same or a higher level."""
    match = _ACCURACY_HEADING.search(text)
    if match is None:
        return ""
    level = len(match.group(1))
    rest = text[match.end():]
    end = re.search(rf"^#{{1,{level}}}\s", rest, re.MULTILINE)
    body = rest[: end.start()] if end else rest
    return ("#" * max(level, 2)) + " Accuracy" + body.rstrip() + "\n"


@router.get("/glossary", response_class=HTMLResponse)
def glossary_page(request: Request, session: SessionDep) -> HTMLResponse:
    """Terms the pages use: links, parallelism, KV cache."""
    return render(
        request, session, "pages/glossary.html", {"terms": TERMS}, json_url="/glossary.json"
    )


@router.get("/glossary.json")
def glossary_json() -> JSONResponse:
    """The glossary as data."""
    return JSONResponse({"terms": [asdict(t) for t in TERMS]})


@router.get("/about", response_class=HTMLResponse)
def about_page(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    """How the numbers are made and how accurate they are."""
    doc = load_engine_doc(settings.docs_dir)
    return render(
        request,
        session,
        "pages/about.html",
        {
            "accuracy_html": doc[2] if doc else "",
            "has_engine_doc": doc is not None,
            "settings": settings,
        },
        json_url="/about.json",
    )


@router.get("/about.json")
def about_json(session: SessionDep, settings: SettingsDep) -> JSONResponse:
    """Provenance, cost defaults and the accuracy section of docs/engine.md as data."""
    provenance = catalog_provenance(session)
    doc = load_engine_doc(settings.docs_dir)
    return JSONResponse(
        {
            "catalog_version": provenance.catalog_version,
            "latest_as_of": provenance.latest_as_of.isoformat()
            if provenance.latest_as_of
            else None,
            "counts": {
                "builds": provenance.builds,
                "accelerators": provenance.accelerators,
                "models": provenance.models,
            },
            "cost_defaults": {
                "amortization_years": settings.amortization_years,
                "electricity_usd_per_kwh": settings.electricity_usd_per_kwh,
                "pue": settings.pue,
            },
            "engine_doc": "/about/engine",
            "accuracy_markdown": accuracy_section(doc[0]) if doc else None,
        }
    )


@router.get("/about/engine", response_class=HTMLResponse)
def engine_doc_page(request: Request, session: SessionDep, settings: SettingsDep) -> HTMLResponse:
    """docs/engine.md rendered: every formula, constant and source."""
    doc = load_engine_doc(settings.docs_dir)
    return render(
        request,
        session,
        "pages/engine_doc.html",
        {"doc_html": doc[1] if doc else ""},
        json_url="/about.json",
    )


@router.get("/about/engine.md")
def engine_doc_markdown(settings: SettingsDep) -> Response:
    """docs/engine.md as plain markdown text."""
    doc = load_engine_doc(settings.docs_dir)
    if doc is None:
        raise NotFound("docs/engine.md is not available")
    return Response(doc[0], media_type="text/markdown; charset=utf-8")
