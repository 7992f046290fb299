"""The one formatting module: the same value reads the same on every page, chart and export."""

import math

import pytest

from app import formatting as f
from app.web.charts import CostSpeedPoint, TierPoint, cost_speed_svg, tier_line_svg
from app.web.templating import FILTERS


@pytest.mark.parametrize(
    ("value", "text"),
    [(12.3, "12.3 GB"), (96, "96 GB"), (2256.4, "2,256 GB"), (0.52, "0.52 GB"), (None, f.DASH)],
)
def test_gb(value: float | None, text: str) -> None:
    assert f.gb(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(2.41, "$2.41"), (1599, "$1,599"), (0.0032, "$0.0032"), (0, "$0.00"), (-5.5, "-$5.50")],
)
def test_usd(value: float, text: str) -> None:
    assert f.usd(value) == text


def test_missing_and_non_finite_values_are_a_dash() -> None:
    for func in (f.gb, f.usd, f.tps, f.seconds, f.watts, f.params, f.number):
        assert func(None) == f.DASH
        assert func(math.nan) == f.DASH
        assert func(math.inf) == f.DASH


def test_seconds_round_to_three_significant_digits_everywhere() -> None:
    assert f.seconds(18.45) == f.seconds(18.449999) == "18.4 s"
    assert f.seconds(0.035) == "35 ms"
    assert f.seconds(5400) == "90 min"


def test_precision_label_is_upper_case() -> None:
    assert f.precision_label("fp8") == "FP8"
    assert f.precision_label("q4_k_m") == "Q4_K_M"
    assert f.precision_label(None) == f.DASH


@pytest.mark.parametrize(
    ("func", "value", "text"),
    [
        (f.axis_number, 2000, "2,000"),
        (f.axis_number, 0.5, "0.5"),
        (f.axis_gb, 500, "500 GB"),
        (f.axis_gb, 2000, "2 TB"),
        (f.axis_usd, 20_000, "$20k"),
        (f.axis_usd, 1_500_000, "$1.5M"),
        (f.axis_usd, 500, "$500"),
    ],
)
def test_axis_ticks_are_plain(func: object, value: float, text: str) -> None:
    assert func(value) == text  # type: ignore[operator]


def test_page_filters_are_the_formatting_functions() -> None:
    assert FILTERS["gb"] is f.gb
    assert FILTERS["usd"] is f.usd
    assert FILTERS["precision_label"] is f.precision_label


def test_charts_have_no_scientific_notation_ticks() -> None:
    # Decode speeds across one decade: matplotlib's default log/linear labels would read "2×10³".
    points = [
        CostSpeedPoint(f"b{i}", "desktop", price, speed, pareto=i % 2 == 0)
        for i, (price, speed) in enumerate([(1500, 900), (2500, 1400), (9000, 2600), (12000, 3100)])
    ]
    svg = cost_speed_svg(points)
    assert "10^" not in svg and "×10" not in svg and "\u00d7" not in svg
    assert "$2k" in svg or "$5k" in svg  # minor ticks inside one decade get plain labels
    tiers = [TierPoint("x", "desktop", 3000, 1500, "m", 1200),
             TierPoint("y", "dgx", 300_000, 2500, "m", 2000),
             TierPoint("z", "cluster", 900_000, 2900, None, None)]
    svg = tier_line_svg(tiers)
    assert "×10" not in svg and "\u00d7" not in svg
    assert " TB" in svg
