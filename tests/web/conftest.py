"""Page tests share one seeded database per module (read-only), plus helpers."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app


@pytest.fixture(scope="module")
def web_settings(database_copies: Any) -> Settings:
    """Settings on a module-wide copy of the seeded catalog (tests using it must not write)."""
    return Settings(
        database_url=database_copies.copy(seeded=True), seed_on_start=False, secret_key="t"
    )


@pytest.fixture(scope="module")
def web(web_settings: Settings) -> Iterator[TestClient]:
    """A client on the module's catalog copy."""
    with TestClient(create_app(web_settings)) as client:
        yield client


@pytest.fixture(scope="module")
def db(web_settings: Settings) -> Iterator[Session]:
    """A session on the module's catalog copy, for computing expectations."""
    engine = make_engine(web_settings.database_url)
    with make_sessionmaker(engine)() as session:
        yield session
    engine.dispose()
