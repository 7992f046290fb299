"""problem+json comes from one module: every documented error response uses its media type and
one of its two schemas, and the renderer answers the API in it and pages in HTML."""

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.problems import PROBLEM_JSON, PROBLEM_SCHEMA, RECORD_PROBLEM_SCHEMA

# /healthz answers 503 with its own status document (which checks failed), not a problem.
NOT_PROBLEMS = {("/healthz", "get", "503")}


def _error_responses() -> list[tuple[str, str, str, dict[str, Any]]]:
    document = create_app().openapi()
    return [
        (path, method, status, response)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
        for status, response in operation.get("responses", {}).items()
        if status[0] in "45" and "content" in response
    ]


def test_the_document_has_error_responses_to_check() -> None:
    assert len(_error_responses()) > 50


DOCUMENTED = [r for r in _error_responses() if r[:3] not in NOT_PROBLEMS]


@pytest.mark.parametrize(
    ("path", "method", "status", "response"),
    DOCUMENTED,
    ids=[f"{method} {path} {status}" for path, method, status, _ in DOCUMENTED],
)
def test_every_documented_error_is_a_problem_with_a_schema_from_app_problems(
    path: str, method: str, status: str, response: dict[str, Any]
) -> None:
    assert list(response["content"]) == [PROBLEM_JSON]
    schema = response["content"][PROBLEM_JSON]["schema"]
    # The public schema (as FastAPI renders Problem) or the admin one (which names records).
    assert set(schema["properties"]) in (set(PROBLEM_SCHEMA["properties"]),
                                         set(RECORD_PROBLEM_SCHEMA["properties"]))
    assert {"title", "status", "detail"} <= set(schema["required"])
    example = response["content"][PROBLEM_JSON].get("example")
    assert example is None or example["status"] == int(status)


def test_an_api_error_is_rendered_as_problem_json_naming_the_path(client: TestClient) -> None:
    response = client.get("/api/v1/builds/no-such-build")
    assert response.status_code == 404
    assert response.headers["content-type"] == PROBLEM_JSON
    body = response.json()
    assert (body["status"], body["instance"]) == (404, "/api/v1/builds/no-such-build")


def test_a_page_error_is_rendered_as_html(client: TestClient) -> None:
    response = client.get("/builds/no-such-build")
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
