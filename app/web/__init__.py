"""HTML page routers."""

from fastapi import APIRouter

from app.web import (
    accuracy,
    builds,
    compare,
    estimate,
    home,
    measurements,
    model_profiles,
    recommend,
    reference,
    serving,
)
from app.web.errors import render_error_page

# Included one by one into the app (app.main), like the API routers: no nesting level to match.
ROUTERS: tuple[APIRouter, ...] = tuple(
    module.router
    for module in (
        home,
        builds,
        model_profiles,
        estimate,
        serving,
        compare,
        recommend,
        reference,
        accuracy,
        measurements,
    )
)

__all__ = ["ROUTERS", "render_error_page"]
