"""The calculator's chart: the memory a model needs against what the build has."""

import json
from typing import Any

import matplotlib
from matplotlib.ticker import FuncFormatter

from app.formatting import axis_gb
from app.web.charts.base import (
    COMPONENT_COLOURS,
    COMPONENT_LABELS,
    GRID,
    INK,
    RC,
    SVG_BY_DATA,
    figure,
    svg_document,
)


def memory_breakdown_svg(memory: dict[str, Any], *, accelerators_used: int) -> str:
    """Two bars: the model replica's memory by component against the build's usable memory,
    and the fullest accelerator against one accelerator's usable memory (fit is judged here)."""
    key = ("memory", json.dumps(memory, sort_keys=True, default=str), accelerators_used)
    return SVG_BY_DATA.get(
        key, lambda: _memory_breakdown_svg(memory, accelerators_used=accelerators_used)
    )


def _memory_breakdown_svg(memory: dict[str, Any], *, accelerators_used: int) -> str:
    with matplotlib.rc_context(RC):
        fig = figure(8.0, 3.6)
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
        return svg_document(fig)
