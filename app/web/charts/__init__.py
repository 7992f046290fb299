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

from app.web.charts.accuracy import AccuracyPoint, accuracy_scatter_svg
from app.web.charts.base import SVG_HEADERS, cached_chart
from app.web.charts.catalog import CostSpeedPoint, TierPoint, cost_speed_svg, tier_line_svg
from app.web.charts.estimate import memory_breakdown_svg
from app.web.charts.serving import CurveSeries, serving_curve_svg

__all__ = [
    "SVG_HEADERS",
    "AccuracyPoint",
    "CostSpeedPoint",
    "CurveSeries",
    "TierPoint",
    "accuracy_scatter_svg",
    "cached_chart",
    "cost_speed_svg",
    "memory_breakdown_svg",
    "serving_curve_svg",
    "tier_line_svg",
]
