"""The accuracy page, its JSON twin and chart; measured-vs-predicted on build and model pages."""

from fastapi.testclient import TestClient

from ._html import parse


def test_accuracy_page_shows_the_group_table_beside_the_roofline(web: TestClient) -> None:
    report = web.get("/accuracy.json").json()
    doc = parse(web.get("/accuracy").text)
    captions = [c.text() for c in doc.find_all("caption")]
    assert "Error by group" in captions
    labels = [g["label"] for g in report["groups"]]
    text = doc.one("main").text()
    assert labels and all(label in text for label in labels)
    assert "Naive roofline median" in text


def test_accuracy_page_links_its_json_twin_and_embeds_the_chart(web: TestClient) -> None:
    doc = parse(web.get("/accuracy").text)
    alternates = [
        link.attrs.get("href")
        for link in doc.find_all("link")
        if link.attrs.get("rel") == "alternate"
    ]
    assert any(href and href.endswith("/accuracy.json") for href in alternates)
    chart = web.get(doc.one("figure").one("img").attrs["src"])
    assert chart.headers["content-type"] == "image/svg+xml" and b"<svg" in chart.content


def test_worst_misses_are_the_largest_errors_with_their_sources(web: TestClient) -> None:
    report = web.get("/accuracy.json").json()
    errors = [r["error"] for r in report["rows"] if r["error"] is not None]
    worst = report["worst_misses"]
    assert worst[0]["error"] == max(errors)
    assert all(r["source_url"].startswith("http") for r in worst)
    assert [r["error"] for r in worst] == sorted((r["error"] for r in worst), reverse=True)


def test_build_page_lists_measurements_of_its_hardware_with_predictions(web: TestClient) -> None:
    measured = web.get(
        "/api/v1/measurements", params={"accelerator": "rtx-4090", "per_page": 200}
    ).json()["items"]
    single = [m for m in measured if m["accelerator_count"] == 1]
    html = web.get("/builds/1x-rtx-4090-desktop").text
    doc = parse(html)
    table = next(
        c.ancestor("table") for c in doc.find_all("caption") if c.text().startswith("Measurements")
    )
    assert table is not None
    shown = [row.one("th").text() for row in table.one("tbody").find_all("tr")]
    assert single and len(shown) == len(single)
    assert all(m["slug"] in html for m in single)


def test_model_page_lists_its_measurements(web: TestClient) -> None:
    measured = web.get(
        "/api/v1/measurements", params={"model": "llama-3-8b", "per_page": 200}
    ).json()["items"]
    html = web.get("/models/llama-3-8b").text
    assert measured and all(m["slug"] in html for m in measured)
    assert "Measured vs predicted" in parse(html).one("main").text()


def test_measurements_list_matches_the_api_and_links_its_twins(web: TestClient) -> None:
    params = {"metric": "prefill_tokens_per_s", "sort": "-value"}
    api = web.get("/api/v1/measurements", params=params).json()
    doc = parse(web.get("/measurements", params=params).text)
    rows = doc.one("table").one("tbody").find_all("tr")
    assert len(rows) == len(api["items"]) > 0
    hrefs = [a.attrs.get("href") or "" for a in doc.find_all("a")]
    assert any(h.startswith("/api/v1/measurements.csv?") and "metric=prefill" in h for h in hrefs)
    assert all(f"/api/v1/measurements/{item['slug']}" in hrefs for item in api["items"])
