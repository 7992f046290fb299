"""The admin session cookie: Starlette's signed SessionMiddleware, scoped to /admin.

The cookie is HttpOnly and SameSite=Lax, and Secure whenever the request arrived over HTTPS
(uvicorn sets the scheme from X-Forwarded-Proto for trusted proxies), so one deployment serves
plain HTTP in development and Secure cookies in production without a setting to forget.
"""

from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

SESSION_COOKIE = "tierline_admin"
ADMIN_PREFIX = "/admin"


class AdminSessionMiddleware:
    """Signed session for /admin pages; other paths never see or set the cookie."""

    def __init__(self, app: ASGIApp, *, secret_key: str, max_age: int) -> None:
        self.app = app
        options = {
            "secret_key": secret_key,
            "session_cookie": SESSION_COOKIE,
            "max_age": max_age,
            "path": ADMIN_PREFIX,
            "same_site": "lax",
        }
        self.plain = SessionMiddleware(app, https_only=False, **options)  # type: ignore[arg-type]
        self.secure = SessionMiddleware(app, https_only=True, **options)  # type: ignore[arg-type]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (
            path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/")
        ):
            await self.app(scope, receive, send)
            return
        middleware = self.secure if scope.get("scheme") == "https" else self.plain
        await middleware(scope, receive, send)
