"""The OpenAPI document: every API operation documented, typed, with errors and examples."""

import pytest


@pytest.fixture(scope="module")
def spec(api):
    response = api.get("/openapi.json")
    assert response.status_code == 200
    return response.json()


def api_operations(spec):
    for path, item in spec["paths"].items():
        if path.startswith("/api/v1/") and not path.startswith("/api/v1/admin"):
            for method, op in item.items():
                yield path, method, op


def test_every_operation_has_summary_id_typed_answer_and_errors(spec):
    ids = []
    operations = list(api_operations(spec))
    assert {p for p, _, _ in operations} >= {
        "/api/v1/builds",
        "/api/v1/builds/{slug}",
        "/api/v1/builds.csv",
        "/api/v1/accelerators",
        "/api/v1/accelerators/{slug}",
        "/api/v1/accelerators.csv",
        "/api/v1/models",
        "/api/v1/models/{slug}",
        "/api/v1/models.csv",
        "/api/v1/compare",
        "/api/v1/estimate",
        "/api/v1/estimate/batch",
        "/api/v1/recommend",
        "/api/v1/tiers",
    }
    for path, method, op in operations:
        where = f"{method.upper()} {path}"
        assert op.get("summary"), where
        assert op.get("description"), where
        assert op.get("operationId"), where
        ids.append(op["operationId"])
        ok = op["responses"]["200"]["content"]
        schema = next(iter(ok.values())).get("schema", {})
        assert schema, where
        assert "422" in op["responses"], where
        problem = op["responses"]["422"]["content"]
        assert "application/problem+json" in problem or "application/json" in problem, where
    assert len(ids) == len(set(ids))


def test_slug_operations_document_404(spec):
    for path, _, op in api_operations(spec):
        if "{slug}" in path or path.endswith(("/compare", "/recommend", "/estimate")):
            assert "404" in op["responses"], path


def test_request_bodies_have_examples(spec):
    body = spec["paths"]["/api/v1/estimate"]["post"]["requestBody"]["content"]["application/json"]
    assert body["examples"]


def test_docs_page_is_served(api):
    response = api.get("/docs")
    assert response.status_code == 200 and "swagger" in response.text.lower()
