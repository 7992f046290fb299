"""GET /api/v1/recommend (ranking, filters, Pareto front) and GET /api/v1/tiers."""

import pytest

from app.engine import rule_of_thumb_gb

from ._support import problem_fields


def recommend(api, **params):
    response = api.get("/api/v1/recommend", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_recommend_lists_exactly_the_builds_that_fit_cheapest_first(api, catalog):
    body = recommend(api, model="llama-3-1-70b")
    fitting = {s for s in catalog.builds if catalog.estimate(s, "llama-3-1-70b").fits}
    assert {i["build"]["slug"] for i in body["items"]} == fitting
    assert body["fitting"] == len(fitting) and body["considered"] == len(catalog.builds)
    assert [i["rank"] for i in body["items"]] == list(range(1, len(fitting) + 1))
    prices = [i["build"]["price_usd"] for i in body["items"]]
    known = [p for p in prices if p is not None]
    assert prices == known + [None] * (len(prices) - len(known))
    assert known == sorted(known)
    assert all(i["fits"] and i["decode_tokens_per_s"] > 0 for i in body["items"])
    size = rule_of_thumb_gb(catalog.models["llama-3-1-70b"].params_total, "fp8")
    assert body["model"]["rule_of_thumb_gb"] == pytest.approx(size)


def test_pareto_front_is_the_set_of_undominated_builds(api):
    items = recommend(api, model="llama-3-1-8b", precision="bf16")["items"]
    points = [
        (i["build"]["slug"], i["build"]["price_usd"], i["decode_tokens_per_s"]) for i in items
    ]
    priced = [p for p in points if p[1] is not None]
    expected = {
        slug
        for slug, price, speed in priced
        if not any(
            (p <= price and s >= speed) and (p < price or s > speed) for _, p, s in priced
        )
    }
    assert expected and {i["build"]["slug"] for i in items if i["pareto"]} == expected
    cheapest = min(priced, key=lambda p: (p[1], -p[2]))
    fastest = max(priced, key=lambda p: (p[2], -p[1]))
    assert {cheapest[0], fastest[0]} <= expected
    assert len(expected) < len(priced)  # some builds are dominated


def test_recommend_sorts_and_filters(api):
    fast = recommend(api, model="llama-3-1-8b", sort="-decode_tokens_per_s")["items"]
    speeds = [i["decode_tokens_per_s"] for i in fast]
    assert speeds == sorted(speeds, reverse=True)
    cheap_tokens = recommend(api, model="llama-3-1-8b", sort="usd_per_million_tokens")["items"]
    costs = [i["usd_per_million_tokens"] for i in cheap_tokens if i["usd_per_million_tokens"]]
    assert costs == sorted(costs)
    threshold = sorted(speeds)[len(speeds) // 2]
    filtered = recommend(api, model="llama-3-1-8b", min_decode_tokens_per_s=threshold)["items"]
    assert filtered and all(i["decode_tokens_per_s"] >= threshold for i in filtered)
    assert len(filtered) < len(fast)
    capped = recommend(api, model="llama-3-1-8b", max_price_usd=50_000)["items"]
    assert capped and all(0 <= i["build"]["price_usd"] <= 50_000 for i in capped)


def test_recommend_batch_and_context_change_the_answer(api):
    one = recommend(api, model="deepseek-v3")
    many = recommend(api, model="deepseek-v3", batch=64, context_tokens=32768)
    assert many["fitting"] <= one["fitting"]
    assert many["workload"]["batch"] == 64


@pytest.mark.parametrize(
    ("params", "status", "field"),
    [
        ({}, 422, "model"),
        ({"model": "no-such-model"}, 404, "model"),
        ({"model": "deepseek-v3", "sort": "name"}, 422, "sort"),
        ({"model": "deepseek-v3", "batch": 100_001}, 422, "batch"),
        ({"model": "deepseek-v3", "context_tokens": 0}, 422, "context_tokens"),
        ({"model": "deepseek-v3", "min_decode_tokens_per_s": "inf"}, 422,
         "min_decode_tokens_per_s"),
        ({"model": "deepseek-v3", "precision": "\x00"}, 422, "precision"),
    ],
)
def test_recommend_errors(api, params, status, field):
    response = api.get("/api/v1/recommend", params=params)
    assert response.status_code == status and field in problem_fields(response)


def test_tiers_in_order_with_every_build_once(api, catalog):
    body = api.get("/api/v1/tiers").json()
    assert [t["tier"] for t in body["tiers"]] == ["desktop", "dgx", "cluster"]
    assert body["precision"] == "fp8"
    seen = [b["slug"] for t in body["tiers"] for b in t["builds"]]
    assert sorted(seen) == sorted(catalog.builds)
    for tier in body["tiers"]:
        assert all(catalog.builds[b["slug"]].tier == tier["tier"] for b in tier["builds"])
        prices = [b["price_usd"] for b in tier["builds"]]
        known = [p for p in prices if p is not None]
        assert prices == known + [None] * (len(prices) - len(known)) and known == sorted(known)


def test_tiers_pooled_memory(api):
    builds = {b["slug"]: b for t in api.get("/api/v1/tiers").json()["tiers"] for b in t["builds"]}
    assert builds["2x-dgx-h200-cluster"]["pooled_memory_gb"] == 8 * 141
    assert builds["2x-dgx-h200-cluster"]["total_memory_gb"] == 2256
    assert builds["4x-rtx-4090-workstation"]["pooled_memory_gb"] == 24
    for b in builds.values():
        assert b["pooled_memory_gb"] <= b["total_memory_gb"]


@pytest.mark.parametrize("precision", ["fp8", "bf16"])
def test_largest_model_is_the_biggest_that_fits(api, catalog, precision):
    body = api.get("/api/v1/tiers", params={"precision": precision}).json()
    by_size = sorted(catalog.models, key=lambda s: -catalog.models[s].params_total)
    for tier in body["tiers"]:
        for build in tier["builds"]:
            fitting = [
                m for m in by_size if catalog.estimate(build["slug"], m, precision=precision).fits
            ]
            largest = build["largest_model"]
            if not fitting:
                assert largest is None
                continue
            top = catalog.models[fitting[0]].params_total
            assert largest["params_total"] == top


def test_tiers_story_builds(api):
    builds = {b["slug"]: b for t in api.get("/api/v1/tiers").json()["tiers"] for b in t["builds"]}
    cluster_model = builds["2x-dgx-h200-cluster"]["largest_model"]
    desktop_model = builds["4x-rtx-4090-workstation"]["largest_model"]
    assert cluster_model["params_total"] >= 671e9
    assert desktop_model is None or desktop_model["params_total"] < 671e9


def test_tiers_precision_is_validated(api):
    response = api.get("/api/v1/tiers", params={"precision": "fp9"})
    assert response.status_code == 422 and problem_fields(response) == ["precision"]


def test_recommend_answers_the_15000_dollar_70b_question(api):
    params = {
        "model": "llama-3-3-70b",
        "min_decode_tokens_per_s": 20,
        "max_price_usd": 15000,
    }
    body = api.get("/api/v1/recommend", params=params).json()
    assert body["items"], "at least one build runs Llama 3.3 70B at 20 tokens/s for $15,000"
    prices = [i["build"]["price_usd"] for i in body["items"]]
    assert prices == sorted(prices)  # ranked by what was asked: the cheapest that qualifies
    for item in body["items"]:
        assert item["decode_tokens_per_s"] >= 20 and item["build"]["price_usd"] <= 15000
        assert item["runtime"] and item["launch_command"]
    fastest = api.get(
        "/api/v1/recommend", params={**params, "sort": "-decode_tokens_per_s"}
    ).json()["items"]
    speeds = [i["decode_tokens_per_s"] for i in fastest]
    assert speeds == sorted(speeds, reverse=True)


def test_recommend_takes_the_runtime(api):
    params = {"model": "llama-3-3-70b", "precision": "q4_k_m"}
    llama = api.get("/api/v1/recommend", params={**params, "runtime": "llama.cpp"}).json()
    assert llama["items"] and all(i["runtime"] == "llama.cpp" for i in llama["items"])
    assert llama["workload"]["runtime"] == "llama.cpp"
    bad = api.get("/api/v1/recommend", params={**params, "runtime": "nonsense"})
    assert bad.status_code == 422


def test_recommend_takes_the_offload_choice(api):
    url = "/api/v1/recommend?model=gpt-oss-120b&precision=mxfp4&runtime=llama.cpp"
    slugs = {}
    for offload in ("auto", "none"):
        response = api.get(f"{url}&offload={offload}")
        assert response.status_code == 200, response.text
        slugs[offload] = {i["build"]["slug"] for i in response.json()["items"]}
    assert "1x-rtx-4090-128gb-ddr5" in slugs["auto"]
    assert "1x-rtx-4090-128gb-ddr5" not in slugs["none"]
    assert api.get(f"{url}&offload=maybe").status_code == 422
