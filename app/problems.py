"""RFC 9457 problem+json: the media type and the renderer of domain errors.

(The admin branch grows this module with the Problem schema and the OpenAPI helpers.)
"""

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from app.errors import DomainError

PROBLEM_JSON = "application/problem+json"


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
