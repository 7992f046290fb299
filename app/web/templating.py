"""Jinja2 environment for the pages: autoescape on, number and unit formatting as filters.

Templates never do arithmetic: every figure reaches them as a number and leaves through one of
these filters, so units and rounding are the same on every page.
"""

import math
from collections.abc import Callable
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates

from app.web.glossary import TERMS_BY_KEY

DASH = "—"


def _missing(value: Any) -> bool:
    if value is None:
        return True
    return isinstance(value, float) and (math.isnan(value) or math.isinf(value))


def int_commas(value: Any) -> str:
    """1234567 -> "1,234,567"."""
    if _missing(value):
        return DASH
    return f"{round(float(value)):,}"


def number(value: Any, digits: int = 3) -> str:
    """A figure with about `digits` significant digits and thousands separators."""
    if _missing(value):
        return DASH
    x = float(value)
    if x == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - magnitude)
    text = f"{x:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def gb(value: Any) -> str:
    """Gigabytes (1e9 bytes): "96 GB", "2,256 GB", "0.52 GB"."""
    if _missing(value):
        return DASH
    x = float(value)
    if abs(x) >= 100:
        return f"{int_commas(x)} GB"
    return f"{number(x, 3)} GB"


def tb(value: Any) -> str:
    """Terabytes: "1.2 TB"."""
    return DASH if _missing(value) else f"{number(value, 3)} TB"


def usd(value: Any) -> str:
    """US dollars: "$1,599", "$2.41", "$0.0032" (small amounts keep two significant digits)."""
    if _missing(value):
        return DASH
    x = float(value)
    sign = "-" if x < 0 else ""
    x = abs(x)
    if x >= 100:
        return f"{sign}${round(x):,}"
    if x >= 1 or x == 0:
        return f"{sign}${x:,.2f}"
    return f"{sign}${number(x, 2)}"


def tps(value: Any) -> str:
    """Tokens per second: "41.3 tokens/s"."""
    if _missing(value):
        return DASH
    return f"{number(value, 3)} tokens/s"


def gbs(value: Any) -> str:
    """Gigabytes per second."""
    return DASH if _missing(value) else f"{number(value, 3)} GB/s"


def gbps(value: Any) -> str:
    """Gigabits per second (network links are quoted in bits)."""
    return DASH if _missing(value) else f"{number(value, 3)} Gb/s"


def watts(value: Any) -> str:
    """Power: "1,050 W", "10.2 kW"."""
    if _missing(value):
        return DASH
    x = float(value)
    if x >= 10_000:
        return f"{number(x / 1000, 3)} kW"
    return f"{int_commas(x)} W"


def params(value: Any) -> str:
    """Parameter counts: "671B", "8.03B", "560M"."""
    if _missing(value):
        return DASH
    x = float(value)
    if x >= 1e12:
        return f"{number(x / 1e12, 3)}T"
    if x >= 1e9:
        return f"{number(x / 1e9, 3)}B"
    if x >= 1e6:
        return f"{number(x / 1e6, 3)}M"
    return int_commas(x)


def bytes_si(value: Any) -> str:
    """Bytes with SI prefixes: "160 kB", "1.3 MB"."""
    if _missing(value):
        return DASH
    x = float(value)
    for factor, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(x) >= factor:
            return f"{number(x / factor, 3)} {unit}"
    return f"{number(x, 3)} B"


def seconds(value: Any) -> str:
    """Durations: "35 ms", "1.2 s", "3.5 h"."""
    if _missing(value):
        return DASH
    x = float(value)
    if x < 1:
        return f"{number(x * 1000, 3)} ms"
    if x < 120:
        return f"{number(x, 3)} s"
    if x < 7200:
        return f"{number(x / 60, 3)} min"
    if x < 172_800:
        return f"{number(x / 3600, 3)} h"
    return f"{number(x / 86_400, 3)} days"


def microseconds(value: Any) -> str:
    """Latency in microseconds: "1.5 µs"."""
    return DASH if _missing(value) else f"{number(value, 3)} µs"


def hours(value: Any) -> str:
    """Hours, shown in the most readable unit."""
    return DASH if _missing(value) else seconds(float(value) * 3600)


def joules(value: Any) -> str:
    """Energy per token: "0.42 J"."""
    return DASH if _missing(value) else f"{number(value, 3)} J"


def percent(value: Any, digits: int = 3) -> str:
    """A fraction as a percentage: 0.125 -> "12.5 %"."""
    return DASH if _missing(value) else f"{number(float(value) * 100, digits)} %"


def tokens(value: Any) -> str:
    """Token counts: "131,072 tokens"."""
    return DASH if _missing(value) else f"{int_commas(value)} tokens"


def iso_date(value: Any) -> str:
    """A date as YYYY-MM-DD."""
    if value is None:
        return DASH
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def yes_no(value: Any) -> str:
    """Booleans in words."""
    if value is None:
        return DASH
    return "yes" if value else "no"


def humanize(value: Any) -> str:
    """Identifiers in words: "memory_bandwidth" -> "memory bandwidth"."""
    if value is None:
        return DASH
    return str(value).replace("_", " ")


LINK_NAMES = {
    "pcie": "PCIe",
    "nvlink": "NVLink",
    "nvswitch": "NVSwitch",
    "infinity_fabric": "Infinity Fabric",
    "unified": "unified memory",
    "none": "none",
    "infiniband": "InfiniBand",
    "ethernet": "Ethernet",
}

TIER_NAMES = {"desktop": "Desktop", "dgx": "DGX-class server", "cluster": "Cluster"}


def link_name(value: Any) -> str:
    """Link kinds as vendors spell them."""
    if value is None:
        return DASH
    return LINK_NAMES.get(str(value), str(value))


def tier_name(value: Any) -> str:
    """Tier keys in words."""
    if value is None:
        return DASH
    return TIER_NAMES.get(str(value), str(value))


def query_url(path: str, params: dict[str, Any] | None = None, **changes: Any) -> str:
    """`path` with `params` updated by `changes` (None drops a key) as a query string."""
    merged: dict[str, Any] = dict(params or {})
    for key, value in changes.items():
        merged[key] = value
    from app.web.common import query_string  # late: common imports this module

    query = query_string(merged)
    return f"{path}?{query}" if query else path


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
    return templates


def get_templates(request: Request) -> Jinja2Templates:
    """The Jinja2 environment for the app's templates directory (one per directory)."""
    directory: Path = request.app.state.settings.templates_dir
    return _templates_for(str(directory))
