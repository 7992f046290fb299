"""The calculator takes a model by its Hugging Face id (hf_id) instead of a pasted config."""

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.services.hf_hub import RECENT
from tests.fake_hub import LLAMA_8B, closed_port_url, fake_hub

from ._html import parse


@pytest.fixture(scope="module")
def hub() -> Iterator[str]:
    with fake_hub() as url:
        yield url


def _client(database_copies: Any, endpoint: str) -> TestClient:
    RECENT.clear()
    settings = Settings(database_url=database_copies.copy(seeded=True), seed_on_start=False,
                        secret_key="t", hf_endpoint=endpoint, hf_timeout_s=5)
    return TestClient(create_app(settings))


@pytest.fixture(scope="module")
def web_hub(database_copies: Any, hub: str) -> Iterator[TestClient]:
    with _client(database_copies, hub) as client:
        yield client


QUERY = {"build": "dgx-h200", "model_source": "config", "precision": "bf16"}


def test_calculator_runs_a_model_fetched_by_hf_id_like_the_pasted_config(
    web_hub: TestClient,
) -> None:
    fetched = web_hub.get("/estimate.json", params={**QUERY, "hf_id": "meta-llama/Llama-3.1-8B"})
    pasted = web_hub.get("/estimate.json", params={**QUERY, "config": json.dumps(LLAMA_8B),
                                                   "model_name": "meta-llama/Llama-3.1-8B"})
    assert fetched.status_code == pasted.status_code == 200
    assert fetched.json()["fits"] is True
    assert fetched.json()["memory"] == pasted.json()["memory"]
    assert fetched.json()["model"]["name"] == "meta-llama/Llama-3.1-8B"


def test_hf_id_alone_in_the_address_is_enough(web_hub: TestClient) -> None:
    response = web_hub.get("/estimate",
                           params={"build": "dgx-h200", "hf_id": "meta-llama/Llama-3.1-8B"})
    assert response.status_code == 200
    assert parse(response.text).one(id="result") is not None


def test_unknown_hf_id_is_named_beside_its_field(web_hub: TestClient) -> None:
    response = web_hub.get("/estimate", params={**QUERY, "hf_id": "nobody/nothing"})
    assert response.status_code == 404
    error = parse(response.text).one("span", class_="field-error", id="err-hf_id").text()
    assert "no model 'nobody/nothing'" in error
    problem = web_hub.get("/estimate.json", params={**QUERY, "hf_id": "nobody/nothing"})
    assert problem.status_code == 404
    assert problem.json()["errors"][0]["field"] == "hf_id"


def test_gated_hf_id_without_token_says_what_to_do(web_hub: TestClient) -> None:
    response = web_hub.get("/estimate.json", params={**QUERY, "hf_id": "gated-org/gated-model"})
    assert response.status_code == 422
    assert "TIERLINE_HF_TOKEN" in response.json()["errors"][0]["message"]


def test_hf_id_and_a_pasted_config_together_are_refused(web_hub: TestClient) -> None:
    response = web_hub.get("/estimate.json", params={**QUERY, "hf_id": "a/b", "config": "{}"})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "hf_id"


def test_hf_id_is_ignored_when_a_catalog_model_is_chosen(web_hub: TestClient) -> None:
    params = {"build": "dgx-h200", "model_source": "catalog", "model": "llama-3-1-8b",
              "hf_id": "nobody/nothing"}
    response = web_hub.get("/estimate.json", params=params)
    assert response.status_code == 200
    assert response.json()["model"]["slug"] == "llama-3-1-8b"


def test_offline_hub_is_a_503_on_the_page(database_copies: Any) -> None:
    with _client(database_copies, closed_port_url()) as client:
        response = client.get("/estimate", params={**QUERY, "hf_id": "meta-llama/Llama-3.1-8B"})
    assert response.status_code == 503
    assert "paste the model's config.json" in parse(response.text).one(id="err-hf_id").text()
