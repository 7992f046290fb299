"""Secrets generated on first start and kept in the database, so that every worker and every
host sharing the database uses the same one without configuration."""

import secrets

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.models import AppSecret

SESSION_SIGNING_KEY = "session_signing_key"


def shared_secret(session: Session, name: str) -> str:
    """The secret called `name`, created (256 random bits) by whichever process asks first.

    Several workers may start at once: each tries to insert its own, the unique name lets one
    win, and the others read the winner's.
    """
    existing = session.scalar(select(AppSecret.value).where(AppSecret.name == name))
    if existing is not None:
        return existing
    session.add(AppSecret(name=name, value=secrets.token_urlsafe(48)))
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
    value = session.scalar(select(AppSecret.value).where(AppSecret.name == name))
    if value is None:  # pragma: no cover - the insert or a concurrent one committed it
        raise RuntimeError(f"secret {name!r} could be neither created nor read")
    return value
