"""Admin JSON API under /api/v1/admin: what its route modules share (router, problems, headers).

The routes live by concern: `api_records` (record reads and writes with ETags), `api_import`
(bulk import) and `api_audit` (the audit log). Every route sits behind `require_admin` (a Bearer
token; cookies do not count under /api, so no cross-site request can use a browser's session).
"""

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, Response

from app.deps import require_admin
from app.problems import RECORD_PROBLEM_SCHEMA, problem_response
from app.services.admin_records import WriteResult

NO_STORE = {"Cache-Control": "no-store"}
MAX_ID = 2**31 - 1  # an INTEGER column on every backend


def admin_problem(description: str) -> dict[str, Any]:
    """An admin route's documented problem response."""
    return problem_response(description, schema=RECORD_PROBLEM_SCHEMA)


# Routes that read a JSON body: an undecodable one is 400, one past max_body_bytes is 413.
BODY_ERRORS: dict[int | str, dict[str, Any]] = {
    400: admin_problem("the body is not decodable JSON"),
    413: admin_problem("the body exceeds max_body_bytes"),
}


def admin_router() -> APIRouter:
    """A router for admin JSON routes: the prefix, the tag, the token check and its problems."""
    return APIRouter(
        prefix="/api/v1/admin",
        tags=["admin"],
        dependencies=[Depends(require_admin)],
        responses={
            401: admin_problem("no valid admin token (missing, unknown or revoked)"),
            422: admin_problem("invalid input; `errors` names each field and the reason"),
        },
    )


def record_response(result: WriteResult, *, status_code: int = 200) -> Response:
    """A written record with its version as ETag (204 after a delete); never cached."""
    if result.document is None:
        return Response(status_code=204, headers=NO_STORE)
    return JSONResponse(
        {**result.document, "version": result.version},
        status_code=status_code,
        headers={"ETag": f'"{result.version}"', **NO_STORE},
    )


def created_response(result: WriteResult) -> Response:
    """A record just created (201), with its admin URL as Location."""
    response = record_response(result, status_code=201)
    response.headers["Location"] = f"/api/v1/admin/{result.kind.key}/{result.slug}"
    return response
