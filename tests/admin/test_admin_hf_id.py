"""The admin "new model" form and API take a Hugging Face id (hf_id) and fetch its config.json
from the Hub (a local fake Hub here: nothing reaches the internet)."""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.services.hf_hub import RECENT
from tests.admin.test_admin_pages import CSRF_RE, csrf_of, sign_in
from tests.fake_hub import GATED_TOKEN, LLAMA_8B, fake_hub


@pytest.fixture(scope="module")
def hub() -> Iterator[str]:
    with fake_hub() as url:
        yield url


@pytest.fixture
def settings(database_url: str, tmp_path: Path, hub: str) -> Settings:
    """The suite's settings pointed at the fake Hub (overrides tests/conftest.py's)."""
    RECENT.clear()
    return Settings(database_url=database_url, seed_on_start=False, secret_key="test-secret",
                    hf_endpoint=hub, hf_timeout_s=5, hf_token=GATED_TOKEN)


def test_api_creates_a_model_from_an_hf_id(admin_client: TestClient, hub: str) -> None:
    response = admin_client.post("/api/v1/admin/models/from-config", json={
        "slug": "adm-from-hub", "name": "Llama from the Hub", "hf_id": "meta-llama/Llama-3.1-8B",
    })
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["config"] == LLAMA_8B
    assert body["source_url"] == f"{hub}/meta-llama/Llama-3.1-8B"
    assert set(body["estimated"]) == {"params_total", "params_active"}


def test_api_fetches_a_gated_model_with_the_configured_token(admin_client: TestClient) -> None:
    response = admin_client.post("/api/v1/admin/models/from-config", json={
        "slug": "adm-gated", "name": "Gated", "hf_id": "gated-org/gated-model",
        "source_url": "https://example.org/model-card",
    })
    assert response.status_code == 201, response.text
    assert response.json()["source_url"] == "https://example.org/model-card"


def test_api_unknown_hf_id_is_a_404_naming_hf_id_and_creates_nothing(
    admin_client: TestClient,
) -> None:
    response = admin_client.post("/api/v1/admin/models/from-config", json={
        "slug": "adm-missing", "name": "Missing", "hf_id": "nobody/nothing"})
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["errors"][0]["field"] == "hf_id"
    assert admin_client.get("/api/v1/models/adm-missing").status_code == 404


def test_api_wants_exactly_one_of_config_and_hf_id(admin_client: TestClient) -> None:
    neither = admin_client.post("/api/v1/admin/models/from-config",
                                json={"slug": "adm-x", "name": "X"})
    both = admin_client.post("/api/v1/admin/models/from-config", json={
        "slug": "adm-x", "name": "X", "hf_id": "a/b", "config": LLAMA_8B,
        "source_url": "https://example.org"})
    for response in (neither, both):
        assert response.status_code == 422
        assert "either config" in response.json()["detail"]
    pasted_without_source = admin_client.post("/api/v1/admin/models/from-config", json={
        "slug": "adm-x", "name": "X", "config": LLAMA_8B})
    assert pasted_without_source.status_code == 422
    assert "source_url is required" in pasted_without_source.json()["detail"]


def test_new_model_form_creates_the_model_from_an_hf_id(
    client: TestClient, admin_token: str, hub: str
) -> None:
    sign_in(client, admin_token)
    form = client.get("/admin/create/models").text
    assert 'name="hf_id"' in form
    response = client.post("/admin/create/models", data={
        "csrf_token": csrf_of(client, "/admin/create/models"), "slug": "adm-form-hub",
        "name": "From the form", "hf_id": "meta-llama/Llama-3.1-8B"}, follow_redirects=False)
    assert response.status_code == 303, response.text[:2000]
    assert response.headers["location"] == "/admin/models/adm-form-hub?created=1"
    record = client.get("/api/v1/models/adm-form-hub").json()
    assert record["config"] == LLAMA_8B and record["source_url"].startswith(hub)


def test_new_model_form_shows_a_hub_error_beside_the_id(client: TestClient,
                                                        admin_token: str) -> None:
    sign_in(client, admin_token)
    page = client.get("/admin/create/models").text
    response = client.post("/admin/create/models", data={
        "csrf_token": CSRF_RE.search(page).group(1),  # type: ignore[union-attr]
        "slug": "adm-form-bad", "name": "Bad", "hf_id": "odd-org/html-page"})
    assert response.status_code == 422
    error = re.search(r'id="f-hf_id-error">([^<]*)<', response.text)
    assert error and "not valid JSON" in error.group(1)
    assert 'value="odd-org/html-page"' in response.text  # what was typed stays
