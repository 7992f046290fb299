"""The admin session cookie: Starlette's signed SessionMiddleware, scoped to /admin.

The cookie is HttpOnly and SameSite=Lax, and Secure whenever the request arrived over HTTPS
(uvicorn sets the scheme from X-Forwarded-Proto for trusted proxies), so one deployment serves
plain HTTP in development and Secure cookies in production without a setting to forget.

The signing key is TIERLINE_SECRET_KEY when set; otherwise a random key generated on first start
and kept in the database (app/services/app_secrets.py), so every worker and host sharing the
database signs alike and no public default can ever sign a cookie. Either way the cookie only
carries a server-side session id (app/services/admin_sessions.py).
"""

from collections.abc import Callable

import anyio
from starlette.middleware.sessions import SessionMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

SESSION_COOKIE = "tierline_admin"
ADMIN_PREFIX = "/admin"


class AdminSessionMiddleware:
    """Signed session for /admin pages; other paths never see or set the cookie."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        secret_key: str | None,
        load_secret_key: Callable[[], str],
        max_age: int,
    ) -> None:
        self.app = app
        self.secret_key = secret_key
        self.load_secret_key = load_secret_key
        self.max_age = max_age
        self._pair: tuple[SessionMiddleware, SessionMiddleware] | None = None
        self._lock = anyio.Lock()

    async def _middlewares(self) -> tuple[SessionMiddleware, SessionMiddleware]:
        # Built on the first /admin request, not at app creation: the generated key lives in the
        # database, which is only migrated (and reachable) once the server runs.
        async with self._lock:
            if self._pair is None:
                key = self.secret_key or await anyio.to_thread.run_sync(self.load_secret_key)
                options = {
                    "secret_key": key,
                    "session_cookie": SESSION_COOKIE,
                    "max_age": self.max_age,
                    "path": ADMIN_PREFIX,
                    "same_site": "lax",
                }
                self._pair = (
                    SessionMiddleware(self.app, https_only=False, **options),  # type: ignore[arg-type]
                    SessionMiddleware(self.app, https_only=True, **options),  # type: ignore[arg-type]
                )
            return self._pair

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (
            path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/")
        ):
            await self.app(scope, receive, send)
            return
        plain, secure = self._pair or await self._middlewares()
        middleware = secure if scope.get("scheme") == "https" else plain
        await middleware(scope, receive, send)
