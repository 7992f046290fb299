"""Answers that lead somewhere, in real Chromium: recommend's nearest misses and the
calculator's "No" links. Screenshots go to the temporary output folder."""

from pathlib import Path
from typing import Any

import pytest

from tests.browser._shots import screenshot

pytestmark = pytest.mark.browser


def test_recommend_empty_answer_names_the_limits_and_a_miss_leads_to_a_list(
    page: Any, screenshots: Path
) -> None:
    tab, problems = page
    tab.goto("/recommend")
    tab.select_option("#f-model", "llama-3-3-70b")
    tab.fill("#f-min_decode_tokens_per_s", "60")
    tab.fill("#f-max_price_usd", "5000")
    with tab.expect_navigation():
        tab.get_by_role("button", name="Recommend").click()
    misses = tab.locator(".nearest-misses")
    assert misses.is_visible()
    assert "decode slower than your 60" in misses.inner_text()
    assert "cost more than your $5,000" in misses.inner_text()
    screenshot(tab, screenshots / "laptop-recommend-nearest-misses.png")
    miss = tab.locator(".miss-too-slow")
    name = miss.locator("a").first.inner_text()
    with tab.expect_navigation():
        miss.get_by_role("link", name="lower the speed limit to that").click()
    assert name in tab.locator("table tbody").first.inner_text()
    assert problems.take() == []


def test_calculator_no_links_to_builds_and_to_a_precision_that_fits(
    page: Any, screenshots: Path
) -> None:
    tab, problems = page
    # Offload off: with 256 GB of host RAM the rig would otherwise run the model partly from RAM.
    tab.goto(
        "/estimate?build=4x-rtx-4090-workstation&model=llama-3-1-70b&precision=bf16&offload=none"
    )
    assert tab.locator(".verdict-box").inner_text().startswith("✗ No")
    help_box = tab.locator(".no-verdict-help")
    assert help_box.is_visible()
    screenshot(tab, screenshots / "laptop-estimate-no-ways-out.png")
    with tab.expect_navigation():
        help_box.locator("a.precision-that-fits").click()
    assert tab.locator(".verdict-box").inner_text().startswith("✓ Yes")
    # Let the memory chart finish loading: leaving mid-request reports it as failed.
    tab.wait_for_load_state("networkidle")
    tab.go_back()
    with tab.expect_navigation():
        tab.locator("a.builds-that-fit").click()
    assert "/builds?" in tab.url and "fits_model=llama-3-1-70b" in tab.url
    assert tab.locator("table tbody tr").count() > 0
    screenshot(tab, screenshots / "laptop-builds-that-run-it.png")
    assert problems.take() == []
