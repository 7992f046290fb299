"""Admin routers (JSON under /api/v1/admin, pages under /admin)."""

from fastapi import APIRouter

router = APIRouter()
