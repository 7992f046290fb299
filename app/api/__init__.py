"""JSON API routers under /api/v1."""

from fastapi import APIRouter

from app.api import (
    accelerators,
    builds,
    compare,
    estimate,
    measurements,
    model_profiles,
    recommend,
    serving,
    tiers,
)

# Included one by one into the app (see app.main), not through a parent router: each level of
# router nesting makes FastAPI match the path again when it hands the request down. Each router
# carries the /api/v1 prefix itself, so every route's own `path` is its full path template (what
# the request log and metrics label a request with).
ROUTERS: tuple[APIRouter, ...] = tuple(
    module.router
    for module in (
        builds,
        accelerators,
        model_profiles,
        measurements,
        compare,
        estimate,
        recommend,
        serving,
        tiers,
    )
)
