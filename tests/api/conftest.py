"""Read-only API tests share one seeded database per module (cheap on PostgreSQL too)."""

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app

from ._support import Catalog


@pytest.fixture(scope="module")
def api_settings(database_copies: Any) -> Settings:
    """Settings on a module-wide copy of the seeded catalog (tests here must not write)."""
    return Settings(
        database_url=database_copies.copy(seeded=True), seed_on_start=False, secret_key="t"
    )


@pytest.fixture(scope="module")
def api(api_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(api_settings)) as client:
        yield client


@pytest.fixture(scope="module")
def catalog(api_settings: Settings) -> Iterator[Catalog]:
    engine = make_engine(api_settings.database_url)
    with make_sessionmaker(engine)() as session:
        yield Catalog(session)
    engine.dispose()
