"""Admin sign-in and sign-out pages (the only admin pages open without a session)."""


from fastapi import APIRouter, Request
from fastapi.responses import Response

from app.admin.csrf import rotate_csrf_token
from app.admin.pages import FormDep, admin_page, form_text, see_other
from app.deps import ADMIN_SESSION_KEY, SessionDep, SettingsDep
from app.errors import TooManyRequests, Unauthorized
from app.services.admin_sessions import end_session, start_session
from app.services.sign_in import sign_in

public = APIRouter(prefix="/admin", include_in_schema=False)


def safe_next(target: str) -> str:
    """The sign-in redirect target if it stays inside the admin area, else /admin."""
    # Only paths inside the admin area: never another host ("//evil", "https://...").
    if target.startswith("/admin") and not target.startswith("//") and "\\" not in target:
        return target
    return "/admin"



@public.get("/login")
def login_form(request: Request, session: SessionDep, next: str = "/admin") -> Response:
    """The sign-in form (a token from `tierline admin create-token`)."""
    context = {"next": safe_next(next), "error": None}
    return admin_page(request, session, "admin/login.html", context)


@public.post("/login")
def login(request: Request, session: SessionDep, settings: SettingsDep, form: FormDep) -> Response:
    """Sign in with a token: rate limited per client across workers, CSRF-checked."""
    next_url = safe_next(form_text(form, "next"))
    client = request.client.host if request.client else "unknown"
    try:
        token = sign_in(
            session,
            token=form_text(form, "token").strip(),
            client_key=f"ip:{client}",
            attempts_per_minute=settings.login_attempts_per_minute,
        )
    except (Unauthorized, TooManyRequests) as exc:
        return admin_page(
            request,
            session,
            "admin/login.html",
            {"next": next_url, "error": exc.detail},
            status_code=exc.status_code,
            headers=exc.headers,
        )
    # A fresh session (and CSRF token) on sign-in, so nothing planted before it carries over.
    request.session.clear()
    request.session[ADMIN_SESSION_KEY] = start_session(
        session, token=token, max_age_s=settings.admin_session_max_age_s
    )
    rotate_csrf_token(request)
    return see_other(next_url)


@public.post("/logout")
def logout(request: Request, session: SessionDep, form: FormDep) -> Response:
    """Sign out (CSRF-checked, so another site cannot sign you out either): the server-side
    session ends, so a copy of the cookie is worthless from now on."""
    session_id = request.session.get(ADMIN_SESSION_KEY)
    if isinstance(session_id, str):
        end_session(session, session_id)
    request.session.clear()
    return see_other("/admin/login")
