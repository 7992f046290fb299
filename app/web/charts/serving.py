"""The serving curve: throughput per accelerator against tokens/s per user, one line per build."""

from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib

from app.web.charts.base import (
    GRID,
    INK,
    RC,
    SERIES_COLOURS,
    SVG_BY_DATA,
    figure,
    svg_document,
)


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
    with matplotlib.rc_context(RC):
        fig = figure(8.5, 4.8)
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
        return svg_document(fig)
