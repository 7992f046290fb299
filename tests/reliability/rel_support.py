"""Reliability test support: a private PostgreSQL cluster the tests may stop and start.

The cluster lives in a temp dir owned by the `postgres` OS user (the Debian binaries refuse to run
as root), listens on 127.0.0.1 on a free port in 55400-55499, and never touches the shared
instance on 5432. Without the binaries the tests skip locally and fail under CI=true.
"""

import os
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from app.config import PROJECT_ROOT
from app.db import make_engine, make_sessionmaker
from app.migrate import upgrade_to_head
from app.services.catalog import import_document, load_seed_directory
from tests._ports import free_port

IN_CI = os.environ.get("CI", "").lower() == "true"
PG_BIN_CANDIDATES = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


def skip_or_fail(reason: str) -> None:
    """Skip locally; under CI=true a missing service fails (as tests/conftest.py's helper)."""
    if IN_CI:
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)




def _as_postgres(*argv: str) -> list[str]:
    """Run a PostgreSQL binary as the postgres OS user when we are root."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *argv]
    return list(argv)


class PrivateCluster:
    """A throwaway PostgreSQL cluster: initdb once, then start/stop at will."""

    def __init__(self, bindir: Path, root: Path) -> None:
        self.bindir = bindir
        self.root = root
        self.datadir = root / "data"
        self.logfile = root / "server.log"
        self.port = free_port()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str, timeout: float = 60) -> None:
        subprocess.run(
            _as_postgres(*args), check=True, capture_output=True, timeout=timeout, cwd=self.root
        )

    def init(self) -> None:
        self._run(
            str(self.bindir / "initdb"), "-D", str(self.datadir), "-U", "postgres",
            "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C",
        )

    def start(self) -> None:
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.root}"
            " -c fsync=off -c max_connections=60"
        )
        self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-l", str(self.logfile),
            "-o", options, "-w", "-t", "30", "start",
        )

    def stop(self) -> None:
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-m", "fast", "-w", "stop")

    def is_running(self) -> bool:
        result = subprocess.run(
            _as_postgres(str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "status"),
            capture_output=True,
        )
        return result.returncode == 0

    def create_database(self, name: str) -> str:
        admin = create_engine(self.url(), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                conn.execute(text(f"CREATE DATABASE {name}"))
        finally:
            admin.dispose()
        return self.url(name)


def seed_database(url: str) -> None:
    """Migrate `url` to head and load seed_data/ into it."""
    upgrade_to_head(url)
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            result = import_document(
                session, load_seed_directory(PROJECT_ROOT / "seed_data"), actor="test"
            )
    finally:
        engine.dispose()
    assert result.ok, [e.as_dict() for e in result.errors][:5]


def wait_until(predicate, timeout_s: float = 10.0, step_s: float = 0.1) -> bool:  # type: ignore[no-untyped-def]
    """Poll `predicate` until true or the (bounded) time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return bool(predicate())


def app_routes(app) -> list[tuple[str, frozenset[str]]]:  # type: ignore[no-untyped-def]
    """Every (path template, methods) the app serves, included routers flattened."""
    from fastapi.routing import iter_route_contexts

    routes = []
    for context in iter_route_contexts(app.routes):
        path = context.path
        methods = getattr(context.original_route, "methods", None)
        if isinstance(path, str) and methods:
            routes.append((path, frozenset(methods)))
    return routes


def fill_path(path: str, slugs: dict[str, str]) -> str | None:
    """Fill `{slug}`-style parameters with a real record's slug; None when it cannot."""
    import re

    params = re.findall(r"{([^}]+)}", path)
    if not params:
        return path
    kind = next((k for k in ("builds", "accelerators", "models") if f"/{k}/" in path), None)
    if kind is None or len(params) != 1:
        return None
    return path.replace("{" + params[0] + "}", slugs[kind])
