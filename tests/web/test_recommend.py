"""The recommend page: the recommend service's ranking, Pareto front in words, chart."""

import re

from fastapi.testclient import TestClient

from ._html import parse


def test_ranking_and_pareto_front_match_the_api(web: TestClient) -> None:
    params = {"model": "llama-3-1-70b", "sort": "usd_per_million_tokens", "batch": "8"}
    api = web.get("/api/v1/recommend", params=params).json()
    doc = parse(web.get("/recommend", params=params).text)
    rows = doc.one("table").one("tbody").find_all("tr")
    assert [r.one("th").text() for r in rows] == [i["build"]["name"] for i in api["items"]]
    front = [r.one("th").text() for r in rows if "On the front" in r.text()]
    assert front == [i["build"]["name"] for i in api["items"] if i["pareto"]]
    assert front, "the front is never empty when a priced build fits"


def test_limits_narrow_the_list(web: TestClient) -> None:
    api = web.get("/api/v1/recommend", params={"model": "llama-3-1-70b"}).json()
    limit = sorted(i["build"]["price_usd"] for i in api["items"] if i["build"]["price_usd"])[2]
    doc = parse(web.get("/recommend", params={"model": "llama-3-1-70b",
                                              "max_price_usd": str(limit)}).text)
    assert len(doc.one("table").one("tbody").find_all("tr")) == 3


def test_chart_is_svg_with_the_front(web: TestClient) -> None:
    response = web.get("/recommend/chart.svg", params={"model": "llama-3-1-70b"})
    assert response.status_code == 200
    assert "Pareto front" in response.text


def test_unknown_model_is_a_404_page_with_the_form(web: TestClient) -> None:
    response = web.get("/recommend", params={"model": "nope"})
    assert response.status_code == 404
    assert "nope" in parse(response.text).one(class_="notices").text()


def test_without_a_model_the_page_is_the_form(web: TestClient) -> None:
    response = web.get("/recommend")
    assert response.status_code == 200
    assert parse(response.text).find("table") is None


def test_runtime_and_parallelism_are_choices_and_items_say_how_to_run(web: TestClient) -> None:
    params = {"model": "llama-3-3-70b", "min_decode_tokens_per_s": "20", "max_price_usd": "15000"}
    doc = parse(web.get("/recommend", params=params).text)
    assert doc.find("select", id="f-runtime") is not None
    assert doc.find("select", id="f-parallelism") is not None
    api = web.get("/api/v1/recommend", params=params).json()
    assert api["items"]
    text = doc.one("table").text()
    for item in api["items"]:
        assert item["launch_command"] in text and item["runtime"] in text


def test_recommend_chart_has_a_phone_variant(web: TestClient) -> None:
    page = web.get("/recommend", params={"model": "llama-3-1-8b"}).text
    assert 'media="(max-width: 40rem)"' in page
    wide = web.get("/recommend/chart.svg", params={"model": "llama-3-1-8b"})
    phone = web.get("/recommend/chart.svg", params={"model": "llama-3-1-8b", "size": "phone"})
    assert phone.status_code == 200 and phone.headers["content-type"].startswith("image/svg")
    width, height = (float(v) for v in _svg_size(phone.text))
    wide_width, wide_height = (float(v) for v in _svg_size(wide.text))
    assert height > width  # taller than wide, for a phone held upright
    assert wide_width > wide_height


def _svg_size(svg: str) -> tuple[str, str]:
    match = re.search(r'<svg[^>]* width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    assert match, svg[:300]
    return match.group(1), match.group(2)
