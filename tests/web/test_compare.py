"""The compare page: the compare service's rows, differences marked, URL as state, Markdown."""

from urllib.parse import parse_qsl, urlsplit

from fastapi.testclient import TestClient

from ._html import parse

STORY = "4x-rtx-4090-workstation,dgx-h200,2x-dgx-h200-cluster"


def test_rows_are_the_compare_services_rows_with_differences_marked(web: TestClient) -> None:
    params = {"builds": STORY, "model": "llama-3-1-70b", "precision": "bf16"}
    api = web.get("/api/v1/compare", params=params).json()
    doc = parse(web.get("/compare", params=params).text)
    table = doc.one("table", id="compare-table")
    rows = table.one("tbody").find_all("tr")
    assert [r.attrs["data-key"] for r in rows] == [r["key"] for r in api["rows"]]
    for row, expected in zip(rows, api["rows"], strict=True):
        cells = [td.text() for td in row.find_all("td")]
        for cell, shown in zip(cells, expected["display"], strict=True):
            assert shown in cell
        differs = "row-differs" in row.attrs["class"]
        assert differs == (not expected["same"])
        assert ("(differs)" in row.one("th").text()) == differs
    labels = [r["label"] for r in api["rows"]]
    for label in ("Connection", "GPU-to-GPU bandwidth", "Memory pooling", "Failover",
                  "Scheduling", "Power", "Total VRAM", "Price"):
        assert label in labels
    assert any(label.startswith("Run a ") for label in labels)


def test_verdicts_are_words_not_colour_alone(web: TestClient) -> None:
    doc = parse(web.get("/compare", params={"builds": STORY}).text)
    run = next(r for r in doc.find_all("tr") if r.attrs.get("data-key") == "run_model")
    cells = [td.text() for td in run.find_all("td")]
    assert cells[0].startswith("✗ No")
    assert cells[-1].startswith("✓ Yes")


def test_repeated_builds_parameters_equal_the_comma_list(web: TestClient) -> None:
    repeated = web.get("/compare?builds=dgx-h200&builds=2x-dgx-h200-cluster")
    comma = web.get("/compare?builds=dgx-h200,2x-dgx-h200-cluster")
    table_a = parse(repeated.text).one("table", id="compare-table").text()
    table_b = parse(comma.text).one("table", id="compare-table").text()
    assert table_a == table_b
    canonical = parse(repeated.text).one("link", rel="canonical").attrs["href"]
    assert dict(parse_qsl(urlsplit(canonical).query))["builds"] == "dgx-h200,2x-dgx-h200-cluster"


def test_remove_links_drop_one_build_and_keep_the_rest_of_the_state(web: TestClient) -> None:
    doc = parse(web.get("/compare", params={"builds": STORY, "precision": "int4"}).text)
    remove = [a.attrs["href"] for a in doc.find_all("a") if a.text() == "Remove"]
    assert len(remove) == 3
    query = dict(parse_qsl(urlsplit(remove[1]).query))
    assert query == {"builds": "4x-rtx-4090-workstation,2x-dgx-h200-cluster", "precision": "int4"}


def test_add_form_offers_only_builds_not_yet_compared(web: TestClient) -> None:
    doc = parse(web.get("/compare", params={"builds": "dgx-h200,2x-dgx-h200-cluster"}).text)
    form = next(f for f in doc.find_all("form") if f.attrs.get("aria-label") == "Add a build")
    offered = [o.attrs["value"] for o in form.find_all("option")]
    assert "dgx-h200" not in offered and "4x-rtx-4090-workstation" in offered
    assert form.one("input", type="hidden", name="builds").attrs["value"] == (
        "dgx-h200,2x-dgx-h200-cluster"
    )


def test_added_build_joins_the_comparison(web: TestClient) -> None:
    response = web.get("/compare?builds=dgx-h200,2x-dgx-h200-cluster&builds=dgx-b200")
    heads = parse(response.text).one("table", id="compare-table").one("thead").text()
    assert "NVIDIA DGX B200" in heads


def test_markdown_block_and_file_hold_the_same_table(web: TestClient) -> None:
    api = web.get("/api/v1/compare", params={"builds": STORY}).json()
    doc = parse(web.get("/compare", params={"builds": STORY}).text)
    block = doc.one("pre", id="compare-markdown").text()
    md = web.get("/compare.md", params={"builds": STORY})
    assert md.headers["content-type"].startswith("text/markdown")
    header = "| | " + " | ".join(b["name"] for b in api["builds"]) + " |"
    assert md.text.splitlines()[0].replace("|  |", "| |") == header
    assert len(md.text.strip().splitlines()) == len(api["rows"]) + 2
    assert " ".join(md.text.split()) == " ".join(block.split())
    button = doc.one("button", **{"data-copy-from": "compare-markdown"})
    assert "hidden" in button.attrs  # shown by JavaScript only


def test_unknown_build_is_left_out_with_a_notice(web: TestClient) -> None:
    response = web.get("/compare", params={"builds": "dgx-h200,nope,2x-dgx-h200-cluster"})
    assert response.status_code == 200
    doc = parse(response.text)
    assert "nope" in doc.one(class_="notices").text()
    assert len(doc.one("table", id="compare-table").one("thead").find_all("th")) == 2


def test_one_build_asks_for_another_with_a_picker(web: TestClient) -> None:
    doc = parse(web.get("/compare", params={"builds": "dgx-h200"}).text)
    assert "Pick 1 more build" in doc.one(class_="notices").text()
    checked = [i.attrs["value"] for i in doc.find_all("input", type="checkbox")
               if "checked" in i.attrs]
    assert checked == ["dgx-h200"]


def test_too_many_builds_keeps_six_with_a_notice(web: TestClient) -> None:
    slugs = [b["slug"] for b in web.get("/api/v1/builds", params={"per_page": 8}).json()["items"]]
    doc = parse(web.get("/compare", params={"builds": ",".join(slugs)}).text)
    assert "at most 6" in doc.one(class_="notices").text()
    assert len(doc.one("table", id="compare-table").one("thead").find_all("th")) == 6


def test_bad_model_parameters_give_notices_not_errors(web: TestClient) -> None:
    for params in ({"model": "nope"}, {"precision": "fp7"}, {"context_tokens": "x"},
                   {"batch": "0"}):
        response = web.get("/compare", params={"builds": STORY, **params})
        assert response.status_code == 200, params
        assert parse(response.text).find(class_="notices") is not None, params
