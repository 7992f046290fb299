"""Server-rendered SVG charts (matplotlib, Agg backend), cached by their plotted data.

Each function takes plain numbers (what the services already return) and gives back an SVG
document; pages embed them with <img> and an alt text, next to a table holding the same
figures (the text alternative). Text stays text in the SVG (svg.fonttype = none).

Drawing a chart takes 100-500 ms, so two caches sit in front of matplotlib: `cached_chart`
per catalog version and request (no recomputation of the chart's inputs on a hit), and, under
it, each *_svg function's own cache keyed by the data it plots. A catalog edit that does not
move a chart's points (a build's notes, say) therefore costs recomputing the points, not a
redraw.
"""

import io
import json
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
from matplotlib.layout_engine import ConstrainedLayoutEngine

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402  (the backend must be chosen first)
from matplotlib.ticker import FuncFormatter  # noqa: E402

from app.caching import CatalogCache, Snapshot, ValueCache  # noqa: E402
from app.formatting import axis_gb, axis_number, axis_usd  # noqa: E402

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

_RC: dict[Any, Any] = {
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


def _svg(fig: Figure) -> str:
    buffer = io.StringIO()
    # No date metadata: the same figures give byte-identical SVGs (cacheable, testable).
    fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return buffer.getvalue()


def _figure(width_in: float, height_in: float) -> Figure:
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(width_in, height_in), layout="constrained")
    return fig


def _plain_ticks(ax: Any, axis: str, label: Callable[[float, Any], str]) -> None:
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


@dataclass(frozen=True)
class TierPoint:
    """One build on the tier line: its price and memory, and the largest model it runs."""

    name: str
    tier: str
    price_usd: float
    memory_gb: float
    largest_model: str | None
    largest_model_gb: float | None


# A phone shows a chart about 360 CSS px wide: a narrow, tall figure with larger text stays
# legible there, where the laptop figure would shrink its labels to ~5 px.
PHONE_RC: dict[Any, Any] = {**_RC, "font.size": 11}


def tier_line_svg(points: Sequence[TierPoint], *, story_need_gb: float | None = None,
                  story_label: str | None = None, phone: bool = False) -> str:
    """The tier line as three bands (desktop, DGX, cluster), one above the other, sharing
    log-scale axes: accelerator memory against price, and a tick per build at the size of the
    largest model it runs. Tiers overlap in price, so each gets its own band. `phone` draws
    the narrow variant (same data, larger text)."""
    key = ("tier_line", tuple(points), story_need_gb, story_label, phone)
    return SVG_BY_DATA.get(
        key,
        lambda: _tier_line_svg(points, story_need_gb=story_need_gb, story_label=story_label,
                               phone=phone),
    )


def _tier_line_svg(points: Sequence[TierPoint], *, story_need_gb: float | None,
                   story_label: str | None, phone: bool = False) -> str:
    tiers = ("desktop", "dgx", "cluster")
    priced = [p for p in points if p.price_usd > 0 and p.memory_gb > 0]
    small = 10 if phone else 8.5
    with matplotlib.rc_context(PHONE_RC if phone else _RC):
        fig = _figure(4.6, 8.0) if phone else _figure(9.0, 7.0)
        axes = fig.subplots(len(tiers), 1, sharex=True, sharey=True)
        layout = fig.get_layout_engine()
        if isinstance(layout, ConstrainedLayoutEngine):
            layout.set(hspace=0.0, h_pad=0.02)
        for ax, tier in zip(axes, tiers, strict=True):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_facecolor(TIER_COLOURS[tier] + "10")
            tier_points = [p for p in priced if p.tier == tier]
            runs = [p for p in tier_points if p.largest_model_gb]
            for p in runs:
                ax.plot([p.price_usd, p.price_usd], [p.largest_model_gb, p.memory_gb],
                        color=TIER_COLOURS[tier], alpha=0.35, linewidth=1, zorder=2)
            ax.scatter([p.price_usd for p in runs], [p.largest_model_gb for p in runs],
                       s=60, marker="_", color=TIER_COLOURS[tier], linewidth=2.2, zorder=3)
            ax.scatter([p.price_usd for p in tier_points], [p.memory_gb for p in tier_points],
                       s=46, color=TIER_COLOURS[tier], zorder=3, edgecolor="white",
                       linewidth=0.8)
            ax.text(0.01, 0.93, f"{TIER_LABELS[tier]} · {len(tier_points)} priced builds",
                    transform=ax.transAxes, ha="left", va="top", fontsize=11 if phone else 10,
                    fontweight="bold", color=TIER_COLOURS[tier])
            if story_need_gb:
                ax.axhline(story_need_gb, color="#a8231a", linestyle="--", linewidth=1.1,
                           zorder=1)
            ax.grid(True, which="major", color=GRID, linewidth=0.6)
            _plain_ticks(ax, "y", axis_gb)
        if story_need_gb:
            axes[0].text(0.99, story_need_gb, f"{story_label or axis_gb(story_need_gb)} ",
                         transform=axes[0].get_yaxis_transform(), ha="right", va="bottom",
                         fontsize=small, color="#a8231a")
        _plain_ticks(axes[-1], "x", axis_usd)
        axes[-1].set_xlabel("Build price (USD, log scale)")
        axes[1].set_ylabel("Accelerator memory (log scale)")
        axes[-1].scatter([], [], s=46, color=MUTED, label="total accelerator memory")
        axes[-1].scatter([], [], s=60, marker="_", color=MUTED, linewidth=2.2,
                         label="largest runnable catalog model (rule-of-thumb size)")
        if phone:
            # No room inside the bands: the legend goes under the axis, one entry per line.
            axes[-1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.32), fontsize=small,
                            frameon=False)
            axes[-1].set_xlabel("Build price (USD, log)")
            axes[1].set_ylabel("Accelerator memory (log)")
        else:
            axes[-1].legend(loc="lower right", fontsize=small, frameon=False)
        return _svg(fig)


def memory_breakdown_svg(memory: dict[str, Any], *, accelerators_used: int) -> str:
    """Two bars: the model replica's memory by component against the build's usable memory,
    and the fullest accelerator against one accelerator's usable memory (fit is judged here)."""
    key = ("memory", json.dumps(memory, sort_keys=True, default=str), accelerators_used)
    return SVG_BY_DATA.get(
        key, lambda: _memory_breakdown_svg(memory, accelerators_used=accelerators_used)
    )


def _memory_breakdown_svg(memory: dict[str, Any], *, accelerators_used: int) -> str:
    with matplotlib.rc_context(_RC):
        fig = _figure(8.0, 3.6)
        ax_total, ax_one = fig.subplots(2, 1)
        left = 0.0
        for key, colour in COMPONENT_COLOURS.items():
            value = float(memory.get(key) or 0.0)
            if value <= 0:
                continue
            ax_total.barh(0, value, left=left, color=colour, height=0.5,
                          label=f"{COMPONENT_LABELS[key]} {axis_gb(round(value, 1))}")
            left += value
        available_total = float(memory.get("available_total_gb") or 0.0)
        rule = float(memory.get("rule_of_thumb_gb") or 0.0)
        ax_total.axvline(available_total, color=INK, linewidth=1.6)
        ax_total.text(available_total, 0.5,
                      f" usable on the build: {axis_gb(round(available_total))}",
                      fontsize=8.5, color=INK, va="center")
        if rule > 0:
            ax_total.axvline(rule, color="#a8231a", linestyle="--", linewidth=1.2)
            ax_total.text(rule, -0.5, f" rule of thumb {axis_gb(round(rule))}", fontsize=8.5,
                          color="#a8231a", va="center")
        ax_total.set_yticks([0], ["Whole model"])
        ax_total.set_ylim(-0.75, 0.75)
        ax_total.set_xlim(0, max(left, available_total, rule) * 1.45 or 1)
        ax_total.xaxis.set_major_formatter(FuncFormatter(axis_gb))
        ax_total.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncols=3, fontsize=8,
                        frameon=False)

        need_one = float(memory.get("per_accelerator_gb") or 0.0)
        have_one = float(memory.get("available_per_accelerator_gb") or 0.0)
        fits = need_one <= have_one
        ax_one.barh(0, need_one, color="#136c34" if fits else "#a8231a", height=0.5)
        ax_one.axvline(have_one, color=INK, linewidth=1.6)
        ax_one.text(have_one, 0.5, f" usable per accelerator: {axis_gb(round(have_one, 1))}",
                    fontsize=8.5, color=INK, va="center")
        verdict = "fits" if fits else "does not fit"
        ax_one.text(need_one, -0.5,
                    f" {axis_gb(round(need_one, 1))} on the fullest of {accelerators_used}:"
                    f" {verdict}", fontsize=8.5, color=INK, va="center")
        ax_one.set_yticks([0], ["Fullest accelerator"])
        ax_one.set_ylim(-0.75, 0.75)
        ax_one.set_xlim(0, max(need_one, have_one) * 1.6 or 1)
        ax_one.xaxis.set_major_formatter(FuncFormatter(axis_gb))
        for ax in (ax_total, ax_one):
            ax.grid(True, axis="x", color=GRID, linewidth=0.6)
            ax.set_axisbelow(True)
        return _svg(fig)


@dataclass(frozen=True)
class CostSpeedPoint:
    """One build on the recommend chart."""

    name: str
    tier: str
    price_usd: float
    decode_tokens_per_s: float
    pareto: bool


def cost_speed_svg(points: Sequence[CostSpeedPoint]) -> str:
    """Price (log) against decode speed per sequence; the Pareto front joined by a line."""
    return SVG_BY_DATA.get(("cost_speed", tuple(points)), lambda: _cost_speed_svg(points))


def _cost_speed_svg(points: Sequence[CostSpeedPoint]) -> str:
    with matplotlib.rc_context(_RC):
        fig = _figure(8.5, 4.6)
        ax = fig.add_subplot()
        ax.set_xscale("log")
        usable = [p for p in points if p.price_usd > 0 and p.decode_tokens_per_s > 0]
        for tier in ("desktop", "dgx", "cluster"):
            tier_points = [p for p in usable if p.tier == tier]
            if not tier_points:
                continue
            ax.scatter([p.price_usd for p in tier_points],
                       [p.decode_tokens_per_s for p in tier_points],
                       s=40, color=TIER_COLOURS[tier], label=TIER_LABELS[tier], zorder=3,
                       edgecolor="white", linewidth=0.8)
        front = sorted((p for p in usable if p.pareto), key=lambda p: p.price_usd)
        if front:
            ax.plot([p.price_usd for p in front], [p.decode_tokens_per_s for p in front],
                    color=INK, linewidth=1.3, linestyle="-", marker="o", markersize=9,
                    markerfacecolor="none", label="Pareto front (no build cheaper and faster)",
                    zorder=4)
            # Label the front, skipping points too close to the last label to stay legible.
            top_speed = max(p.decode_tokens_per_s for p in front)
            last: CostSpeedPoint | None = None
            for p in front:
                if last is not None and (
                    math.log10(p.price_usd / last.price_usd) < 0.3
                    and abs(p.decode_tokens_per_s - last.decode_tokens_per_s) < 0.08 * top_speed
                ):
                    continue
                ax.annotate(p.name, xy=(p.price_usd, p.decode_tokens_per_s), xytext=(6, 5),
                            textcoords="offset points", fontsize=8, color=INK)
                last = p
        _plain_ticks(ax, "x", axis_usd)
        _plain_ticks(ax, "y", axis_number)
        ax.set_xlabel("Build price (USD, log scale)")
        ax.set_ylabel("Decode speed per sequence (tokens/s)")
        ax.set_ylim(bottom=0)
        ax.grid(True, color=GRID, linewidth=0.6)
        ax.legend(loc="upper left", fontsize=8.5, frameon=False)
        return _svg(fig)


@dataclass(frozen=True)
class AccuracyPoint:
    """One measurement on the accuracy scatter: measured and predicted, in the metric's unit."""

    measured: float
    predicted: float
    series: str  # legend entry (a metric family)


ACCURACY_COLOURS = ("#1f56c9", "#2f7d5b", "#e3a21a", "#7a3fb0", "#b5452b", "#2f9e8f")


def accuracy_scatter_svg(points: Sequence[AccuracyPoint]) -> str:
    """Predicted against measured, both log scale, with the y = x line and a 2x band."""
    return SVG_BY_DATA.get(("accuracy", tuple(points)), lambda: _accuracy_scatter_svg(points))


def _accuracy_scatter_svg(points: Sequence[AccuracyPoint]) -> str:
    with matplotlib.rc_context(_RC):
        fig = _figure(7.0, 6.0)
        ax = fig.add_subplot()
        ax.set_xscale("log")
        ax.set_yscale("log")
        usable = [p for p in points if p.measured > 0 and p.predicted > 0]
        series = sorted({p.series for p in usable})
        for index, name in enumerate(series):
            mine = [p for p in usable if p.series == name]
            ax.scatter([p.measured for p in mine], [p.predicted for p in mine], s=22,
                       color=ACCURACY_COLOURS[index % len(ACCURACY_COLOURS)], label=name,
                       zorder=3, edgecolor="white", linewidth=0.5)
        if usable:
            low = min(min(p.measured, p.predicted) for p in usable) / 2
            high = max(max(p.measured, p.predicted) for p in usable) * 2
            ax.plot([low, high], [low, high], color=INK, linewidth=1.0,
                    label="predicted = measured")
            for factor in (2.0, 0.5):
                ax.plot([low, high], [low * factor, high * factor], color=MUTED, linewidth=0.7,
                        linestyle="--", label="2x off" if factor == 2.0 else None)
            ax.set_xlim(low, high)
            ax.set_ylim(low, high)
        ax.set_xlabel("Measured (metric's own unit, log scale)")
        ax.set_ylabel("Predicted by the engine (same unit, log scale)")
        ax.grid(True, color=GRID, linewidth=0.6)
        ax.legend(loc="upper left", fontsize=8.5, frameon=False)
        return _svg(fig)


# matplotlib writes style attributes; an SVG opened on its own is a document under the site's
# CSP, so chart responses carry their own policy: inline styles, nothing else (no scripts).
SVG_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
    "Cache-Control": "public, max-age=300",
}


SERIES_COLOURS = ("#1f56c9", "#b5452b", "#2f7d5b", "#7a3fb0", "#e3a21a", "#2f9e8f", "#545d69")


@dataclass(frozen=True)
class CurveSeries:
    """One build's serving curve: (tokens/s per user, tokens/s per accelerator) per concurrency,
    and its operating point at the SLO when there is one."""

    name: str
    points: tuple[tuple[float, float], ...]
    operating_point: tuple[float, float] | None = None


def serving_curve_svg(
    series: Sequence[CurveSeries], *, min_tokens_per_s_per_user: float | None = None
) -> str:
    """Throughput per accelerator (log) against tokens/s per user, one line per build, the
    region meeting the per-user limit shaded. For the serving page, and for the build page and
    compare (one series per build)."""
    key = ("serving_curve", tuple(series), min_tokens_per_s_per_user)
    return SVG_BY_DATA.get(
        key, lambda: _serving_curve_svg(series, min_tokens_per_s_per_user)
    )


def _serving_curve_svg(series: Sequence[CurveSeries], min_user: float | None) -> str:
    with matplotlib.rc_context(_RC):
        fig = _figure(8.5, 4.8)
        ax = fig.add_subplot()
        ax.set_yscale("log")
        xs = [x for s in series for x, _ in s.points]
        right = max(xs) * 1.08 if xs else 1.0
        if min_user is not None:
            ax.axvspan(min_user, max(right, min_user * 1.1), color="#2f7d5b", alpha=0.10,
                       zorder=0, label=f"meets ≥ {min_user:g} tokens/s per user")
            ax.axvline(min_user, color="#2f7d5b", linewidth=1.1, linestyle="--", zorder=1)
        for index, s in enumerate(series):
            colour = SERIES_COLOURS[index % len(SERIES_COLOURS)]
            ax.plot([x for x, _ in s.points], [y for _, y in s.points], color=colour,
                    linewidth=1.6, marker="o", markersize=3.5, label=s.name, zorder=3)
            if s.operating_point is not None:
                ax.plot(*s.operating_point, marker="o", markersize=11, markerfacecolor="none",
                        markeredgecolor=INK, markeredgewidth=1.6, zorder=4)
                ax.annotate("operating point", xy=s.operating_point, xytext=(8, 6),
                            textcoords="offset points", fontsize=8.5, color=INK)
        ax.set_xlim(0, max(right, (min_user or 0) * 1.2))
        ax.set_xlabel("Tokens/s per user (interactivity, estimate)")
        ax.set_ylabel("Tokens/s per accelerator (log, estimate)")
        ax.grid(True, which="major", color=GRID, linewidth=0.6)
        ax.legend(loc="upper right", fontsize=8.5, frameon=False)
        return _svg(fig)
