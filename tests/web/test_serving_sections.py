"""The serving curve on the build page and on compare (issue 17): the serving page's answers,
one line per build on compare's chart, the operating point in words, JSON twins."""

from fastapi.testclient import TestClient

from ._html import parse

BUILD = "dgx-h200"
OTHER = "4x-rtx-4090-workstation"
MODEL = "llama-3-1-8b"
LIMITS = {"ttft_s_max": "1", "tokens_per_s_per_user_min": "30", "concurrent_users": "500"}


def test_build_page_shows_the_serving_curve_of_the_serving_page(web: TestClient) -> None:
    params = {"model": MODEL, "precision": "fp8", **LIMITS}
    doc = parse(web.get(f"/builds/{BUILD}", params=params).text)
    section = doc.one(id="serving-section")
    twin = web.get("/serving.json", params={"build": BUILD, **params}).json()
    rows = section.one(id="curve-caption").parent.one("tbody").find_all("tr")
    assert len(rows) == len(twin["curve"]) > 1
    assert twin["at_slo"] is not None
    assert twin["at_slo"]["summary"] in section.text()
    img = section.one("img")
    assert img.attrs["src"].startswith("/serving/curve.svg?")
    chart = web.get(img.attrs["src"] or "")
    assert chart.status_code == 200 and chart.headers["content-type"].startswith("image/svg")
    links = {a.attrs.get("href") for a in section.find_all("a")}
    assert any(h and h.startswith("/serving.json?") and f"build={BUILD}" in h for h in links)


def test_build_page_defaults_to_the_largest_model_with_a_serving_curve(
    web: TestClient,
) -> None:
    doc = parse(web.get(f"/builds/{BUILD}").text)
    section = doc.one(id="serving-section")
    chosen = section.one("select", name="model").one("option", selected=None)
    assert section.find("img") is not None  # a curve is drawn
    runs = doc.one(id="runs-caption").parent.one("tbody").find_all("tr")
    slugs = [(tr.one("a").attrs["href"] or "").rsplit("/", 1)[-1] for tr in runs]
    for larger in slugs[: slugs.index(chosen.attrs["value"] or "")]:
        page = parse(web.get(f"/builds/{BUILD}", params={"model": larger}).text)
        assert page.one(id="serving-section").find("img") is None, larger


def test_build_page_names_a_refused_serving_limit(web: TestClient) -> None:
    response = web.get(f"/builds/{BUILD}", params={"model": MODEL, "ttft_s_max": "-1"})
    assert response.status_code == 422
    section = parse(response.text).one(id="serving-section")
    assert "ttft_s_max" in section.text()


def test_compare_draws_one_serving_line_per_build(web: TestClient) -> None:
    params = {"builds": f"{BUILD},{OTHER}", "model": MODEL, **LIMITS}
    doc = parse(web.get("/compare", params=params).text)
    section = doc.one(id="serving-section")
    twin = web.get("/compare/serving.json", params=params).json()
    assert [b["build"] for b in twin["builds"]] == [BUILD, OTHER]
    for entry in twin["builds"]:
        answer = entry["answer"]
        assert answer["model"]["slug"] == MODEL
        assert answer["build"]["name"] in section.text()
        if answer["at_slo"]:
            assert answer["at_slo"]["summary"] in section.text()
    svg = web.get(section.one("img").attrs["src"] or "").text
    for entry in twin["builds"]:
        if entry["answer"]["curve"]:
            assert entry["answer"]["build"]["name"] in svg  # the legend names each line


def test_compare_serving_twin_refuses_too_few_builds(web: TestClient) -> None:
    response = web.get("/compare/serving.json", params={"builds": BUILD, "model": MODEL})
    assert response.status_code == 422
