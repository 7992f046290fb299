"""Every /api/v1 body is of its declared response model: validated as it and serialised by it."""

import pytest
from pydantic import BaseModel, ValidationError

from app.api._common import model_body
from app.schemas.accelerator import AcceleratorRead
from app.schemas.build import BuildRead
from app.schemas.compare import CompareOut
from app.schemas.estimate_answer import BatchOut, EstimateOut
from app.schemas.listing import AcceleratorPage, BuildPage, ModelPage
from app.schemas.measurement import MeasurementPage
from app.schemas.model_profile import ModelRead
from app.schemas.recommend import RecommendOut
from app.schemas.serving import ServingOut
from app.schemas.tiers import TiersOut

GETS: list[tuple[str, type[BaseModel]]] = [
    ("/api/v1/builds?per_page=200", BuildPage),
    ("/api/v1/accelerators?per_page=200", AcceleratorPage),
    ("/api/v1/models?per_page=200", ModelPage),
    ("/api/v1/measurements?per_page=200", MeasurementPage),
    ("/api/v1/builds/2x-dgx-h200-cluster", BuildRead),
    ("/api/v1/accelerators/h100-sxm", AcceleratorRead),
    ("/api/v1/models/deepseek-v3", ModelRead),
    ("/api/v1/compare?builds=4x-rtx-4090-workstation,2x-dgx-h200-cluster&model=deepseek-v3",
     CompareOut),
    ("/api/v1/recommend?model=llama-3-1-70b", RecommendOut),
    ("/api/v1/tiers", TiersOut),
]
POSTS: list[tuple[str, object, type[BaseModel]]] = [
    ("/api/v1/estimate", {"build": "2x-dgx-h200-cluster", "model": "deepseek-v3"}, EstimateOut),
    (
        "/api/v1/estimate/batch",
        [{"build": "dgx-h200", "model": "llama-3-1-8b"}, {"build": "dgx-h200", "model": "nope"}],
        BatchOut,
    ),
    ("/api/v1/serving", {"build": "dgx-h200", "model": "llama-3-1-8b"}, ServingOut),
]


def _is_model_output(body: object, model: type[BaseModel]) -> bool:
    return model.model_validate(body).model_dump(mode="json") == body


@pytest.mark.parametrize(("url", "model"), GETS, ids=[u for u, _ in GETS])
def test_a_get_answer_is_exactly_its_declared_model(api, url, model):
    response = api.get(url)
    assert response.status_code == 200
    assert _is_model_output(response.json(), model)


@pytest.mark.parametrize(("url", "body", "model"), POSTS, ids=[u for u, _, _ in POSTS])
def test_a_post_answer_is_exactly_its_declared_model(api, url, body, model):
    response = api.post(url, json=body)
    assert response.status_code == 200
    assert _is_model_output(response.json(), model)


def test_a_body_missing_a_declared_field_is_refused_not_served():
    with pytest.raises(ValidationError, match="tiers"):
        model_body(TiersOut, {"precision": "fp8", "context_tokens": 4096})


def test_a_body_field_the_model_does_not_declare_is_not_served():
    body = model_body(TiersOut, {"precision": "fp8", "context_tokens": 4096, "tiers": [], "x": 1})
    assert b'"x"' not in body
