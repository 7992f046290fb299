"""Recommend's empty or short answer: why builds were excluded and the nearest misses."""

from typing import Any

from fastapi.testclient import TestClient

from app.engine import PRECISIONS

from ._html import parse

LIMITS = {"model": "llama-3-3-70b", "min_decode_tokens_per_s": "60", "max_price_usd": "5000"}


def _api(web: TestClient, params: dict[str, str]) -> dict[str, Any]:
    response = web.get("/api/v1/recommend", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_excluded_counts_each_limit_against_the_unlimited_answer(web: TestClient) -> None:
    limited = _api(web, LIMITS)
    everyone = _api(web, {"model": LIMITS["model"]})["items"]
    speed, price = float(LIMITS["min_decode_tokens_per_s"]), float(LIMITS["max_price_usd"])
    assert limited["excluded"] == {
        "does_not_fit": limited["considered"] - limited["fitting"],
        "too_slow": sum(i["decode_tokens_per_s"] < speed for i in everyone),
        "over_max_price": sum((i["build"]["price_usd"] or 0) > price for i in everyone),
        "unpriced": sum(i["build"]["price_usd"] is None for i in everyone),
    }
    assert limited["excluded"]["too_slow"] and limited["excluded"]["over_max_price"]


def test_nearest_misses_are_the_cheapest_too_slow_and_the_fastest_too_expensive(
    web: TestClient,
) -> None:
    misses = _api(web, LIMITS)["nearest_misses"]
    everyone = _api(web, {"model": LIMITS["model"]})["items"]
    speed, price = float(LIMITS["min_decode_tokens_per_s"]), float(LIMITS["max_price_usd"])
    slow = [i for i in everyone if i["decode_tokens_per_s"] < speed
            and i["build"]["price_usd"] is not None and i["build"]["price_usd"] <= price]
    pricey = [i for i in everyone if i["decode_tokens_per_s"] >= speed
              and (i["build"]["price_usd"] or 0) > price]
    # Ties go to the lower slug, as in the ranking.
    cheapest = min(slow, key=lambda i: (i["build"]["price_usd"], i["build"]["slug"]))
    fastest = min(pricey, key=lambda i: (-i["decode_tokens_per_s"], i["build"]["slug"]))
    assert misses["cheapest_too_slow"]["build"]["slug"] == cheapest["build"]["slug"]
    assert misses["fastest_too_expensive"]["build"]["slug"] == fastest["build"]["slug"]
    assert misses["fastest_too_expensive"]["decode_tokens_per_s"] == fastest["decode_tokens_per_s"]


def test_precision_that_fits_is_the_highest_lower_one_that_lets_more_through(
    web: TestClient,
) -> None:
    params = {"model": "deepseek-v3", "precision": "bf16", "max_price_usd": "20000"}
    answer = _api(web, params)
    assert answer["items"] == []
    fit = answer["nearest_misses"]["precision_that_fits"]
    assert fit is not None
    there = _api(web, {**params, "precision": fit["precision"]})
    assert (there["fitting"], len(there["items"])) == (fit["fitting"], fit["passing"])
    assert fit["passing"] > 0
    bits = {p.name: p.bits_per_weight for p in PRECISIONS.values()}
    between = [p for p, b in bits.items() if bits[fit["precision"]] < b < bits["bf16"]]
    for precision in between:
        assert _api(web, {**params, "precision": precision})["items"] == [], precision


def test_a_full_answer_tries_no_lower_precision(web: TestClient) -> None:
    answer = _api(web, {"model": "llama-3-3-70b"})
    assert len(answer["items"]) >= 3
    assert answer["nearest_misses"]["precision_that_fits"] is None


def test_the_empty_page_names_the_limits_and_links_past_each_miss(web: TestClient) -> None:
    doc = parse(web.get("/recommend", params=LIMITS).text)
    section = doc.one(class_="nearest-misses")
    text = section.text()
    answer = _api(web, LIMITS)
    assert f"{answer['excluded']['too_slow']} hold it but decode slower" in text
    assert f"{answer['excluded']['over_max_price']} hold it but cost more" in text
    assert "no catalog build runs" not in doc.text()
    link = section.one(class_="miss-too-slow").find_all("a")[-1].attrs["href"]
    relaxed = parse(web.get(link).text).one("table").one("tbody").text()
    assert answer["nearest_misses"]["cheapest_too_slow"]["build"]["name"] in relaxed


def test_a_full_page_has_no_misses_section(web: TestClient) -> None:
    doc = parse(web.get("/recommend", params={"model": "llama-3-3-70b"}).text)
    assert doc.find(class_="nearest-misses") is None
