"""Admin routers (JSON under /api/v1/admin, pages under /admin); every route needs a token."""

from fastapi import APIRouter

from app.admin import api, pages

router = APIRouter()
router.include_router(api.router)
# Sign-in first: the pages router's /admin/{key} would otherwise match /admin/login.
router.include_router(pages.public)
router.include_router(pages.pages)
