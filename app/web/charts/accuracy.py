"""The accuracy report's chart: predicted against measured."""

from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib

from app.web.charts.base import (
    ACCURACY_COLOURS,
    GRID,
    INK,
    MUTED,
    RC,
    SVG_BY_DATA,
    figure,
    svg_document,
)


@dataclass(frozen=True)
class AccuracyPoint:
    """One measurement on the accuracy scatter: measured and predicted, in the metric's unit."""

    measured: float
    predicted: float
    series: str  # legend entry (a metric family)


def accuracy_scatter_svg(points: Sequence[AccuracyPoint]) -> str:
    """Predicted against measured, both log scale, with the y = x line and a 2x band."""
    return SVG_BY_DATA.get(("accuracy", tuple(points)), lambda: _accuracy_scatter_svg(points))


def _accuracy_scatter_svg(points: Sequence[AccuracyPoint]) -> str:
    with matplotlib.rc_context(RC):
        fig = figure(7.0, 6.0)
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
        return svg_document(fig)
