"""GET /api/v1/compare: the tier-line rows, the model rows, 2-6 builds, unknown slugs."""

import re

import pytest

from ._support import problem_fields

DESKTOP = "4x-rtx-4090-workstation"
CLUSTER = "2x-dgx-h200-cluster"
TIER_LINE_ROWS = [
    "connection",
    "gpu_to_gpu_bandwidth_gbs",
    "memory_pooling",
    "run_model",
    "failover",
    "scheduling",
    "power_w",
    "total_memory_gb",
    "price_usd",
]


def rows_by_key(body):
    return {r["key"]: r for r in body["rows"]}


def test_tier_line_rows_for_the_story_builds(api, catalog):
    body = api.get("/api/v1/compare", params={"builds": f"{DESKTOP},{CLUSTER}"}).json()
    assert [b["slug"] for b in body["builds"]] == [DESKTOP, CLUSTER]
    rows = rows_by_key(body)
    keys = [r["key"] for r in body["rows"]]
    assert [k for k in keys if k in TIER_LINE_ROWS] == TIER_LINE_ROWS
    for row in body["rows"]:
        assert len(row["values"]) == 2 and len(row["display"]) == 2
        assert row["same"] == (row["values"][0] == row["values"][1])
    assert rows["memory_pooling"]["values"] == [False, True]
    assert rows["memory_pooling"]["display"][0].startswith("No")
    assert rows["total_memory_gb"]["values"] == [96, 2256]
    assert rows["power_w"]["values"] == [catalog.builds[DESKTOP].power_w, 20400]
    assert rows["price_usd"]["values"] == [
        catalog.builds[DESKTOP].price_usd,
        catalog.builds[CLUSTER].price_usd,
    ]
    assert "InfiniBand" in rows["connection"]["display"][1]
    assert rows["failover"]["values"][0] == catalog.builds[DESKTOP].failover


def test_run_model_row_defaults_to_deepseek_v3_at_fp8(api, catalog):
    body = api.get("/api/v1/compare", params={"builds": f"{DESKTOP},{CLUSTER}"}).json()
    run = rows_by_key(body)["run_model"]
    # 671 B parameters × 1 byte × 1.2 (the rule of thumb people quote).
    assert run["label"].startswith(
        "Run a 805 GB model? (805 GB: DeepSeek-V3 at FP8 by the rule of thumb"
    )
    assert run["label"].endswith("each cell: the engine's detailed need)")
    assert body["model"]["slug"] == "deepseek-v3" and body["model"]["given"] is False
    expected = [catalog.estimate(s, "deepseek-v3") for s in (DESKTOP, CLUSTER)]
    assert run["values"] == [e.fits for e in expected] == [False, True]
    assert run["display"] == [e.verdict for e in expected]
    assert "fits" not in rows_by_key(body)  # model rows only when a model is chosen


def test_model_rows_follow_the_engine(api, catalog):
    params = {"builds": f"{DESKTOP},{CLUSTER}", "model": "llama-3-1-70b", "precision": "bf16"}
    body = api.get("/api/v1/compare", params=params).json()
    rows = rows_by_key(body)
    expected = [catalog.estimate(s, "llama-3-1-70b", precision="bf16") for s in (DESKTOP, CLUSTER)]
    # 70 B parameters × 2 bytes × 1.2.
    assert rows["run_model"]["label"].startswith("Run a 168 GB model?")
    assert rows["fits"]["values"] == [e.fits for e in expected]
    for key in ("decode_tokens_per_s", "time_to_first_token_s"):
        assert rows[key]["values"] == [
            getattr(e.throughput, key) if e.throughput else None for e in expected
        ]
    assert rows["usd_per_million_tokens"]["values"] == [
        e.cost.usd_per_million_tokens if e.throughput else None for e in expected
    ]
    assert body["model"]["given"] is True


@pytest.mark.parametrize(
    "builds",
    [DESKTOP, f"{DESKTOP},{DESKTOP}", f"{DESKTOP},,{CLUSTER}", ",".join(["a"] * 7), "",
     f"{DESKTOP};{CLUSTER}", f"{DESKTOP},Not-A-Slug", f"{DESKTOP}\t,{CLUSTER}"],
)
def test_two_to_six_distinct_builds(api, builds):
    response = api.get("/api/v1/compare", params={"builds": builds})
    assert response.status_code == 422 and problem_fields(response) == ["builds"]


def test_six_builds_are_accepted(api):
    slugs = [i["slug"] for i in api.get("/api/v1/builds", params={"per_page": 6}).json()["items"]]
    body = api.get("/api/v1/compare", params={"builds": ",".join(slugs)}).json()
    assert all(len(r["values"]) == 6 for r in body["rows"])


def test_missing_builds_parameter(api):
    response = api.get("/api/v1/compare")
    assert response.status_code == 422 and problem_fields(response) == ["builds"]


def test_unknown_slugs_are_404_naming_the_parameter(api):
    response = api.get("/api/v1/compare", params={"builds": f"{DESKTOP},no-such-build"})
    assert response.status_code == 404 and problem_fields(response) == ["builds"]
    assert "no-such-build" in response.json()["detail"]
    response = api.get("/api/v1/compare", params={"builds": f"{DESKTOP},{CLUSTER}", "model": "x"})
    assert response.status_code == 404 and problem_fields(response) == ["model"]


def test_builds_format_is_documented_and_matches_what_is_accepted(api):
    spec = api.get("/openapi.json").json()
    (param,) = [p for p in spec["paths"]["/api/v1/compare"]["get"]["parameters"]
                if p["name"] == "builds"]
    pattern = re.compile(param["schema"]["pattern"])
    accepted = f" {DESKTOP} , {CLUSTER}"
    assert pattern.search(accepted)
    assert api.get("/api/v1/compare", params={"builds": accepted}).status_code == 200
    for refused in (DESKTOP, f"{DESKTOP};{CLUSTER}", f"{DESKTOP},,{CLUSTER}", "A,B"):
        assert not pattern.search(refused)
        assert api.get("/api/v1/compare", params={"builds": refused}).status_code == 422


def test_compare_takes_the_offload_choice(api):
    # Issue 14: workload "offload" (auto | none) reaches compare; none keeps every weight on
    # the cards, so gpt-oss-120b no longer fits one RTX 4090 with its experts in RAM.
    url = ("/api/v1/compare?builds=1x-rtx-4090-128gb-ddr5,1x-rtx-5090-desktop"
           "&model=gpt-oss-120b&precision=mxfp4&runtime=llama.cpp")
    answers = {o: api.get(f"{url}&offload={o}") for o in ("auto", "none")}
    for offload, response in answers.items():
        assert response.status_code == 200, response.text
        assert response.json()["workload"]["offload"] == offload
    fits = {o: next(r for r in a.json()["rows"] if r["key"] == "fits")["values"][0]
            for o, a in answers.items()}
    assert fits == {"auto": True, "none": False}
    bad = api.get(f"{url}&offload=maybe")
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "offload"
