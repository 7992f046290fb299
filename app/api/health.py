"""Liveness with the database's status."""

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.exc import SQLAlchemyError

from app.catalog_version import read_catalog_version

router = APIRouter(tags=["health"])


class Health(BaseModel):
    """Service and database status."""

    status: Literal["ok", "unavailable"]
    database: Literal["ok", "unreachable"]
    catalog_version: int | None = None


@router.get(
    "/healthz",
    response_model=Health,
    operation_id="health",
    summary="Service health",
    responses={503: {"model": Health, "description": "the database is unreachable"}},
)
def healthz(request: Request) -> JSONResponse:
    """200 with the database status, or 503 when the database is unreachable."""
    try:
        with request.app.state.engine.connect() as conn:
            version = read_catalog_version(conn)
    except SQLAlchemyError:
        body = Health(status="unavailable", database="unreachable")
        return JSONResponse(body.model_dump(), status_code=503, headers={"Retry-After": "5"})
    return JSONResponse(Health(status="ok", database="ok", catalog_version=version).model_dump())
