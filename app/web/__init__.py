"""HTML page routers."""

from fastapi import APIRouter

from app.web import builds, compare, estimate, home, models, recommend, reference, serving
from app.web.errors import render_error_page

router = APIRouter(include_in_schema=False)
router.include_router(home.router)
router.include_router(builds.router)
router.include_router(models.router)
router.include_router(estimate.router)
router.include_router(serving.router)
router.include_router(compare.router)
router.include_router(recommend.router)
router.include_router(reference.router)

__all__ = ["render_error_page", "router"]
