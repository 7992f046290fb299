"""Public input that used to be a 500: each is now a 4xx naming the field (issue 13, item 6).

The property-based test (test_hostile_property.py) searches for more; these are the cases the
probe found, kept explicit so that each stays fixed.
"""

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

BEYOND_FLOAT = int("1" + "0" * 320)  # > 1.8e308: float() and math.isfinite() overflow
BUILD = "4x-rtx-4090-workstation"
CONFIG: dict[str, Any] = {
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "vocab_size": 128256, "max_position_embeddings": 131072,
}


def _huge_config() -> dict[str, Any]:
    return {**CONFIG, "hidden_size": BEYOND_FLOAT}


def _fields(response: Any) -> str:
    return json.dumps(response.json().get("errors", [])) + response.json().get("detail", "")


def test_api_estimate_with_an_integer_beyond_float_range_is_422(client: TestClient) -> None:
    body = {"build": BUILD, "model": {"name": "x", "config": _huge_config()}}
    response = client.post("/api/v1/estimate", json=body)
    assert response.status_code == 422, response.text[:300]
    assert "hidden_size" in _fields(response)


def test_batch_refuses_only_the_item_with_the_huge_integer(client: TestClient) -> None:
    good = {"build": BUILD, "model": {"name": "ok", "config": CONFIG}}
    bad = {"build": BUILD, "model": {"name": "x", "config": _huge_config()}}
    response = client.post("/api/v1/estimate/batch", json=[good, bad])
    assert response.status_code in (200, 422), response.text[:300]
    if response.status_code == 200:
        first, second = response.json()["results"]
        assert first["ok"] and not second["ok"]
        assert second["error"]["status"] == 422
        assert "hidden_size" in json.dumps(second["error"])
    else:
        assert "hidden_size" in _fields(response)


@pytest.mark.parametrize("path", ["/estimate", "/estimate.json", "/estimate/memory.svg"])
def test_pages_with_a_pasted_config_beyond_float_range_are_4xx(
    client: TestClient, path: str
) -> None:
    query = {"build": BUILD, "model_source": "config", "config": json.dumps(_huge_config())}
    response = client.get(path, params=query)
    assert 400 <= response.status_code < 500, (path, response.status_code)
    assert "hidden_size" in response.text


def test_a_deeply_nested_pasted_config_is_a_field_error(client: TestClient) -> None:
    config = '{"a":' * 3000 + "1" + "}" * 3000
    response = client.get("/estimate", params={"build": BUILD, "model_source": "config",
                                               "config": config})
    assert response.status_code == 422
    assert "nested too deeply" in response.text


def test_estimate_json_answers_its_errors_as_problem_json(client: TestClient) -> None:
    query = {"build": BUILD, "model_source": "config", "config": json.dumps(_huge_config())}
    response = client.get("/estimate.json", params=query)
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["status"] == response.status_code


@pytest.mark.parametrize("path", ["/recommend", "/recommend/chart.svg"])
def test_recommend_pages_with_a_malformed_model_name_it(client: TestClient, path: str) -> None:
    response = client.get(path, params={"model": "Bad"})
    assert response.status_code == 422, response.status_code
    assert "model" in response.text
