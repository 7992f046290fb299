"""One place for how tierline writes numbers and units: pages, charts, Markdown and CSV notes.

Every function takes a plain value (int, float, None, NaN) and returns text; a missing or
non-finite value is an em dash. The Jinja filters of the pages are these functions
(app/web/templating.py registers them by name), the chart axes use `axis_*`, and any other
text output (compare's Markdown, say) should call the same functions, so 12.3 GB and $2.41
read the same everywhere.

Public API: DASH, number, int_commas, gb, vendor_gb, vendor_gb_in_bytes, tb, usd, tps, gbs,
gbps, watts, params, bytes_si, seconds, microseconds, hours, joules, percent, tokens, iso_date,
yes_no, humanize, link_name, tier_name, precision_label, axis_number, axis_gb, axis_usd.
Stdlib only, so services, the CLI and the web layer can all import it.
"""

import math
from datetime import date, datetime
from typing import Any

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


# Vendors label memory capacities in binary units: a "24 GB" card holds 24 GiB.
BYTES_PER_VENDOR_GB = 2**30


def vendor_gb(value: Any) -> str:
    """A capacity as the vendor labels it (binary GB, i.e. GiB): "96 GB (vendor)"."""
    return DASH if _missing(value) else f"{gb(value)} (vendor)"


def vendor_gb_in_bytes(value: Any) -> str:
    """A vendor-labelled capacity in GB of 10⁹ bytes, the unit of every engine figure: 96 ->
    "103 GB"."""
    return DASH if _missing(value) else gb(float(value) * BYTES_PER_VENDOR_GB / 1e9)


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


def precision_label(value: Any) -> str:
    """Precisions as people write them: "fp8" -> "FP8", "q4_k_m" -> "Q4_K_M"."""
    if value is None or value == "":
        return DASH
    return str(value).upper()


def axis_number(value: float, _pos: Any = None) -> str:
    """A chart tick as a plain number: 2000 -> "2,000", 0.5 -> "0.5" (never "2×10³")."""
    if _missing(value):
        return ""
    return number(value, 3)


def axis_gb(value: float, _pos: Any = None) -> str:
    """A memory tick: "500 GB", "2 TB"."""
    if _missing(value):
        return ""
    if abs(value) >= 1000:
        return f"{number(value / 1000, 3)} TB"
    return f"{number(value, 3)} GB"


def axis_usd(value: float, _pos: Any = None) -> str:
    """A price tick: "$500", "$20k", "$1.5M"."""
    if _missing(value):
        return ""
    if abs(value) >= 1e6:
        return f"${number(value / 1e6, 3)}M"
    if abs(value) >= 1e3:
        return f"${number(value / 1e3, 3)}k"
    return f"${number(value, 3)}"
