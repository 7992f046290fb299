"""JSON API routers under /api/v1."""

from fastapi import APIRouter

from app.api import accelerators, builds, compare, estimate, models, recommend, tiers

router = APIRouter(prefix="/api/v1")
for _module in (builds, accelerators, models, compare, estimate, recommend, tiers):
    router.include_router(_module.router)
