"""Pages and charts write figures with app.formatting: the filters are its functions and chart
ticks read as plain words."""

from app import formatting as f
from app.web.charts import CostSpeedPoint, TierPoint, cost_speed_svg, tier_line_svg
from app.web.templating import FILTERS


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


def test_tier_line_draws_a_model_that_runs_only_from_host_ram_apart() -> None:
    on_cards = [TierPoint("x", "desktop", 3000, 48, "m", 40)]
    offloaded = [TierPoint("x", "desktop", 3000, 24, "m", 140, largest_model_offloaded=True)]
    assert "host RAM" not in tier_line_svg(on_cards)
    assert "only with weights in host RAM" in tier_line_svg(offloaded)
