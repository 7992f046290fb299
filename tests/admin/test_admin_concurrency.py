"""Concurrent edits never overwrite each other: exactly one write wins per version."""

import os
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.errors import PreconditionFailed
from app.main import create_app
from app.migrate import upgrade_to_head
from app.models import AuditEvent
from app.services import admin_records
from app.services.admin_records import Preconditions, patch_record
from app.services.catalog import import_document
from app.services.catalog_version import current_catalog_version
from app.services.records import BUILD, get_record
from app.services.tokens import create_token
from tests.admin.conftest import BUILDS, FIXTURE_DOCUMENT

SLUG = "adm-4x-4090"
WRITERS = 8
ROUNDS = 3


def test_a_write_based_on_a_stale_read_fails_even_after_its_check_passed(
    database_url: str,
) -> None:
    """The UPDATE itself carries the version: a check-then-write race still cannot overwrite."""
    engine = make_engine(database_url)
    make = make_sessionmaker(engine)
    with make() as slow, make() as fast:
        stale = get_record(slow, BUILD, SLUG)  # read version 1 ...
        assert stale is not None
        patch_record(fast, BUILD, SLUG, {"notes": "fast"}, actor="fast",
                     preconditions=Preconditions(if_match=frozenset({"1"})))  # ... fast wins
        # slow passed its If-Match check against what it read; its write must still fail.
        raw = {**admin_records.record_document(stale), "notes": "slow"}
        with pytest.raises(PreconditionFailed):
            admin_records._replace(slow, BUILD, stale, raw, actor="slow")
    with make() as check:
        record = get_record(check, BUILD, SLUG)
        assert record is not None and record.notes == "fast" and record.version == 2
    engine.dispose()


@pytest.fixture
def pg_url(postgres_factory: Any) -> Iterator[str]:
    """A migrated PostgreSQL database of our own (adm_ prefix) holding the fixture records."""
    name = f"adm_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    with postgres_factory.admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE {name}"))
    url = postgres_factory.url(name)
    try:
        upgrade_to_head(url)
        engine = make_engine(url)
        with make_sessionmaker(engine)() as session:
            assert import_document(session, FIXTURE_DOCUMENT, actor="fixture").ok
        engine.dispose()
        yield url
    finally:
        with postgres_factory.admin.connect() as conn:
            conn.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))


@pytest.fixture
def pg_client(pg_url: str) -> Iterator[tuple[TestClient, dict[str, str]]]:
    engine = make_engine(pg_url)
    with make_sessionmaker(engine)() as session:
        token = create_token(session, name="racer")
    engine.dispose()
    settings = Settings(database_url=pg_url, seed_on_start=False)
    with TestClient(create_app(settings)) as client:
        yield client, {"Authorization": f"Bearer {token}"}


def _race(requests: list[Any]) -> list[Any]:
    barrier = threading.Barrier(len(requests))

    def run(send: Any) -> Any:
        barrier.wait()
        return send()

    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        return list(pool.map(run, requests))


@pytest.mark.postgres
def test_concurrent_patches_exactly_one_wins_per_version(
    pg_client: tuple[TestClient, dict[str, str]], pg_url: str
) -> None:
    client, auth = pg_client
    url = f"/api/v1/admin/builds/{SLUG}"
    winners = []
    for round_no in range(ROUNDS):
        etag = client.get(url, headers=auth).headers["etag"]

        def writer(i: int, etag: str = etag, round_no: int = round_no) -> Any:
            return lambda: client.patch(
                url, json={"notes": f"round {round_no} writer {i}"},
                headers={**auth, "If-Match": etag},
            )

        responses = _race([writer(i) for i in range(WRITERS)])
        statuses = Counter(r.status_code for r in responses)
        assert statuses == {200: 1, 412: WRITERS - 1}, statuses
        winner = next(r for r in responses if r.status_code == 200).json()
        assert client.get(url, headers=auth).json()["notes"] == winner["notes"]
        winners.append(winner["notes"])

    engine = make_engine(pg_url)
    with Session(engine) as session:
        updates = session.scalar(
            select(func.count()).select_from(AuditEvent)
            .where(AuditEvent.slug == SLUG, AuditEvent.action == "update")
        )
        assert updates == ROUNDS  # no lost or phantom edit
        # fixture import raised it once; each round once more
        assert current_catalog_version(session) == 1 + ROUNDS
    engine.dispose()


@pytest.mark.postgres
def test_concurrent_puts_and_deletes_of_one_version(
    pg_client: tuple[TestClient, dict[str, str]],
) -> None:
    client, auth = pg_client
    url = f"/api/v1/admin/builds/{SLUG}"
    etag = client.get(url, headers=auth).headers["etag"]
    headers = {**auth, "If-Match": etag}

    def put(i: int) -> Any:
        return lambda: client.put(url, json={**BUILDS[0], "power_w": 1000 + i}, headers=headers)

    requests = [put(i) for i in range(WRITERS - 2)]
    requests += [lambda: client.delete(url, headers=headers)] * 2
    statuses = Counter(r.status_code for r in _race(requests))
    assert statuses[200] + statuses[204] == 1, statuses
    # A loser learns its version is stale (412), or, if a delete won, that the record is gone.
    if statuses[204]:
        assert statuses[412] + statuses[404] == WRITERS - 1, statuses
    else:
        assert statuses[412] == WRITERS - 1, statuses


@pytest.mark.postgres
def test_concurrent_creates_of_one_slug_create_it_once(
    pg_client: tuple[TestClient, dict[str, str]],
) -> None:
    client, auth = pg_client
    url = "/api/v1/admin/builds/adm-raced"

    def create(i: int) -> Any:
        body = {**BUILDS[0], "slug": "adm-raced", "power_w": 1000 + i}
        return lambda: client.put(url, json=body, headers={**auth, "If-None-Match": "*"})

    statuses = Counter(r.status_code for r in _race([create(i) for i in range(WRITERS)]))
    assert statuses == {201: 1, 412: WRITERS - 1}, statuses
