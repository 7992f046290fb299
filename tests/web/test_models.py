"""Model list and profile pages."""

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.services.records import MODEL, get_record

from ._html import parse


def test_list_matches_the_api_and_filters_by_attention(web: TestClient) -> None:
    api = web.get("/api/v1/models", params={"attention": "mla"}).json()
    doc = parse(web.get("/models", params={"attention": "mla"}).text)
    names = [r.one("th").text() for r in doc.one("table").one("tbody").find_all("tr")]
    assert names == [m["name"] for m in api["items"]]
    assert 0 < api["total"] < web.get("/api/v1/models").json()["total"]


def test_profile_shows_parameters_attention_and_kv_bytes_per_token(
    web: TestClient, db: Session
) -> None:
    profile = get_record(db, MODEL, "deepseek-v3")
    text = parse(web.get("/models/deepseek-v3").text).one("main").text()
    assert (profile.params_total, profile.params_active) == (671_000_000_000, 37_000_000_000)
    assert "671B" in text and "37B" in text
    assert "Multi-head latent (MLA)" in text
    # MLA caches the 512-wide latent and the 64-wide RoPE key: (512 + 64) × 61 layers × 2 bytes.
    assert "70,272 bytes at BF16" in text


def test_builds_that_run_it_are_the_recommend_services_cheapest_first(web: TestClient) -> None:
    api = web.get("/api/v1/recommend", params={"model": "llama-3-1-70b"}).json()
    doc = parse(web.get("/models/llama-3-1-70b").text)
    table = next(t for t in doc.find_all("table") if "cheapest first" in t.one("caption").text())
    names = [r.one("th").text() for r in table.one("tbody").find_all("tr")]
    assert names == [i["build"]["name"] for i in api["items"]]
    prices = [i["build"]["price_usd"] for i in api["items"] if i["build"]["price_usd"]]
    assert prices == sorted(prices)


def test_precision_changes_which_builds_run_it(web: TestClient) -> None:
    def count(precision: str) -> int:
        doc = parse(web.get("/models/llama-3-1-405b", params={"precision": precision}).text)
        return int(doc.one(role="status").one("strong").text())

    assert count("int4") > count("bf16")


def test_unknown_model_is_a_404_page(web: TestClient) -> None:
    response = web.get("/models/not-a-model")
    assert response.status_code == 404
    assert "not-a-model" in response.text


def test_bad_list_parameters_give_notices(web: TestClient) -> None:
    response = web.get("/models", params={"attention": "psychic", "min_params_b": "-3"})
    assert response.status_code == 200
    notices = parse(response.text).one(class_="notices").text()
    assert "attention" in notices and "min_params_b" in notices
