"""Jinja2 environment for the pages: autoescape on, number and unit formatting as filters.

Templates never do arithmetic: every figure reaches them as a number and leaves through one of
these filters, so units and rounding are the same on every page. The filters are the functions
of app.formatting (one formatting module for pages, charts and Markdown).
"""

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates

from app.formatting import (
    DASH,
    bytes_si,
    gb,
    gbps,
    gbs,
    hours,
    humanize,
    int_commas,
    iso_date,
    joules,
    link_name,
    microseconds,
    number,
    params,
    percent,
    precision_label,
    seconds,
    tb,
    tier_name,
    tokens,
    tps,
    usd,
    vendor_gb,
    vendor_gb_in_bytes,
    watts,
    yes_no,
)
from app.services.audit import field_changes
from app.web.glossary import TERMS_BY_KEY
from app.web.urls import query_url

# Units of measurement metrics (app.models.measurement.METRIC_UNITS), as shown after a figure.
_METRIC_FORMATS: dict[str, Callable[[Any], str]] = {
    "tokens/s": lambda v: f"{number(v, 3)} tokens/s",
    "s": lambda v: f"{number(v, 3)} s",
    "ms": lambda v: f"{number(v, 3)} ms",
}


def metric_value(value: Any, unit: str) -> str:
    """A measured or predicted figure in its unit; fit facts as words ("ran" / "out of memory")."""
    if value is None:
        return DASH
    if isinstance(value, bool) or unit == "bool":
        return "out of memory" if value else "ran"
    return str(_METRIC_FORMATS.get(unit, lambda v: number(v, 3))(value))


FILTERS: dict[str, Callable[..., str]] = {
    "int_commas": int_commas,
    "number": number,
    "gb": gb,
    "vendor_gb": vendor_gb,
    "vendor_gb_in_bytes": vendor_gb_in_bytes,
    "tb": tb,
    "usd": usd,
    "tps": tps,
    "gbs": gbs,
    "gbps": gbps,
    "watts": watts,
    "params": params,
    "bytes_si": bytes_si,
    "seconds": seconds,
    "hours": hours,
    "microseconds": microseconds,
    "joules": joules,
    "percent": percent,
    "tokens": tokens,
    "iso_date": iso_date,
    "yes_no": yes_no,
    "humanize": humanize,
    "link_name": link_name,
    "tier_name": tier_name,
    "precision_label": precision_label,
    "metric_value": metric_value,
}


def zip_pairs(values: Any) -> list[tuple[Any, Any]]:
    """[a, b] -> [(a, a), (b, b)]: option lists whose value and label are the same."""
    return [(v, v) for v in values]


def fmt(value: Any, name: str) -> str:
    """Format with a filter chosen by name (spec sheets list their unit per row)."""
    if name == "text":
        return DASH if value is None or value == "" else str(value)
    return str(FILTERS[name](value))


@lru_cache(maxsize=8)
def _templates_for(directory: str) -> Jinja2Templates:
    templates = Jinja2Templates(directory=directory)
    env = templates.env
    # Jinja2Templates turns autoescape on for .html; say it explicitly so no one turns it off.
    env.autoescape = True
    env.trim_blocks = True
    env.lstrip_blocks = True
    env.filters.update(FILTERS)
    env.filters["zip_pairs"] = zip_pairs
    env.globals["query_url"] = query_url
    env.globals["fmt"] = fmt
    env.globals["glossary"] = TERMS_BY_KEY
    env.globals["field_changes"] = field_changes
    return templates


def get_templates(request: Request) -> Jinja2Templates:
    """The Jinja2 environment for the app's templates directory (one per directory)."""
    directory: Path = request.app.state.settings.templates_dir
    return _templates_for(str(directory))
