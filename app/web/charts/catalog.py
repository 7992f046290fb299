"""The catalog's charts: the tier line (price against memory) and recommend's cost against speed."""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib
from matplotlib.layout_engine import ConstrainedLayoutEngine

from app.formatting import axis_gb, axis_number, axis_usd
from app.web.charts.base import (
    GRID,
    INK,
    MUTED,
    PHONE_RC,
    RC,
    SVG_BY_DATA,
    TIER_COLOURS,
    TIER_LABELS,
    figure,
    plain_ticks,
    svg_document,
)


@dataclass(frozen=True)
class TierPoint:
    """One build on the tier line: its price and memory, and the largest model it runs."""

    name: str
    tier: str
    price_usd: float
    memory_gb: float
    largest_model: str | None
    largest_model_gb: float | None
    # It runs only with weights in host RAM: drawn apart, since the memory it has is not the
    # memory the model sits in.
    largest_model_offloaded: bool = False


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
    with matplotlib.rc_context(PHONE_RC if phone else RC):
        fig = figure(4.6, 8.0) if phone else figure(9.0, 7.0)
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
                        color=TIER_COLOURS[tier], alpha=0.35, linewidth=1, zorder=2,
                        linestyle=":" if p.largest_model_offloaded else "-")
            for offloaded in (False, True):
                drawn = [p for p in runs if p.largest_model_offloaded is offloaded]
                ax.scatter([p.price_usd for p in drawn], [p.largest_model_gb for p in drawn],
                           s=60, marker="x" if offloaded else "_",
                           color=MUTED if offloaded else TIER_COLOURS[tier],
                           linewidth=1.6 if offloaded else 2.2, zorder=3)
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
            plain_ticks(ax, "y", axis_gb)
        if story_need_gb:
            axes[0].text(0.99, story_need_gb, f"{story_label or axis_gb(story_need_gb)} ",
                         transform=axes[0].get_yaxis_transform(), ha="right", va="bottom",
                         fontsize=small, color="#a8231a")
        plain_ticks(axes[-1], "x", axis_usd)
        axes[-1].set_xlabel("Build price (USD, log scale)")
        axes[1].set_ylabel("Accelerator memory (log scale)")
        axes[-1].scatter([], [], s=46, color=MUTED, label="total accelerator memory")
        axes[-1].scatter([], [], s=60, marker="_", color=MUTED, linewidth=2.2,
                         label="largest runnable catalog model (rule-of-thumb size)")
        if any(p.largest_model_offloaded for p in priced):
            axes[-1].scatter([], [], s=60, marker="x", color=MUTED, linewidth=1.6,
                             label="… only with weights in host RAM (offload)")
        if phone:
            # No room inside the bands: the legend goes under the axis, one entry per line.
            axes[-1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.32), fontsize=small,
                            frameon=False)
            axes[-1].set_xlabel("Build price (USD, log)")
            axes[1].set_ylabel("Accelerator memory (log)")
        else:
            axes[-1].legend(loc="lower right", fontsize=small, frameon=False)
        return svg_document(fig)


@dataclass(frozen=True)
class CostSpeedPoint:
    """One build on the recommend chart."""

    name: str
    tier: str
    price_usd: float
    decode_tokens_per_s: float
    pareto: bool


def cost_speed_svg(points: Sequence[CostSpeedPoint], *, phone: bool = False) -> str:
    """Price (log) against decode speed per sequence; the Pareto front joined by a line.
    `phone` draws the narrow variant (same data, larger text, legend under the axes)."""
    return SVG_BY_DATA.get(
        ("cost_speed", tuple(points), phone), lambda: _cost_speed_svg(points, phone=phone)
    )


def _cost_speed_svg(points: Sequence[CostSpeedPoint], *, phone: bool = False) -> str:
    small = 10 if phone else 8.5
    with matplotlib.rc_context(PHONE_RC if phone else RC):
        fig = figure(4.6, 6.4) if phone else figure(8.5, 4.6)
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
                    math.log10(p.price_usd / last.price_usd) < (0.6 if phone else 0.3)
                    and abs(p.decode_tokens_per_s - last.decode_tokens_per_s) < 0.08 * top_speed
                ):
                    continue
                ax.annotate(p.name, xy=(p.price_usd, p.decode_tokens_per_s), xytext=(6, 5),
                            textcoords="offset points", fontsize=small - 0.5, color=INK)
                last = p
        plain_ticks(ax, "x", axis_usd)
        plain_ticks(ax, "y", axis_number)
        ax.set_ylim(bottom=0)
        ax.grid(True, color=GRID, linewidth=0.6)
        if phone:
            # No room beside the points: the legend goes under the axes, one entry per line.
            ax.set_xlabel("Build price (USD, log)")
            ax.set_ylabel("Decode speed per sequence (tokens/s)")
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), fontsize=small,
                      frameon=False)
        else:
            ax.set_xlabel("Build price (USD, log scale)")
            ax.set_ylabel("Decode speed per sequence (tokens/s)")
            ax.legend(loc="upper left", fontsize=small, frameon=False)
        return svg_document(fig)
