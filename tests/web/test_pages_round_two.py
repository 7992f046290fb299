"""Issue 15 (pages, round two): default order, names instead of slugs, honest prices, MLA heads."""

import re

from fastapi.testclient import TestClient

from ._html import parse


def test_default_build_order_lists_unpriced_builds_last_within_each_tier(web: TestClient) -> None:
    items = web.get("/api/v1/builds", params={"per_page": 200}).json()["items"]
    by_tier: dict[str, list[float | None]] = {}
    for item in items:
        by_tier.setdefault(item["tier"], []).append(item["price_usd"])
    for tier, prices in by_tier.items():
        known = [p for p in prices if p is not None]
        assert prices == known + [None] * (len(prices) - len(known)), tier
        assert known == sorted(known), tier
    assert any(p is None for prices in by_tier.values() for p in prices)


def test_build_header_names_the_accelerator_not_its_slug(web: TestClient) -> None:
    doc = parse(web.get("/builds/2x-rtx-3090-nvlink-desktop").text)
    header = doc.one("dl", class_="stat-list").text()
    assert "2 × NVIDIA GeForce RTX 3090" in header
    assert "rtx-3090" not in header


def test_dgx_station_names_its_gb300_desktop_part(web: TestClient) -> None:
    header = parse(web.get("/builds/dgx-station-gb300").text).one("dl", class_="stat-list").text()
    assert "GB300 Desktop Superchip" in header
    assert "HGX" not in header


def test_unpriced_build_says_its_cost_figures_use_a_derived_price(web: TestClient) -> None:
    read = web.get("/api/v1/builds/hgx-b300-8gpu-server").json()
    accelerator = web.get(f"/api/v1/accelerators/{read['accelerator']}").json()
    assert read["price_usd"] is None and accelerator["price_usd"] is not None
    doc = parse(web.get("/builds/hgx-b300-8gpu-server").text)
    note = doc.one(id="price-note").text()
    derived = f"${round(accelerator['price_usd'] * read['accelerator_count']):,}"
    assert f"derived price of {derived}" in note
    assert "not published" in doc.one("dl", class_="stat-list").text()
    assert "derived price" in doc.one(id="runs-caption").parent.text()


def test_unpriced_build_without_any_price_shows_no_cost_figure(web: TestClient) -> None:
    doc = parse(web.get("/builds/dgx-station-gb300").text)
    assert "this page shows no cost figures" in doc.one(id="price-note").text()
    rows = doc.one(id="runs-caption").parent.one("tbody").find_all("tr")
    assert rows and all("$" not in row.text() for row in rows)


def test_mla_model_shows_its_query_key_and_value_head_sizes(web: TestClient) -> None:
    config = web.get("/api/v1/models/deepseek-v3").json()["config"]
    html = web.get("/models/deepseek-v3").text
    row = next(tr for tr in parse(html).find_all("tr") if "Head dimensions" in tr.text())
    text = row.text()
    assert f"query/key {config['qk_nope_head_dim'] + config['qk_rope_head_dim']}" in text
    assert f"RoPE {config['qk_rope_head_dim']}" in text
    assert f"value {config['v_head_dim']}" in text
    assert "head dimension 56" not in html


def test_dense_model_shows_one_head_size(web: TestClient) -> None:
    read = web.get("/api/v1/models/llama-3-1-8b").json()
    row = next(tr for tr in parse(web.get("/models/llama-3-1-8b").text).find_all("tr")
               if "Head dimensions" in tr.text())
    assert row.text().endswith(f"per head {read['head_dim']}")


def _svg_width_pt(svg: str) -> float:
    match = re.search(r'<svg[^>]* width="([\d.]+)pt"', svg)
    assert match, svg[:300]
    return float(match.group(1))


def test_home_offers_phones_a_narrow_legible_tier_line_chart(web: TestClient) -> None:
    html = web.get("/").text
    source = parse(html).one("source")
    assert source.attrs["media"] == "(max-width: 40rem)"
    phone = web.get(source.attrs["srcset"] or "")
    laptop = web.get("/tierline.svg")
    assert phone.status_code == laptop.status_code == 200
    assert phone.headers["content-type"].startswith("image/svg+xml")
    assert _svg_width_pt(phone.text) < 0.6 * _svg_width_pt(laptop.text)
    assert "font-size: 11px" in phone.text or "font: 11px" in phone.text


def test_calculator_redirects_to_the_calculator_keeping_the_query(web: TestClient) -> None:
    response = web.get("/calculator", params={"model": "llama-3-1-8b"}, follow_redirects=False)
    assert response.status_code == 308
    assert response.headers["location"] == "/estimate?model=llama-3-1-8b"
    assert web.get("/calculator").url.path == "/estimate"


def test_column_picker_hides_columns_and_links_keep_the_choice(web: TestClient) -> None:
    doc = parse(web.get("/builds", params=[("hide", "power_w"), ("hide", "nonsense")]).text)
    headings = [th.text() for th in doc.one("table", class_="builds-table").find_all("th",
                                                                                   scope="col")]
    assert not any(h.startswith("Power") for h in headings)
    assert any(h.startswith("Price") for h in headings)
    sort_links = [a.attrs["href"] or "" for a in doc.find_all("a", class_="sort-link")]
    assert sort_links and all("hide=power_w" in href for href in sort_links)
    assert all("nonsense" not in href for href in sort_links)
    json_link = doc.one("link", rel="alternate").attrs["href"] or ""
    assert "hide" not in json_link  # the JSON twin always carries every field
