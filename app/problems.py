"""RFC 9457 problem+json: the media type, the documented schemas, OpenAPI responses, rendering.

The one module every router and handler takes problem details from: the public API documents
`Problem`, the admin API documents `RECORD_PROBLEM_SCHEMA` (its errors also name the record), and
`render_problem` answers a domain error as problem+json, or as an HTML page to people.
"""

from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from app.errors import DomainError

PROBLEM_JSON = "application/problem+json"


class Problem(BaseModel):
    """RFC 9457 problem details; `errors` names each invalid field and the reason."""

    type: str = Field(default="about:blank")
    title: str = Field(examples=["Invalid input"])
    status: int = Field(examples=[422])
    detail: str = Field(examples=["sort: unknown sort field 'colour'"])
    instance: str | None = Field(default=None, examples=["/api/v1/builds"])
    # A plain mapping (not a nested model) keeps this schema self-contained for inlining.
    errors: list[dict[str, str]] | None = Field(
        default=None, examples=[[{"field": "sort", "message": "unknown sort field 'colour'"}]]
    )


PROBLEM_SCHEMA = Problem.model_json_schema()

# The admin API's problems: an import's errors also say which record (kind, slug, index).
# Inline (not a component) so that it cannot clash with the public "Problem" schema.
RECORD_PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "instance": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string"},
                    "slug": {"type": ["string", "null"]},
                    "index": {"type": ["integer", "null"]},
                    "field": {"type": "string"},
                    "message": {"type": "string"},
                },
            },
        },
    },
}


def problem_example(status: int, title: str, detail: str, field: str) -> dict[str, Any]:
    """An example problem body naming one field (its message is the detail's reason)."""
    return {
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
        "errors": [{"field": field, "message": detail.split(": ", 1)[-1]}],
    }


def problem_response(
    description: str,
    *,
    schema: Mapping[str, Any] = PROBLEM_SCHEMA,
    example: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One entry of a route's OpenAPI `responses`: a problem+json body with this schema."""
    content: dict[str, Any] = {"schema": schema}
    if example is not None:
        content["example"] = example
    return {"description": description, "content": {PROBLEM_JSON: content}}


def wants_html(request: Request) -> bool:
    """Pages get HTML errors; the API and anything asking for JSON get problem+json."""
    path = request.url.path
    # JSON twins of pages (/estimate.json, /about.json) answer their errors as JSON too.
    if path.startswith(("/api/", "/healthz", "/metrics", "/openapi.json")) or path.endswith(
        ".json"
    ):
        return False
    return "application/json" not in request.headers.get("accept", "")


def render_problem(request: Request, error: DomainError) -> Response:
    """Render a domain error for whoever asked: an HTML page or RFC 9457 problem+json."""
    if wants_html(request):
        renderer = getattr(request.app.state, "render_error_page", None)
        if renderer is not None:
            response: Response = renderer(request, error)
            return response
    return JSONResponse(
        error.problem(instance=request.url.path),
        status_code=error.status_code,
        media_type=PROBLEM_JSON,
        headers=error.headers,
    )
