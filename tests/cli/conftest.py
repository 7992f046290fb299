"""CLI fixtures: the commands' settings pointed at a test database."""

from collections.abc import Iterator

import pytest

from app.config import get_settings


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch, database_url: str) -> Iterator[str]:
    """The CLI's settings pointed at a seeded copy of the catalog (settings are cached per
    process, so the cache is cleared before and after)."""
    monkeypatch.setenv("TIERLINE_DATABASE_URL", database_url)
    get_settings.cache_clear()
    yield database_url
    get_settings.cache_clear()
