"""Test databases: migrate once, seed once, hand each test a fresh copy.

Backend: SQLite by default; PostgreSQL when TIERLINE_TEST_DATABASE_URL is set. Tests that need
PostgreSQL whatever the backend use `postgres_url`, which skips when none answers - except under
CI=true, where a skip would hide a missing service, so it fails instead.
"""

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from app.config import PROJECT_ROOT, Settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app
from app.migrate import upgrade_to_head
from app.services.catalog import import_document, load_seed_directory

# Hypothesis keeps example databases and caches under its home directory (./.hypothesis by
# default); the suite writes only to temporary directories, so point it at one.
os.environ.setdefault(
    "HYPOTHESIS_STORAGE_DIRECTORY", tempfile.mkdtemp(prefix="tierline-hypothesis-")
)

DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
IN_CI = os.environ.get("CI", "").lower() == "true"
TEST_DATABASE_URL = os.environ.get("TIERLINE_TEST_DATABASE_URL", "")


def skip_or_fail(reason: str) -> None:
    """Skip locally; under CI=true a missing service is a failure, not a skip."""
    if IN_CI:
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)


def _postgres_reachable(url: str) -> bool:
    engine = create_engine(url, connect_args={"connect_timeout": 2})
    try:
        with engine.connect():
            return True
    except Exception:
        return False
    finally:
        engine.dispose()


class PostgresFactory:
    """Creates databases on one PostgreSQL server, copies of a template, and drops them."""

    def __init__(self, base_url: str) -> None:
        self.base = make_url(base_url)
        self.admin = create_engine(self.base, isolation_level="AUTOCOMMIT")
        # Unique per factory: two factories in one process must never reuse a name.
        self.prefix = f"tl_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        self.counter = 0

    def url(self, name: str) -> str:
        return self.base.set(database=name).render_as_string(hide_password=False)

    def create(self, template: str | None = None) -> str:
        self.counter += 1
        name = f"{self.prefix}_{self.counter}"
        clause = f" TEMPLATE {template}" if template else ""
        with self.admin.connect() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            conn.execute(text(f"CREATE DATABASE {name}{clause}"))
        return name

    def drop(self, name: str) -> None:
        with self.admin.connect() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))

    def close(self) -> None:
        self.admin.dispose()


def _seed(url: str) -> None:
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        result = import_document(
            session, load_seed_directory(PROJECT_ROOT / "seed_data"), actor="test"
        )
    engine.dispose()
    assert result.ok, [e.as_dict() for e in result.errors][:5]


class DatabaseCopies:
    """Hands out fresh copies of a migrated (and optionally seeded) template database."""

    def __init__(self, tmp: Path, postgres: PostgresFactory | None) -> None:
        self.tmp = tmp
        self.postgres = postgres
        self.templates: dict[bool, str] = {}
        self.created: list[str] = []

    def _template(self, seeded: bool) -> str:
        if seeded not in self.templates:
            if self.postgres is None:
                path = self.tmp / f"template_{int(seeded)}.db"
                url = f"sqlite:///{path}"
                upgrade_to_head(url)
                if seeded:
                    _seed(url)
                self.templates[seeded] = str(path)
            else:
                name = self.postgres.create()
                url = self.postgres.url(name)
                upgrade_to_head(url)
                if seeded:
                    _seed(url)
                self.templates[seeded] = name
        return self.templates[seeded]

    def copy(self, seeded: bool) -> str:
        template = self._template(seeded)
        if self.postgres is None:
            self.created.append(template)
            target = self.tmp / f"db_{len(self.created)}.db"
            shutil.copyfile(template, target)
            return f"sqlite:///{target}"
        name = self.postgres.create(template=template)
        self.created.append(name)
        return self.postgres.url(name)

    def empty(self) -> str:
        """A database with no schema at all (for migration tests)."""
        if self.postgres is None:
            self.created.append("empty")
            return f"sqlite:///{self.tmp / f'empty_{len(self.created)}.db'}"
        name = self.postgres.create()
        self.created.append(name)
        return self.postgres.url(name)

    def close(self) -> None:
        if self.postgres is not None:
            for name in [*self.created, *self.templates.values()]:
                if name.startswith(self.postgres.prefix):
                    self.postgres.drop(name)
            self.postgres.close()


@pytest.fixture(scope="session")
def database_copies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DatabaseCopies]:
    postgres = None
    if TEST_DATABASE_URL:
        if not _postgres_reachable(TEST_DATABASE_URL):
            pytest.fail(f"TIERLINE_TEST_DATABASE_URL is set but unreachable: {TEST_DATABASE_URL}")
        postgres = PostgresFactory(TEST_DATABASE_URL)
    copies = DatabaseCopies(tmp_path_factory.mktemp("databases"), postgres)
    yield copies
    copies.close()


@pytest.fixture(scope="session")
def postgres_factory() -> Iterator[PostgresFactory]:
    """PostgreSQL whatever the suite's backend (skips without one, fails under CI)."""
    url = TEST_DATABASE_URL or DEFAULT_POSTGRES_URL
    if not url.startswith("postgresql") or not _postgres_reachable(url):
        skip_or_fail(f"no PostgreSQL at {url}")
    factory = PostgresFactory(url)
    yield factory
    factory.close()


@pytest.fixture
def database_url(database_copies: DatabaseCopies) -> str:
    """A fresh copy of the migrated, seeded catalog."""
    return database_copies.copy(seeded=True)


@pytest.fixture
def empty_catalog_url(database_copies: DatabaseCopies) -> str:
    """A fresh migrated database with no catalog records."""
    return database_copies.copy(seeded=False)


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return Settings(database_url=database_url, seed_on_start=False, secret_key="test-secret")


@pytest.fixture
def app(settings: Settings):  # type: ignore[no-untyped-def]
    return create_app(settings)


@pytest.fixture
def client(app) -> Iterator[TestClient]:  # type: ignore[no-untyped-def]
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def session(settings: Settings) -> Iterator[Session]:
    engine = make_engine(settings.database_url)
    with make_sessionmaker(engine)() as db_session:
        yield db_session
    engine.dispose()


def _git_status() -> str | None:
    """`git status --porcelain` of the checkout, or None outside a git work tree."""
    try:
        done = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_STATUS_BEFORE] = _git_status()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The suite leaves the checkout as it found it: a run that changed files fails."""
    before = session.config.stash.get(_STATUS_BEFORE, None)
    after = _git_status()
    if before is None or after is None or after == before:
        return
    # Only what the run added counts: a commit made meanwhile empties the status, which is fine.
    changed = sorted(set(after.splitlines()) - set(before.splitlines()))
    if not changed:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"the test run changed the checkout: {changed}", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


_STATUS_BEFORE = pytest.StashKey[str | None]()
