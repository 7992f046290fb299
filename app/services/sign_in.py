"""Admin sign-in with a rate limit kept in the database, so it holds across worker processes."""

from datetime import timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from app.errors import TooManyRequests, Unauthorized
from app.models import ApiToken, LoginAttempt
from app.models._mixins import utcnow
from app.services.tokens import verify_token

WINDOW = timedelta(minutes=1)
# Attempts older than this are useless to the limit; pruning keeps the table small.
KEEP = timedelta(hours=1)


def sign_in(session: Session, *, token: str, client_key: str, attempts_per_minute: int) -> ApiToken:
    """The token signed in with, or TooManyRequests / Unauthorized.

    Each attempt is committed *before* the window is counted, so of N simultaneous attempts in
    any number of workers at most `attempts_per_minute` can ever be let through.
    """
    now = utcnow()
    attempt = LoginAttempt(client_key=client_key[:128], at=now, succeeded=False)
    session.add(attempt)
    session.execute(delete(LoginAttempt).where(LoginAttempt.at < now - KEEP))
    session.commit()
    recent = session.scalar(
        select(func.count())
        .select_from(LoginAttempt)
        .where(LoginAttempt.client_key == attempt.client_key, LoginAttempt.at >= now - WINDOW)
    ) or 0
    if recent > attempts_per_minute:
        raise TooManyRequests(
            f"too many sign-in attempts; at most {attempts_per_minute} a minute, try again shortly",
            headers={"Retry-After": str(int(WINDOW.total_seconds()))},
        )
    found = verify_token(session, token)
    if found is None:
        raise Unauthorized("that token is not valid (unknown or revoked)")
    session.execute(
        update(LoginAttempt).where(LoginAttempt.id == attempt.id).values(succeeded=True)
    )
    session.commit()
    return found
