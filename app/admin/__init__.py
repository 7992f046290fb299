"""Admin routers (JSON under /api/v1/admin, pages under /admin); every route needs a token."""

from fastapi import APIRouter

from app.admin import api, pages

# Included one by one into the app (app.main). Sign-in first: the pages router's /admin/{key}
# would otherwise match /admin/login.
ROUTERS: tuple[APIRouter, ...] = (api.router, pages.public, pages.pages)
