"""Admin API tokens: created once (only the SHA-256 hash is kept), listed, revoked, verified."""

import hashlib
import hmac
import re
import secrets
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.errors import Conflict, FieldError, InvalidInput, NotFound
from app.models import ApiToken
from app.models._mixins import utcnow

TOKEN_PREFIX = "tl_"
# Longer than any token we issue; longer input is refused before hashing.
MAX_TOKEN_LENGTH = 200
# Token names become audit actors; no ':' so they never look like "cli:seed".
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")
# last_used_at is a hint, not a log: rewriting it on every call would make each admin read a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def hash_token(token: str) -> str:
    """Hex SHA-256 of a token (what the database stores)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_token_name(name: str) -> str:
    """The name, or InvalidInput naming the rule it breaks."""
    if not NAME_PATTERN.fullmatch(name):
        raise InvalidInput(
            "invalid token name",
            errors=[
                FieldError(
                    "name", "1-80 letters, digits, '.', '_' or '-', starting with a letter or digit"
                )
            ],
        )
    return name


def create_token(session: Session, *, name: str) -> str:
    """Create a token named `name`; returns the token itself, which is never stored."""
    check_token_name(name)
    if session.scalar(select(ApiToken.id).where(ApiToken.name == name)) is not None:
        raise Conflict(f"a token named '{name}' already exists (revoked tokens keep their name)")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    session.add(ApiToken(name=name, token_hash=hash_token(token)))
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise Conflict(f"a token named '{name}' already exists") from None
    return token


def list_tokens(session: Session) -> list[ApiToken]:
    """Every token, active and revoked, by name."""
    return list(session.scalars(select(ApiToken).order_by(ApiToken.name)))


def revoke_token(session: Session, *, name: str) -> ApiToken:
    """Revoke a token by name (idempotent); its sessions stop working at once."""
    token = session.scalar(select(ApiToken).where(ApiToken.name == name))
    if token is None:
        raise NotFound(f"no token named '{name}'")
    if token.revoked_at is None:
        token.revoked_at = utcnow()
        session.commit()
    return token


def verify_token(session: Session, presented: str) -> ApiToken | None:
    """The active token matching `presented`, or None; compares hashes in constant time."""
    if not presented or len(presented) > MAX_TOKEN_LENGTH:
        return None
    digest = hash_token(presented)
    found: ApiToken | None = None
    # Compare against every active token without stopping early, so the time taken does not
    # depend on which (or whether a) stored hash shares a prefix with the presented one.
    for token in session.scalars(select(ApiToken).where(ApiToken.revoked_at.is_(None))):
        if hmac.compare_digest(token.token_hash, digest):
            found = token
    if found is not None:
        mark_used(session, found)
    return found


def mark_used(session: Session, token: ApiToken) -> None:
    """Record that the token was just used (at most once per LAST_USED_RESOLUTION)."""
    now = utcnow()
    last = token.last_used_at
    if last is not None and last.tzinfo is None:  # SQLite hands back naive UTC
        last = last.replace(tzinfo=now.tzinfo)
    if last is None or now - last >= LAST_USED_RESOLUTION:
        token.last_used_at = now
        session.commit()
