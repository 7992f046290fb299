"""What every chart shares: the matplotlib setup, colours, caches and the SVG document."""

import io
import math
from collections.abc import Callable, Hashable
from typing import Any

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402  (the backend must be chosen first)
from matplotlib.ticker import FuncFormatter  # noqa: E402

from app.caching import CatalogCache, Snapshot, ValueCache  # noqa: E402

# Small caches of their own: SVGs are tens of kB each, too big for the shared 20,000 entries.
CHART_CACHE = CatalogCache(max_entries=256)
SVG_BY_DATA = ValueCache(max_entries=256)

TIER_COLOURS = {"desktop": "#2f7d5b", "dgx": "#1f56c9", "cluster": "#7a3fb0"}
TIER_LABELS = {"desktop": "Desktop", "dgx": "DGX-class server", "cluster": "Cluster"}
COMPONENT_COLOURS = {
    "weights_gb": "#1f56c9",
    "kv_cache_gb": "#2f9e8f",
    "activations_gb": "#e3a21a",
    "overhead_gb": "#8a94a6",
    "optimizer_gb": "#b5452b",
    "gradients_gb": "#7a3fb0",
}
COMPONENT_LABELS = {
    "weights_gb": "Weights",
    "kv_cache_gb": "KV cache",
    "activations_gb": "Activations",
    "overhead_gb": "Runtime overhead",
    "optimizer_gb": "Optimizer state",
    "gradients_gb": "Gradients",
}
INK = "#16191d"
MUTED = "#545d69"
GRID = "#d5dbe3"

RC: dict[Any, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "tierline",
    "font.family": "sans-serif",
    "font.size": 10,
    "axes.edgecolor": GRID,
    "axes.labelcolor": INK,
    "xtick.color": MUTED,
    "ytick.color": MUTED,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def cached_chart(snap: Snapshot, key: Hashable, draw: Callable[[], str]) -> str:
    """The SVG cached for this catalog version and key, drawn on a miss (and `draw` itself is
    cheap when the chart's data did not change: see the module docstring)."""
    return CHART_CACHE.get(snap.database, snap.version, key, draw)


def svg_document(fig: Figure) -> str:
    """The figure as an SVG document, byte-identical for the same figures."""
    buffer = io.StringIO()
    # No date metadata: the same figures give byte-identical SVGs (cacheable, testable).
    fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return buffer.getvalue()


def figure(width_in: float, height_in: float) -> Figure:
    """A new figure in the site's style, laid out by matplotlib's constrained layout."""
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(width_in, height_in), layout="constrained")
    return fig


def plain_ticks(ax: Any, axis: str, label: Callable[[float, Any], str]) -> None:
    """Ticks of one axis in plain words ("2,000", "$20k"). On a log axis matplotlib labels minor
    ticks in scientific notation ("2×10³") when the axis spans little more than a decade; here
    those minor ticks at 2 and 5 × 10ⁿ get plain labels instead, and none on wider axes (where
    the major ticks suffice and minor labels would collide)."""
    target = ax.xaxis if axis == "x" else ax.yaxis

    def minor(value: float, pos: Any = None) -> str:
        low, high = sorted(target.get_view_interval())
        if value <= 0 or low <= 0 or high / low > 30:
            return ""
        leading = round(value / 10 ** math.floor(math.log10(value)), 6)
        return label(value, pos) if leading in (2.0, 5.0) else ""

    target.set_major_formatter(FuncFormatter(label))
    target.set_minor_formatter(FuncFormatter(minor))


# A phone shows a chart about 360 CSS px wide: a narrow, tall figure with larger text stays
# legible there, where the laptop figure would shrink its labels to ~5 px.
PHONE_RC: dict[Any, Any] = {**RC, "font.size": 11}


# matplotlib writes style attributes; an SVG opened on its own is a document under the site's
# CSP, so chart responses carry their own policy: inline styles, nothing else (no scripts).
SVG_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    "Cache-Control": "public, max-age=300",
}


SERIES_COLOURS = ("#1f56c9", "#b5452b", "#2f7d5b", "#7a3fb0", "#e3a21a", "#2f9e8f", "#545d69")


ACCURACY_COLOURS = ("#1f56c9", "#2f7d5b", "#e3a21a", "#7a3fb0", "#b5452b", "#2f9e8f")
