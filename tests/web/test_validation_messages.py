"""Validation messages speak to people: one conversion from Pydantic errors to field errors."""

import pytest
from fastapi.testclient import TestClient
from pydantic import BaseModel, Field, ValidationError, field_validator

from app.errors import FieldError, field_errors

from ._html import parse


class _Form(BaseModel):
    builds: str
    per_page: int = Field(default=10, ge=1)

    @field_validator("builds")
    @classmethod
    def _two_to_six(cls, value: str) -> str:
        count = len(value.split(","))
        if not 2 <= count <= 6:
            raise ValueError(f"give 2 to 6 builds, got {count}")
        return value


def _errors(raw: dict) -> list[FieldError]:
    with pytest.raises(ValidationError) as caught:
        _Form.model_validate(raw)
    return field_errors(caught.value.errors(include_url=False))


def test_validator_reason_loses_pydantics_value_error_prefix() -> None:
    assert _errors({"builds": "a"}) == [FieldError("builds", "give 2 to 6 builds, got 1")]


def test_missing_field_says_it_is_required() -> None:
    assert _errors({}) == [FieldError("builds", "is required")]


def test_bound_error_echoes_the_refused_value() -> None:
    (error,) = _errors({"builds": "a,b", "per_page": 0})
    assert error.field == "per_page"
    assert error.message == "input should be greater than or equal to 1, got 0"


def test_request_errors_drop_fastapis_location_prefix() -> None:
    raw = [{"loc": ("query", "per_page"), "msg": "Field required", "type": "missing"}]
    assert field_errors(raw, from_request=True) == [FieldError("per_page", "is required")]
    assert field_errors([{"loc": (), "msg": "bad", "type": "x"}]) == [
        FieldError("(request)", "bad")
    ]


def test_api_gives_the_validators_reason_as_is(web: TestClient) -> None:
    problem = web.get("/api/v1/compare", params={"builds": "dgx-h100"}).json()
    assert problem["errors"] == [{"field": "builds", "message": "give 2 to 6 builds, got 1"}]
    assert problem["detail"] == "builds: give 2 to 6 builds, got 1"


def test_page_notice_and_api_share_one_message(web: TestClient) -> None:
    problem = web.get("/api/v1/builds", params={"min_memory_gb": "lots"}).json()
    (error,) = problem["errors"]
    assert error["field"] == "min_memory_gb" and "got 'lots'" in error["message"]
    page = parse(web.get("/builds", params={"min_memory_gb": "lots"}).text).text()
    assert f"min_memory_gb: {error['message']}" in page
