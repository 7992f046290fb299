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


def test_estimate_says_how_well_the_engine_does_for_its_group(web: TestClient) -> None:
    # llama.cpp on one RTX 4090 (discrete GDDR): the same sentence the accuracy table backs.
    report = web.get("/accuracy.json").json()
    group = next(
        g
        for g in report["groups"]
        if (g["metric"], g["runtime"], g["device_class"])
        == ("decode_tokens_per_s", "llama.cpp", "discrete GDDR")
    )
    params = {"build": "1x-rtx-4090-desktop", "model": "llama-3-8b", "precision": "q4_k_m"}
    text = (
        parse(web.get("/estimate", params={**params, "runtime": "llama.cpp"}).text)
        .one("main")
        .text()
    )
    median = round(group["engine"]["median_error"] * 100)
    assert (
        f"decode tokens/s estimates for llama.cpp on discrete GDDR: median error {median}% "
        f"over {group['rows']} measurements" in text
    )


def test_estimate_of_mixed_cards_cites_the_mixed_card_group_of_the_runtime_it_ran(
    web: TestClient,
) -> None:
    # Automatic runtime on a desktop of mixed cards: the answer runs llama.cpp, so the note is
    # llama.cpp's mixed-card group, not the request's default runtime on one card's class.
    params = {"build": "2x-rtx-3090-1x-rtx-4090-desktop", "model": "llama-3-8b"}
    page = web.get("/estimate", params={**params, "precision": "q4_k_m"})
    text = parse(page.text).one("main").text()
    assert "decode tokens/s estimates for llama.cpp on mixed cards: median error" in text
    assert "estimates for llama.cpp on discrete GDDR" not in text


def test_pages_of_mixed_and_offloading_builds_cite_their_own_groups(web: TestClient) -> None:
    mixed = parse(web.get("/builds/2x-rtx-3090-1x-rtx-4090-desktop").text).one("main").text()
    offload = parse(web.get("/builds/1x-rtx-4090-128gb-ddr5").text).one("main").text()
    assert "estimates for llama.cpp on mixed cards: median error" in mixed
    assert "estimates for llama.cpp on CPU offload: median error" in offload
