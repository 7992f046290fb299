"""FastAPI dependencies as Annotated aliases."""

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from app.config import Settings


def get_settings_dep(request: Request) -> Settings:
    """The settings the app was created with."""
    return request.app.state.settings  # type: ignore[no-any-return]


def get_session(request: Request) -> Iterator[Session]:
    """A session per request; reads never commit, write services commit once."""
    session: Session = request.app.state.sessionmaker()
    try:
        yield session
    finally:
        session.close()


SessionDep = Annotated[Session, Depends(get_session)]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
