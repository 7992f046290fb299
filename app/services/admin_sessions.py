"""Server-side admin page sessions: created at sign-in, ended at sign-out, bounded in time.

The signed cookie only carries a random session id; what makes it valid is a live row here, so a
copied cookie stops working the moment its owner signs out (OWASP ASVS 3.3.1), and a cookie
signed with a leaked key still needs an id that only sign-in hands out.
"""

import hashlib
import secrets
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from app.models import AdminSession, ApiToken
from app.models._mixins import utcnow

# Ended or expired sessions are kept this long (for nothing but a small table), then pruned.
KEEP_ENDED = timedelta(days=1)
MAX_SESSION_ID_LENGTH = 100


def _hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()


def _aware(moment: datetime) -> datetime:
    # SQLite hands back naive UTC datetimes.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=utcnow().tzinfo)


def start_session(db: Session, *, token: ApiToken, max_age_s: int) -> str:
    """A new session for `token`; returns its id (for the cookie), which is never stored."""
    now = utcnow()
    session_id = secrets.token_urlsafe(32)
    db.execute(delete(AdminSession).where(AdminSession.expires_at < now - KEEP_ENDED))
    db.add(
        AdminSession(
            session_hash=_hash(session_id),
            token_id=token.id,
            created_at=now,
            expires_at=now + timedelta(seconds=max_age_s),
        )
    )
    db.commit()
    return session_id


def session_token(db: Session, session_id: str) -> ApiToken | None:
    """The active token of a live session, or None (unknown, ended, expired or token revoked)."""
    if not session_id or len(session_id) > MAX_SESSION_ID_LENGTH:
        return None
    row = db.scalar(select(AdminSession).where(AdminSession.session_hash == _hash(session_id)))
    if row is None or row.ended_at is not None or _aware(row.expires_at) <= utcnow():
        return None
    token = db.get(ApiToken, row.token_id)
    if token is None or token.revoked_at is not None:
        return None
    return token


def end_session(db: Session, session_id: str) -> None:
    """End a session (sign-out); unknown or already ended ids change nothing."""
    if not session_id or len(session_id) > MAX_SESSION_ID_LENGTH:
        return
    db.execute(
        update(AdminSession)
        .where(AdminSession.session_hash == _hash(session_id), AdminSession.ended_at.is_(None))
        .values(ended_at=utcnow())
    )
    db.commit()
