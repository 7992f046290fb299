"""GET /api/v1/recommend at a service level (issue 17): SLO parameters, the ranking at the
operating point, sizing for concurrent users, and the limit a build cannot meet."""

import math
from typing import Any

import pytest
from fastapi.testclient import TestClient

MODEL = "llama-3-3-70b"
WORKLOAD = {"model": MODEL, "precision": "int4"}
SLO = {"ttft_s_max": 2, "tokens_per_s_per_user_min": 20, "concurrent_users": 50}


def _recommend(api: TestClient, **params: Any) -> dict[str, Any]:
    response = api.get("/api/v1/recommend", params={**WORKLOAD, **params})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_without_slo_parameters_the_answer_is_unchanged(api: TestClient) -> None:
    plain = _recommend(api)
    assert plain["at_slo"] is None
    with_slo = _recommend(api, **SLO)
    assert with_slo["items"] == plain["items"]  # the existing ranking stays as it was


def _unknown_last(values: list[float | None]) -> list[float | None]:
    return sorted(values, key=lambda c: (c is None, c or 0.0))


def test_builds_at_the_slo_meet_the_limits_cheapest_per_output_token_first(
    api: TestClient,
) -> None:
    limits = {k: v for k, v in SLO.items() if k != "concurrent_users"}
    at = _recommend(api, **limits)["at_slo"]
    items = at["items"]
    assert items, "some build should serve users at 20 tokens/s within 2 s"
    for item in items:
        assert item["ttft_s"] <= SLO["ttft_s_max"]
        assert item["tokens_per_s_per_user"] >= SLO["tokens_per_s_per_user_min"]
        assert item["usd_per_million_output_tokens_at_load"] is None  # no load given
    costs = [i["usd_per_million_output_tokens"] for i in items]
    assert costs == _unknown_last(costs)
    assert [i["rank"] for i in items] == list(range(1, len(items) + 1))


def test_with_a_load_builds_rank_by_the_cost_the_load_bears(api: TestClient) -> None:
    items = _recommend(api, **SLO)["at_slo"]["items"]
    for item in items:
        if item["usd_per_million_output_tokens"] is not None:
            slots = item["copies_needed"] * item["concurrency"]
            expected = item["usd_per_million_output_tokens"] * slots / SLO["concurrent_users"]
            assert item["usd_per_million_output_tokens_at_load"] == pytest.approx(expected)
    costs = [i["usd_per_million_output_tokens_at_load"] for i in items]
    assert costs == _unknown_last(costs)
    # A rack with thousands of slots for 50 users pays for its idle ones: it is not first.
    assert items[0]["copies_needed"] * items[0]["concurrency"] < 1000


def test_copies_are_sized_for_the_concurrent_users(api: TestClient) -> None:
    for item in _recommend(api, **SLO)["at_slo"]["items"]:
        assert item["copies_needed"] == math.ceil(SLO["concurrent_users"] / item["concurrency"])
        price = item["build"]["price_usd"]
        if price is not None:
            assert item["price_usd_for_copies"] == price * item["copies_needed"]


def test_every_listed_build_is_ranked_or_says_why_not(api: TestClient) -> None:
    body = _recommend(api, **SLO)
    at = body["at_slo"]
    ranked = {i["build"]["slug"] for i in at["items"]}
    missed = {m["build"]["slug"] for m in at["missed"]}
    assert not ranked & missed
    assert ranked | missed == {i["build"]["slug"] for i in body["items"]}


def test_a_build_that_cannot_meet_the_slo_names_the_limit_one_request_misses(
    api: TestClient,
) -> None:
    misses = [m for m in _recommend(api, **SLO)["at_slo"]["missed"] if m["one_request"]]
    assert misses
    for miss in misses:
        one = miss["one_request"]
        assert one["concurrency"] == 1
        broken = {
            "ttft_s_max": one["ttft_s"] > SLO["ttft_s_max"],
            "tokens_per_s_per_user_min": one["tokens_per_s_per_user"]
            < SLO["tokens_per_s_per_user_min"],
        }
        assert miss["limits"] == [name for name, b in broken.items() if b]


def test_the_operating_point_is_the_serving_endpoints_for_that_build(api: TestClient) -> None:
    top = _recommend(api, **SLO)["at_slo"]["items"][0]
    serving = api.post(
        "/api/v1/serving",
        json={
            "build": top["build"]["slug"],
            "model": MODEL,
            "workload": {"precision": "int4"},
            "serving": SLO,
        },
    ).json()["at_slo"]
    for key in ("concurrency", "tokens_per_s_per_user", "ttft_s", "copies_needed"):
        assert top[key] == serving[key]


def test_a_tighter_limit_admits_no_more_builds(api: TestClient) -> None:
    loose = _recommend(api, tokens_per_s_per_user_min=10)["at_slo"]["items"]
    tight = _recommend(api, tokens_per_s_per_user_min=40)["at_slo"]["items"]
    assert {i["build"]["slug"] for i in tight} < {i["build"]["slug"] for i in loose}


def test_a_bad_slo_parameter_is_a_422_naming_it(api: TestClient) -> None:
    response = api.get("/api/v1/recommend", params={**WORKLOAD, "ttft_s_max": -1})
    assert response.status_code == 422
    assert any(e["field"] == "ttft_s_max" for e in response.json()["errors"])
