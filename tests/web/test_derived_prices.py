"""Cost figures of a build without a published price come from a derived price (accelerators ×
unit price) and say so on the calculator, recommend and compare pages; priced builds do not."""

from fastapi.testclient import TestClient

from ._html import Node, parse

UNPRICED = "hgx-b300-8gpu-server"  # no build price; its accelerator has one
PRICED = "dgx-h200"
MODEL = "llama-3-1-8b"
TAG = "derived price"


def _row(doc: Node, label: str) -> Node:
    return next(tr for tr in doc.find_all("tr") if tr.find("th") and label in tr.one("th").text())


def test_the_prices_the_tests_rely_on(web: TestClient) -> None:
    assert web.get(f"/api/v1/builds/{UNPRICED}").json()["price_usd"] is None
    assert web.get(f"/api/v1/builds/{PRICED}").json()["price_usd"] is not None


def test_calculator_labels_costs_from_a_derived_price(web: TestClient) -> None:
    doc = parse(web.get("/estimate", params={"build": UNPRICED, "model": MODEL}).text)
    assert TAG in _row(doc, "Price").text()
    assert TAG in _row(doc, "Per million output tokens").text()
    stats = doc.one("dl", class_="stat-list").text()
    assert "Cost per million tokens" in stats and TAG in stats


def test_calculator_does_not_label_a_published_price(web: TestClient) -> None:
    doc = parse(web.get("/estimate", params={"build": PRICED, "model": MODEL}).text)
    assert TAG not in doc.one(id="result").text()


def test_recommend_labels_the_cost_of_unpriced_builds_only(web: TestClient) -> None:
    doc = parse(web.get("/recommend", params={"model": MODEL}).text)
    rows = {tr.one("th").text(): tr for tr in doc.find_all("tr") if tr.find("th", scope="row")}
    unpriced = web.get(f"/api/v1/builds/{UNPRICED}").json()["name"]
    priced = web.get(f"/api/v1/builds/{PRICED}").json()["name"]
    assert TAG in rows[unpriced].text()
    assert TAG not in rows[priced].text()


def test_compare_labels_the_cost_cell_of_the_unpriced_build(web: TestClient) -> None:
    doc = parse(web.get("/compare", params={"builds": f"{UNPRICED},{PRICED}", "model": MODEL}).text)
    row = doc.one("tr", **{"data-key": "usd_per_million_tokens"})
    unpriced_cell, priced_cell = row.find_all("td")
    assert "$" in unpriced_cell.text() and TAG in unpriced_cell.text()
    assert "$" in priced_cell.text() and TAG not in priced_cell.text()
