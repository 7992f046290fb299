"""Concurrent edits never overwrite each other: exactly one write wins per version."""

import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from app.catalog_version import current_catalog_version
from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.errors import PreconditionFailed
from app.main import create_app
from app.models import AuditEvent
from app.services import admin_records
from app.services.admin_records import patch_record
from app.services.preconditions import Preconditions
from app.services.records import BUILD, get_record
from app.services.tokens import create_token
from tests.admin.conftest import BUILDS, backend_url

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


# ---- a write that changes nothing, racing a write that does -----------------------------------


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_unchanged_put_answers_the_version_it_read_while_another_writer_commits(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """A PUT that changes nothing answers the version it compared, not a concurrent writer's:
    otherwise its client holds the other's ETag with the old body, and its next PUT reverts the
    other's change without a 412."""
    url = backend_url(backend, request)
    engine = make_engine(url)
    make = make_sessionmaker(engine)
    rolled_back, other_committed = threading.Event(), threading.Event()

    with make() as reader:
        original = admin_records.read_record(reader, BUILD, SLUG)
        unchanged_body = admin_records.record_document(original)
        assert original.version == 1

    def unchanged_put() -> admin_records.WriteResult:
        with make() as db:
            def hold_after_rollback(_session: Session) -> None:
                # The no-op write has rolled back; let the other writer commit right now.
                if not rolled_back.is_set():
                    rolled_back.set()
                    assert other_committed.wait(30), "the other writer never committed"

            event.listen(db, "after_rollback", hold_after_rollback)
            return admin_records.put_record(
                db, BUILD, SLUG, unchanged_body, actor="noop",
                preconditions=Preconditions(if_match=frozenset({"1"})),
            )

    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(unchanged_put)
        assert rolled_back.wait(30), "the unchanged PUT never rolled back"
        with make() as db:
            patch_record(db, BUILD, SLUG, {"notes": "changed meanwhile"}, actor="other",
                         preconditions=Preconditions(if_match=frozenset({"1"})))
        other_committed.set()
        result = pending.result(timeout=60)

    assert result.changed is False
    assert (result.version, result.document) == (1, unchanged_body)
    # The client now holds ETag "1": its next PUT is refused instead of reverting the change.
    with make() as db, pytest.raises(PreconditionFailed):
        admin_records.put_record(db, BUILD, SLUG, unchanged_body, actor="noop",
                                 preconditions=Preconditions(if_match=frozenset({"1"})))
    with make() as db:
        assert admin_records.read_record(db, BUILD, SLUG).notes == "changed meanwhile"
    engine.dispose()


def test_if_match_star_cannot_change_an_existing_record(
    admin_client: TestClient,
) -> None:
    url = f"/api/v1/admin/builds/{SLUG}"
    body = admin_client.get(url).json()
    for method, payload in (("PUT", {**body, "notes": "star"}), ("PATCH", {"notes": "star"})):
        response = admin_client.request(method, url, json=payload, headers={"If-Match": "*"})
        assert response.status_code == 428, (method, response.text)
        assert "If-Match: *" in response.json()["detail"]
    deleted = admin_client.delete(url, headers={"If-Match": "*"})
    assert deleted.status_code == 428
    assert admin_client.get(url).json()["notes"] == body["notes"]
