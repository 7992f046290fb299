"""Admin routers (JSON under /api/v1/admin, pages under /admin); every route needs a token."""

from fastapi import APIRouter

from app.admin import (
    api_audit,
    api_import,
    api_records,
    pages_audit,
    pages_auth,
    pages_import,
    pages_records,
)

# Included one by one into the app (app.main), in this order: sign-in, import and audit before
# the record pages, whose /admin/{key} and /admin/{key}/{slug} would otherwise match them.
ROUTERS: tuple[APIRouter, ...] = (
    api_records.router,
    api_import.router,
    api_audit.router,
    pages_auth.public,
    pages_import.pages,
    pages_audit.pages,
    pages_records.pages,
)
