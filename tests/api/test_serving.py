"""POST /api/v1/serving: the curve, the SLO operating point, sizing, speculation and errors."""

from dataclasses import replace

import pytest

from app.engine import CostAssumptions, Workload
from app.engine.serving import ServiceLevel, ServingWorkload, Speculative, serving_curve
from app.schemas.serving import ServingOut

from ._support import problem_fields

DGX = "dgx-h200"
DESKTOP = "4x-rtx-4090-workstation"
POINT_FIELDS = {
    "concurrency",
    "tokens_per_s_per_user",
    "tokens_per_s_total",
    "tokens_per_s_per_accelerator",
    "ttft_s",
    "itl_ms",
    "usd_per_million_input_tokens",
    "usd_per_million_output_tokens",
}


def post(api, body):
    return api.post("/api/v1/serving", json=body)


def test_the_curve_has_the_contract_fields_and_matches_the_engine(api, catalog):
    body = {"build": DGX, "model": "llama-3-1-70b", "serving": {"input_tokens": 1024,
                                                               "output_tokens": 512}}
    answer = post(api, body).json()
    ServingOut.model_validate(answer)
    assert set(answer) >= {"curve", "at_slo", "plan", "findings", "assumptions"}
    assert answer["estimated"] is True and answer["at_slo"] is None
    assert all(set(p) >= POINT_FIELDS for p in answer["curve"])
    expected = serving_curve(
        catalog.build_specs[DGX],
        catalog.model_specs["llama-3-1-70b"],
        Workload(precision="fp8", context_tokens=4096, prompt_tokens=2048),
        ServingWorkload(1024, 512),
        ServiceLevel(),
        CostAssumptions(),
    )
    assert [p["concurrency"] for p in answer["curve"]] == [p.concurrency for p in expected.curve]
    assert answer["curve"][-1]["itl_ms"] == pytest.approx(expected.curve[-1].itl_ms)
    assert answer["plan"]["description"] == expected.plan.description
    assert answer["serving"]["input_tokens"] == 1024 and answer["serving"]["output_tokens"] == 512


def test_lengths_default_from_the_workload(api):
    answer = post(api, {"build": DGX, "model": "llama-3-1-8b",
                        "workload": {"context_tokens": 3000, "prompt_tokens": 1000}}).json()
    assert answer["serving"]["input_tokens"] == 1000
    assert answer["serving"]["output_tokens"] == 2000


def test_the_operating_point_meets_the_slo_and_sizes_the_load(api):
    serving = {"input_tokens": 1024, "output_tokens": 1024, "ttft_s_max": 1,
               "tokens_per_s_per_user_min": 30, "concurrent_users": 2000}
    answer = post(api, {"build": DGX, "model": "llama-3-1-70b", "serving": serving}).json()
    at = answer["at_slo"]
    assert at is not None
    assert at["ttft_s"] <= 1 and at["tokens_per_s_per_user"] >= 30
    assert at["copies_needed"] * at["concurrency"] >= 2000
    assert (at["copies_needed"] - 1) * at["concurrency"] < 2000
    assert at["accelerators_needed"] == at["copies_needed"] * answer["build"]["accelerator_count"]
    assert "2,000 concurrent users" in at["summary"] and "estimate" in at["summary"]
    doubled = dict(serving, concurrent_users=4000 * at["concurrency"])
    single = dict(serving, concurrent_users=2000 * at["concurrency"])
    big = post(api, {"build": DGX, "model": "llama-3-1-70b", "serving": doubled}).json()
    small = post(api, {"build": DGX, "model": "llama-3-1-70b", "serving": single}).json()
    assert big["at_slo"]["copies_needed"] == 2 * small["at_slo"]["copies_needed"]


def test_mtp_uses_deepseeks_published_acceptance_and_speeds_up_one_user(api, catalog):
    base = {"build": DGX, "model": "deepseek-v3",
            "serving": {"input_tokens": 1024, "output_tokens": 1024}}
    plain = post(api, base).json()
    mtp_body = {**base, "serving": {**base["serving"], "speculative": {"kind": "mtp"}}}
    mtp = post(api, mtp_body).json()
    assert mtp["serving"]["acceptance_rate"] == 0.85 and mtp["serving"]["draft_tokens"] == 1
    assert mtp["curve"][0]["tokens_per_s_per_user"] > plain["curve"][0]["tokens_per_s_per_user"]
    expected = serving_curve(
        catalog.build_specs[DGX],
        catalog.model_specs["deepseek-v3"],
        Workload(precision="fp8", context_tokens=4096, prompt_tokens=2048),
        replace(ServingWorkload(1024, 1024), speculative=Speculative("mtp")),
    )
    assert mtp["curve"][0]["itl_ms"] == pytest.approx(expected.curve[0].itl_ms)


def test_a_draft_model_by_slug(api):
    body = {"build": DGX, "model": "llama-3-1-70b", "serving": {
        "speculative": {"kind": "draft", "draft_model": "llama-3-2-3b", "acceptance_rate": 0.7}}}
    answer = post(api, body).json()
    assert answer["serving"]["draft_model"] == "llama-3-2-3b"
    assert answer["curve"][0]["tokens_per_step"] > 1


def test_a_model_that_does_not_fit_answers_an_empty_curve(api):
    answer = post(api, {"build": DESKTOP, "model": "deepseek-v3",
                        "serving": {"concurrent_users": 10}}).json()
    assert answer["fits"] is False and answer["curve"] == [] and answer["at_slo"] is None


@pytest.mark.parametrize(
    ("serving", "field"),
    [
        ({"ttft_s_max": -1}, "serving.ttft_s_max"),
        ({"input_tokens": 0}, "serving.input_tokens"),
        ({"concurrent_users": 1.5}, "serving.concurrent_users"),
        ({"speculative": {"kind": "eagle"}}, "serving.speculative.kind"),
        ({"speculative": {"kind": "mtp", "acceptance_rate": 1.2}},
         "serving.speculative.acceptance_rate"),
        ({"speculative": {"kind": "draft"}}, "serving.speculative"),
        ({"tokens": 3}, "serving.tokens"),
    ],
)
def test_bad_serving_fields_are_422_naming_them(api, serving, field):
    response = post(api, {"build": DGX, "model": "llama-3-1-8b", "serving": serving})
    assert response.status_code == 422
    assert field in problem_fields(response)


def test_mtp_without_a_published_acceptance_is_422_naming_it(api):
    body = {"build": DGX, "model": "llama-3-1-8b", "serving": {"speculative": {"kind": "mtp"}}}
    response = post(api, body)
    assert response.status_code == 422
    assert problem_fields(response) == ["serving.speculative.acceptance_rate"]


def test_unknown_draft_model_is_404_naming_it(api):
    body = {"build": DGX, "model": "llama-3-1-70b", "serving": {
        "speculative": {"kind": "draft", "draft_model": "no-such-model"}}}
    response = post(api, body)
    assert response.status_code == 404
    assert problem_fields(response) == ["serving.speculative.draft_model"]


def test_the_endpoint_is_documented(api):
    spec = api.get("/openapi.json").json()
    op = spec["paths"]["/api/v1/serving"]["post"]
    assert op["operationId"] == "serving" and "422" in op["responses"]


@pytest.mark.parametrize(
    "serving",
    [
        {"input_tokens": 10**12},
        {"output_tokens": "many"},
        {"concurrent_users": 10**12},
        {"requests_per_s": 1e300},
        {"speculative": "mtp"},
        {"speculative": {"kind": "draft", "draft_model": "\x00"}},
        {"speculative": {"kind": "draft", "acceptance_rate": 0.5, "draft_model": {
            "name": "x", "config": {"hidden_size": 10**12, "num_hidden_layers": 10**12,
                                    "num_attention_heads": 1, "vocab_size": 10**12}}}},
    ],
)
def test_hostile_serving_input_is_4xx_and_never_500(api, serving):
    response = post(api, {"build": DGX, "model": "llama-3-1-8b", "serving": serving})
    assert 400 <= response.status_code < 500, response.text[:300]
    assert response.headers["content-type"].startswith("application/problem+json")


def test_a_very_large_inline_build_answers(api):
    build = {"name": "big", "nodes": 512, "accelerators_per_node": 8,
             "accelerator": "h200-sxm", "intra_node_link": {"kind": "nvswitch"},
             "inter_node_link": {"kind": "infiniband", "bandwidth_gbps": 3200}}
    response = post(api, {"build": build, "model": "llama-3-2-3b",
                          "serving": {"concurrent_users": 10**6}})
    assert response.status_code == 200, response.text[:300]
    answer = response.json()
    assert answer["curve"] and answer["at_slo"]["copies_needed"] >= 1
    assert answer["max_concurrency"] > 10_000


def test_a_request_rate_is_sized_with_queueing_inside_the_ttft_limit(api):
    serving = {"input_tokens": 1024, "output_tokens": 512, "ttft_s_max": 1, "requests_per_s": 40}
    at = post(api, {"build": DGX, "model": "llama-3-1-8b", "serving": serving}).json()["at_slo"]
    assert at["ttft_s"] <= 1 and at["queue_wait_s"] >= 0
    assert 0 < at["utilization"] < 1
    assert at["copies_needed"] * at["requests_per_s"] >= 40
    assert "of its capacity" in at["summary"]
