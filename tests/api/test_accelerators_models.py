"""GET /api/v1/accelerators and /api/v1/models: lists, filters, sort, detail, CSV, errors."""

import csv
import io
from typing import Any

import pytest

from app.schemas.accelerator import AcceleratorIn, AcceleratorRead
from app.schemas.listing import AcceleratorListItem
from app.schemas.model_profile import ModelIn, ModelListItem, ModelRead
from app.services.records import strip_read_only

from ._support import problem_fields


def items(api: Any, path: str, **params: Any) -> list[dict[str, Any]]:
    body = api.get(path, params={"per_page": 200, **params}).json()
    assert body["total"] == len(body["items"])
    return body["items"]


def test_accelerator_list_shape(api):
    body = api.get("/api/v1/accelerators", params={"per_page": 5}).json()
    assert len(body["items"]) == 5 and body["total"] > 5 and body["next_url"]
    for item in items(api, "/api/v1/accelerators"):
        AcceleratorListItem.model_validate(item)


def test_accelerator_filters(api):
    everything = items(api, "/api/v1/accelerators")
    unified = items(api, "/api/v1/accelerators", memory_kind="unified")
    assert unified and all(a["memory_kind"] == "unified" for a in unified)
    assert len(unified) < len(everything)
    big = items(api, "/api/v1/accelerators", min_memory_gb=100)
    assert big and all(a["memory_gb"] >= 100 for a in big)
    amd = items(api, "/api/v1/accelerators", vendor="amd")
    assert amd and all(a["vendor"].lower() == "amd" for a in amd)
    priced = items(api, "/api/v1/accelerators", max_price_usd=5000)
    assert all(a["price_usd"] is not None and a["price_usd"] <= 5000 for a in priced)
    found = items(api, "/api/v1/accelerators", q="h200")
    assert found and all("h200" in (a["slug"] + a["name"]).lower() for a in found)


@pytest.mark.parametrize("field", ["memory_gb", "memory_bandwidth_gbs", "fp8_tflops", "name"])
@pytest.mark.parametrize("descending", [False, True])
def test_accelerator_sort(api, field, descending):
    values = [a[field] for a in items(api, "/api/v1/accelerators", sort=("-" * descending) + field)]
    present = [v for v in values if v is not None]
    assert values[: len(present)] == present
    keyed = [v.casefold() for v in present] if field == "name" else present
    assert keyed == sorted(keyed, reverse=descending)


def test_accelerator_detail_round_trips_and_404(api):
    body = api.get("/api/v1/accelerators/rtx-4090").json()
    AcceleratorRead.model_validate(body)
    assert AcceleratorIn.model_validate(strip_read_only(body)).memory_gb == 24
    assert body["source_url"].startswith("http")
    response = api.get("/api/v1/accelerators/no-such-card")
    assert response.status_code == 404 and problem_fields(response) == ["slug"]


@pytest.mark.parametrize(
    ("params", "field"),
    [({"memory_kind": "hbm"}, "memory_kind"), ({"sort": "speed"}, "sort"), ({"q": "\x00"}, "q")],
)
def test_accelerator_bad_parameters(api, params, field):
    response = api.get("/api/v1/accelerators", params=params)
    assert response.status_code == 422 and field in problem_fields(response)


def test_model_list_shape_and_filters(api, catalog):
    everything = items(api, "/api/v1/models")
    assert {m["slug"] for m in everything} == set(catalog.models)
    for item in everything:
        ModelListItem.model_validate(item)
    moe = items(api, "/api/v1/models", is_moe="true")
    assert moe and all(m["is_moe"] for m in moe)
    dense = items(api, "/api/v1/models", is_moe="false")
    assert len(moe) + len(dense) == len(everything)
    mla = items(api, "/api/v1/models", attention="mla")
    assert "deepseek-v3" in {m["slug"] for m in mla}
    assert all(m["attention"] == "mla" for m in mla)
    small = items(api, "/api/v1/models", max_params_b=10)
    assert small and all(m["params_total"] <= 10e9 for m in small)
    large = items(api, "/api/v1/models", min_params_b=400)
    assert large and all(m["params_total"] >= 400e9 for m in large)
    assert {m["slug"] for m in items(api, "/api/v1/models", q="llama")} >= {"llama-3-1-8b"}


@pytest.mark.parametrize("field", ["params_total", "params_active", "kv_cache_bytes_per_token"])
def test_model_sort_descending(api, field):
    values = [m[field] for m in items(api, "/api/v1/models", sort=f"-{field}")]
    assert values == sorted(values, reverse=True) and len(set(values)) > 1


def test_model_detail_carries_config_and_computed_counts(api, catalog):
    body = api.get("/api/v1/models/deepseek-v3").json()
    ModelRead.model_validate(body)
    record = ModelIn.model_validate(strip_read_only(body))
    assert record.config == catalog.models["deepseek-v3"].config
    spec = catalog.model_specs["deepseek-v3"]
    assert body["params_total_computed"] == spec.params_total
    assert body["params_total_computed"] == pytest.approx(body["params_total"], rel=0.01)
    assert body["attention"] == "mla" and body["is_moe"] is True
    response = api.get("/api/v1/models/gpt-5")
    assert response.status_code == 404 and problem_fields(response) == ["slug"]


def test_model_bad_parameters(api):
    for params, field in [({"attention": "sparse"}, "attention"), ({"is_moe": "maybe"}, "is_moe")]:
        response = api.get("/api/v1/models", params=params)
        assert response.status_code == 422 and field in problem_fields(response)


@pytest.mark.parametrize(
    ("path", "params", "unit_column"),
    [
        ("/api/v1/accelerators.csv", {"vendor": "NVIDIA"}, "memory_bandwidth_gbs"),
        ("/api/v1/models.csv", {"is_moe": "true"}, "kv_cache_bytes_per_token"),
    ],
)
def test_csv_exports(api, path, params, unit_column):
    response = api.get(path, params=params)
    assert response.status_code == 200
    assert response.headers["content-disposition"].startswith("attachment;")
    rows = list(csv.DictReader(io.StringIO(response.text)))
    expected = items(api, path.removesuffix(".csv"), **params)
    assert [r["slug"] for r in rows] == [i["slug"] for i in expected]
    assert unit_column in rows[0]
