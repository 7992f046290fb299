"""JSON API routers under /api/v1."""

from fastapi import APIRouter

from app.api import (
    accelerators,
    builds,
    compare,
    estimate,
    measurements,
    models,
    recommend,
    tiers,
)

PREFIX = "/api/v1"
# Included one by one into the app (see app.main), not through a parent router: each level of
# router nesting makes FastAPI match the path again when it hands the request down, a large
# share of a cached answer's time.
ROUTERS: tuple[APIRouter, ...] = tuple(
    module.router
    for module in (
        builds,
        accelerators,
        models,
        measurements,
        compare,
        estimate,
        recommend,
        tiers,
    )
)
