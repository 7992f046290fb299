"""CSRF protection for admin forms: a random token kept in the signed session, echoed by forms.

starlette-csrf (the maintained option) checks a request header only, which HTML forms without
JavaScript cannot send (its form-field support is an unmerged pull request), so this is the
synchronizer-token pattern in a few lines: the token lives in the session cookie (signed with
itsdangerous, SameSite=Lax), every form carries it in a hidden field, and the two are compared in
constant time before a POST is handled. A cross-site page can neither read the token nor, under
SameSite=Lax, send the cookie with its POST.
"""

import hmac
import secrets

from fastapi import Request
from starlette.datastructures import FormData

from app.errors import ContentTooLarge, Forbidden

CSRF_FIELD = "csrf_token"
CSRF_SESSION_KEY = "csrf"


def csrf_token(request: Request) -> str:
    """This session's CSRF token, created on first use (forms put it in a hidden field)."""
    token = request.session.get(CSRF_SESSION_KEY)
    if not isinstance(token, str) or len(token) < 32:
        token = secrets.token_urlsafe(32)
        request.session[CSRF_SESSION_KEY] = token
    return token


def rotate_csrf_token(request: Request) -> None:
    """A new token (after sign-in, so a token planted before it is worthless)."""
    request.session[CSRF_SESSION_KEY] = secrets.token_urlsafe(32)


async def verified_form(request: Request) -> FormData:
    """The posted form, once its CSRF token matches the session's (403 otherwise)."""
    limit: int = request.app.state.settings.max_import_bytes
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ContentTooLarge(f"the form exceeds the {limit:,}-byte limit")
    form = await request.form(max_part_size=limit)
    expected = request.session.get(CSRF_SESSION_KEY) if "session" in request.scope else None
    submitted = form.get(CSRF_FIELD)
    if not (
        isinstance(expected, str)
        and isinstance(submitted, str)
        and hmac.compare_digest(expected.encode(), submitted.encode())
    ):
        raise Forbidden(
            "this form's security token is missing or out of date (or the request came from "
            "another site); reload the page and submit it again"
        )
    return form
