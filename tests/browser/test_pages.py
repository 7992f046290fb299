"""The pages in real Chromium: no console errors, filters and sort, compare by clicking, the
calculator, and the phone-width layout. Screenshots go to test-output/browser/."""

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser._shots import screenshot

pytestmark = pytest.mark.browser

PAGES = {
    "home": "/",
    "builds": "/builds",
    "build": "/builds/2x-dgx-h200-cluster",
    "compare": "/compare?builds=4x-rtx-4090-workstation,dgx-h200,2x-dgx-h200-cluster",
    "compare-empty": "/compare",
    "models": "/models",
    "model": "/models/deepseek-v3",
    "estimate": "/estimate?build=4x-rtx-4090-workstation&model=llama-3-1-70b&precision=int4",
    "recommend": "/recommend?model=llama-3-1-70b",
    "glossary": "/glossary",
    "about": "/about",
    "engine-doc": "/about/engine",
    "accuracy": "/accuracy",
    "measurements": "/measurements?runtime=llama.cpp",
    "not-found": "/no-such-page",
}

# Finds visible elements sticking out of the viewport, outside horizontal table scrollers.
OVERFLOW_JS = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('.table-scroll, pre, .visually-hidden')) continue;
    const box = el.getBoundingClientRect();
    if (box.width > 0 && box.right > width + 1) {
      out.push(el.tagName.toLowerCase() + '.' + el.className + ' right=' + Math.round(box.right));
    }
  }
  return {scrollWidth: document.documentElement.scrollWidth, width, out: out.slice(0, 10)};
}"""


def _wait_until(check: Callable[[], bool], attempts: int = 100) -> None:
    # The site's CSP forbids eval, which page.wait_for_function needs: poll from Python.
    for _ in range(attempts):
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


def _query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def test_every_page_loads_without_console_errors(page: Any, screenshots: Path) -> None:
    tab, problems = page
    for name, url in PAGES.items():
        response = tab.goto(url, wait_until="load")
        assert response is not None
        expected = 404 if name == "not-found" else 200
        assert response.status == expected, (url, response.status)
        assert tab.locator("main h1").first.is_visible(), url
        # Charts are <img> SVGs rendered on the server: they must actually load.
        for img in tab.locator("figure.chart img").all():
            img.scroll_into_view_if_needed()  # charts load lazily
            _wait_until(lambda img=img: img.evaluate("i => i.complete && i.naturalWidth > 0"))
        screenshot(tab, screenshots / f"laptop-{name}.png")
        seen = problems.take()
        if name == "not-found":
            # Chromium logs the page's own 404 status; that one is the point of this page.
            seen = [m for m in seen if "status of 404" not in m]
        assert seen == [], url


def test_catalog_filters_and_sort(page: Any, screenshots: Path) -> None:
    tab, problems = page
    tab.goto("/builds")
    tab.select_option("#f-tier", "dgx")
    tab.fill("#f-min_memory_gb", "1000")
    tab.get_by_role("button", name="Apply filters").click()
    tab.wait_for_url("**/builds?*")
    assert _query(tab.url)["tier"] == "dgx"
    badges = tab.locator(".builds-table tbody .tier-badge").all_inner_texts()
    assert badges and set(badges) == {"DGX-class server"}
    count = int(tab.locator("#result-count strong").inner_text())
    assert count == len(badges)

    tab.locator("th", has_text="Price").get_by_role("link").click()
    tab.wait_for_url("**sort=price_usd*")
    assert tab.locator("th[aria-sort=ascending]").inner_text().startswith("Price")
    prices = tab.locator(".builds-table tbody td:last-child").all_inner_texts()
    values = [float(p.strip("$").replace(",", "")) for p in prices if p.startswith("$")]
    assert values == sorted(values)
    assert _query(tab.url)["tier"] == "dgx", "sorting keeps the filters"

    tab.locator("th", has_text="Price").get_by_role("link").click()
    tab.wait_for_url("**sort=-price_usd*")
    assert tab.locator("th[aria-sort=descending]").inner_text().startswith("Price")
    screenshot(tab, screenshots / "laptop-builds-filtered.png")
    assert problems.take() == []


def test_build_a_comparison_by_clicking(page: Any, screenshots: Path) -> None:
    tab, problems = page
    tab.goto("/builds?per_page=200")
    button = tab.get_by_role("button", name="Compare selected builds")
    assert button.is_disabled()  # the enhancement keeps it honest: 2 to 6 builds
    tab.get_by_label("Compare 4× RTX 4090 workstation").check()
    assert button.is_disabled()
    tab.get_by_label("Compare 2× DGX H200 cluster").check()
    assert tab.locator("[data-compare-count]").inner_text() == "2 builds selected"
    assert button.is_enabled()
    button.click()
    tab.wait_for_url("**/compare?*")
    assert _query(tab.url)["builds"] == "4x-rtx-4090-workstation,2x-dgx-h200-cluster"
    header = tab.locator("#compare-table thead").inner_text()
    assert "4× RTX 4090 workstation" in header and "2× DGX H200 cluster" in header
    run_row = tab.locator("#compare-table tr[data-key=run_model]").inner_text()
    assert "No" in run_row and "Yes" in run_row

    # Add a third build with the form, then remove one with its link: the URL is the state.
    tab.select_option("#f-builds", "dgx-h200")
    tab.get_by_role("button", name="Add to comparison").click()
    tab.wait_for_url("**dgx-h200*")
    assert tab.locator("#compare-table thead th").count() == 3
    tab.get_by_role("link", name="Remove 4× RTX 4090 workstation from the comparison").click()
    tab.wait_for_load_state()
    assert "4x-rtx-4090" not in _query(tab.url)["builds"]

    # "Copy as Markdown" is a JavaScript enhancement over the <pre> block.
    copy = tab.get_by_role("button", name="Copy as Markdown")
    assert copy.is_visible()
    copy.click()
    expect(tab.locator("#copy-status")).to_have_text("Copied as Markdown.")
    copied = tab.evaluate("navigator.clipboard.readText()")
    assert copied == tab.locator("#compare-markdown").text_content()
    assert copied.splitlines()[1].startswith("| --- |")
    screenshot(tab, screenshots / "laptop-compare-clicked.png")
    assert problems.take() == []


def test_submit_the_calculator(page: Any, screenshots: Path) -> None:
    tab, problems = page
    tab.goto("/estimate")
    # With JavaScript the custom-build fields hide until "Describe a build" is chosen.
    assert tab.locator("#f-a_memory_gb").is_hidden()
    tab.select_option("#f-build", "2x-dgx-h200-cluster")
    tab.select_option("#f-model", "deepseek-v3")
    tab.select_option("#f-precision", "fp8")
    tab.fill("#f-batch", "4")
    tab.get_by_role("button", name="Estimate").click()
    tab.wait_for_url("**/estimate?*")
    query = _query(tab.url)
    assert query["build"] == "2x-dgx-h200-cluster" and query["batch"] == "4"
    verdict = tab.locator(".verdict-box")
    assert verdict.inner_text().startswith("✓ Yes")
    chart = tab.locator("figure.chart img")
    chart.scroll_into_view_if_needed()
    _wait_until(lambda: chart.evaluate("i => i.complete && i.naturalWidth > 0"))
    assert tab.locator("#plan-caption").is_visible()
    screenshot(tab, screenshots / "laptop-estimate-result.png")

    # Describe a build instead: the panel appears, and a bad value is named, not a 500.
    tab.get_by_label("Describe a build").check()
    assert tab.locator("#f-a_memory_gb").is_visible()
    assert tab.locator("#f-build").is_hidden()
    tab.fill("#f-b_per_node", "2")
    tab.fill("#f-a_memory_gb", "24")
    tab.fill("#f-a_bandwidth_gbs", "936")
    tab.fill("#f-a_fp16_tflops", "71")
    tab.select_option("#f-model", "llama-3-1-8b")
    tab.select_option("#f-precision", "bf16")
    with tab.expect_navigation():
        tab.get_by_role("button", name="Estimate").click()
    assert tab.locator(".verdict-box").inner_text().startswith("✓ Yes")
    assert problems.take() == []


@pytest.mark.parametrize("name", ["home", "builds", "build", "compare", "estimate", "recommend",
                                  "model", "accuracy", "measurements"])
def test_phone_width_layout_has_no_page_overflow(
    browser: Any, live_server: Any, screenshots: Path, name: str
) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                  device_scale_factor=2, base_url=live_server.url)
    tab = context.new_page()
    try:
        tab.goto(PAGES[name], wait_until="load")
        layout = tab.evaluate(OVERFLOW_JS)
        assert layout["scrollWidth"] <= layout["width"], layout
        assert layout["out"] == [], layout
        # Wide tables scroll inside their own box instead of widening the page.
        for scroller in tab.locator(".table-scroll").all()[:3]:
            assert scroller.evaluate("e => getComputedStyle(e).overflowX") == "auto"
        screenshot(tab, screenshots / f"phone-{name}.png")
    finally:
        context.close()


def test_keyboard_focus_is_visible_and_the_skip_link_works(page: Any) -> None:
    tab, _ = page
    tab.goto("/builds")
    tab.keyboard.press("Tab")
    skip = tab.locator(".skip-link")
    assert skip.evaluate("e => e === document.activeElement")
    outline = skip.evaluate("e => getComputedStyle(e).outlineStyle")
    assert outline != "none"
    assert skip.evaluate("e => e.getBoundingClientRect().top >= 0")  # shown when focused
    tab.keyboard.press("Enter")
    # The fragment navigation lands after the key event returns; wait for it (a busy machine).
    tab.wait_for_function("location.hash === '#main'", timeout=5000)
    assert tab.url.endswith("#main")
