"""Issue 15 in real Chromium: tables fit a 1280 px laptop, compare keeps its row labels on a
390 px phone, focus moves to the answer after a submit; screenshots of every page at both widths
go to the suite's temporary output folder (never the checkout)."""

from pathlib import Path
from typing import Any

import pytest

from tests.browser._shots import screenshot
from tests.browser.test_pages import PAGES, _wait_until

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

# Every table of the page's main content that is wider than the box it sits in.
TABLES_WIDER_THAN_THEIR_BOX_JS = """() => {
  const out = [];
  for (const table of document.querySelectorAll('main table')) {
    const box = table.closest('.table-scroll') || table.parentElement;
    if (table.scrollWidth > box.clientWidth + 1) {
      out.push((table.id || table.className || 'table') + ': ' + table.scrollWidth + ' px in '
               + box.clientWidth + ' px');
    }
  }
  const main = document.querySelector('main');
  return {tables: out, mainScroll: main.scrollWidth, mainWidth: main.clientWidth,
          pageScroll: document.documentElement.scrollWidth,
          width: document.documentElement.clientWidth};
}"""


def _wait_for_charts(tab: Any) -> None:
    """Load the lazy chart images (a screenshot does not scroll them into view)."""
    for image in tab.locator("figure.chart img").all():
        image.scroll_into_view_if_needed()
        _wait_until(lambda image=image: image.evaluate("i => i.complete && i.naturalWidth > 0"),
                    attempts=200)
    tab.evaluate("window.scrollTo(0, 0)")


def _context(browser: Any, live_server: Any, viewport: dict[str, int]) -> Any:
    phone = viewport["width"] < 600
    return browser.new_context(viewport=viewport, is_mobile=phone,
                               device_scale_factor=1, base_url=live_server.url)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_main_content_fits_a_1280_px_laptop(
    browser: Any, live_server: Any, screenshots: Path, name: str
) -> None:
    context = _context(browser, live_server, LAPTOP)
    tab = context.new_page()
    try:
        tab.goto(PAGES[name], wait_until="load")
        layout = tab.evaluate(TABLES_WIDER_THAN_THEIR_BOX_JS)
        assert layout["tables"] == [], layout
        assert layout["mainScroll"] <= layout["mainWidth"] + 1, layout
        assert layout["pageScroll"] <= layout["width"], layout
        _wait_for_charts(tab)
        screenshot(tab, screenshots / f"fit-1280-{name}.png")
    finally:
        context.close()


@pytest.mark.parametrize("name", sorted(PAGES))
def test_screenshot_every_page_on_a_390_px_phone(
    browser: Any, live_server: Any, screenshots: Path, name: str
) -> None:
    context = _context(browser, live_server, PHONE)
    tab = context.new_page()
    try:
        tab.goto(PAGES[name], wait_until="load")
        assert tab.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        _wait_for_charts(tab)
        screenshot(tab, screenshots / f"fit-390-{name}.png")
    finally:
        context.close()


def test_build_list_price_and_power_are_on_screen_at_1280(page: Any) -> None:
    tab, _ = page
    tab.goto("/builds?sort=price_usd")
    right = tab.evaluate("document.documentElement.clientWidth")
    for heading in ("Price", "Power"):
        box = tab.locator("table.builds-table thead th", has_text=heading).first.bounding_box()
        assert box is not None and box["x"] + box["width"] <= right, heading


def test_column_picker_hides_a_column_without_javascript(browser: Any, live_server: Any) -> None:
    context = browser.new_context(viewport=LAPTOP, base_url=live_server.url,
                                  java_script_enabled=False)
    tab = context.new_page()
    try:
        tab.goto("/builds")
        tab.locator(".column-picker summary").click()
        tab.get_by_label("Hide power").check()
        tab.get_by_role("button", name="Apply filters").click()
        tab.wait_for_url("**/builds?*hide=power_w*")
        headings = tab.locator("table.builds-table thead th").all_inner_texts()
        assert not any(h.startswith("Power") for h in headings)
        assert any(h.startswith("Price") for h in headings)
        # Sorting keeps the choice.
        tab.locator("table.builds-table thead th a", has_text="Price").click()
        assert "hide=power_w" in tab.url and "sort=price_usd" in tab.url
    finally:
        context.close()


def test_compare_keeps_row_labels_visible_on_a_390_px_phone(
    browser: Any, live_server: Any, screenshots: Path
) -> None:
    context = _context(browser, live_server, PHONE)
    tab = context.new_page()
    try:
        tab.goto(PAGES["compare"])
        scroller = tab.locator(".table-scroll:has(table.compare-table)").first
        assert scroller.evaluate("e => e.scrollWidth > e.clientWidth")  # it does scroll
        scroller.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
        label = tab.locator("table.compare-table tbody th[scope=row]").first
        label.evaluate("e => e.closest('tr').scrollIntoView({block: 'center'})")
        box = scroller.bounding_box()
        label_box = label.bounding_box()
        assert box is not None and label_box is not None
        assert label_box["x"] >= box["x"] - 1
        assert label_box["x"] + label_box["width"] <= box["x"] + box["width"]
        # Nothing scrolled over it: the label is what the browser finds at its own centre.
        centre = (label_box["x"] + label_box["width"] / 2, label_box["y"] + label_box["height"] / 2)
        hit = tab.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('th')"
                           "?.textContent.trim()", list(centre))
        assert hit == label.text_content().strip()
        screenshot(tab, screenshots / "fit-390-compare-scrolled.png", full_page=False)
    finally:
        context.close()


def _focused(tab: Any) -> str:
    return str(tab.evaluate("document.activeElement && (document.activeElement.id || "
                            "document.activeElement.tagName)"))


def test_focus_moves_to_the_result_count_after_filtering_builds(page: Any) -> None:
    tab, problems = page
    tab.goto("/builds")
    tab.select_option("#f-tier", "dgx")
    with tab.expect_navigation():
        tab.get_by_role("button", name="Apply filters").click()
    assert _focused(tab) == "result-count"
    tab.keyboard.press("Tab")  # the next stop is inside the answer, not the header
    assert tab.evaluate("document.activeElement.closest('.result-bar, .table-scroll') !== null")
    assert problems.take() == []


def test_focus_moves_to_the_answer_after_the_calculator_and_recommend(page: Any) -> None:
    tab, problems = page
    tab.goto("/recommend?model=llama-3-1-70b")
    assert _focused(tab) == "BODY"  # an ordinary visit keeps the browser's focus
    with tab.expect_navigation():
        tab.locator("form[action='/recommend'] button[type=submit]").first.click()
    assert _focused(tab) in ("results", "result")
    tab.goto("/estimate")
    tab.select_option("#f-build", "dgx-h200")
    tab.select_option("#f-model", "llama-3-1-70b")
    with tab.expect_navigation():
        tab.get_by_role("button", name="Estimate").click()
    assert _focused(tab) == "result"
    # Leaving a page aborts its lazy chart request ("failed: ..."); scripts must not fail.
    assert [m for m in problems.take() if not m.startswith("failed:")] == []


def test_calculator_address_redirects_to_the_calculator(page: Any) -> None:
    tab, _ = page
    tab.goto("/calculator?model=llama-3-1-8b")
    assert tab.url.endswith("/estimate?model=llama-3-1-8b")
    assert tab.locator("form[action='/estimate']").count() == 1
