"""Application factory and lifespan."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from app import __version__, admin, api, web
from app.admin.guard import authenticate_before_body
from app.admin.session import AdminSessionMiddleware
from app.api import health, metrics
from app.api_docs import install_api_docs
from app.config import Settings, get_settings
from app.db import make_engine, make_sessionmaker
from app.errors import (
    DomainError,
    InvalidInput,
    ServiceUnavailable,
    error_for_status,
    field_errors,
    summary,
)
from app.middleware import add_production_middleware, tune_gc_for_serving
from app.problems import render_problem
from app.services.app_secrets import SESSION_SIGNING_KEY, shared_secret
from app.web.warm_up import start_warm_up


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the app; the database engine lives on app.state for the app's lifetime."""
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        app.state.engine.dispose()

    app = FastAPI(
        title="tierline",
        version=__version__,
        summary="Which AI hardware build runs this model, how fast, and at what cost.",
        lifespan=lifespan,
        # /docs is served from local assets under the CSP (app/api_docs.py); no ReDoc.
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.engine = make_engine(
        settings.database_url, connect_timeout_s=settings.db_connect_timeout_s
    )
    app.state.sessionmaker = make_sessionmaker(app.state.engine)

    app.add_exception_handler(DomainError, _domain_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(OperationalError, _database_unavailable)  # type: ignore[arg-type]
    # Pages: friendly HTML error pages (domain errors, unknown paths); the API keeps JSON.
    app.state.render_error_page = web.render_error_page
    app.add_exception_handler(StarletteHTTPException, _http_error)  # type: ignore[arg-type]

    # Signed admin session cookie for /admin pages (HttpOnly, SameSite=Lax, Secure over HTTPS).
    def load_secret_key() -> str:
        with app.state.sessionmaker() as session:
            return shared_secret(session, SESSION_SIGNING_KEY)

    app.add_middleware(AdminSessionMiddleware, secret_key=settings.secret_key,
                       load_secret_key=load_secret_key, max_age=settings.admin_session_max_age_s)
    if settings.allowed_host_list:
        # Inside EdgeMiddleware (added next), so its 400 carries the security headers too.
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.allowed_host_list)
    add_production_middleware(app, settings, check_before_body=authenticate_before_body)
    # Most requested first: a request is matched against the routes in this order.
    app.include_router(health.router)
    for router in (*api.ROUTERS, *web.ROUTERS, *admin.ROUTERS):
        app.include_router(router)
    app.include_router(metrics.router)
    install_api_docs(app)
    app.mount("/static", StaticFiles(directory=settings.static_dir), name="static")
    return app


def app_factory() -> FastAPI:
    """Entry point for uvicorn workers (`--factory`): settings from the environment."""
    app = create_app()
    tune_gc_for_serving()  # worker processes only: see app/middleware/__init__.py
    if app.state.settings.warm_caches:
        start_warm_up(app.state.sessionmaker, app.state.settings)
    return app


async def _domain_error(request: Request, exc: DomainError) -> Response:
    return render_problem(request, exc)


async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
    # Framework errors (unknown path, wrong method, unreadable body) get the same treatment as
    # domain errors: problem+json for the API, a friendly page for people.
    headers = dict(exc.headers or {})
    if exc.status_code < 400:  # redirects raised by dependencies (admin sign-in)
        return Response(status_code=exc.status_code, headers=headers)
    if exc.status_code == 404:
        detail = f"There is nothing at {request.url.path}."
    elif exc.status_code == 405:
        detail = f"{request.method} is not accepted at {request.url.path}."
    else:
        detail = str(exc.detail)
    return render_problem(request, error_for_status(exc.status_code, detail, headers=headers))


async def _validation_error(request: Request, exc: RequestValidationError) -> Response:
    errors = field_errors(exc.errors(), from_request=True)
    return render_problem(request, InvalidInput(summary(errors) or "invalid input", errors=errors))


async def _database_unavailable(request: Request, exc: OperationalError) -> Response:
    error = ServiceUnavailable(
        "the database is unreachable; try again shortly", headers={"Retry-After": "5"}
    )
    return render_problem(request, error)
