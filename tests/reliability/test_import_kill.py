"""Killing the process in the middle of an import leaves the database as it was before it."""

import copy
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import pytest

from app.catalog_version import current_catalog_version
from app.db import make_engine, make_sessionmaker
from app.services.catalog import export_document
from tests._servers import log_tail

# Generous: importing ~250 builds on a loaded machine; the bound is there so nothing hangs.
CHILD_TIMEOUT_S = 120.0

# Runs the real import service in a child process and freezes it at the worst moment: every
# row written inside the open transaction, COMMIT not yet sent.
CHILD = textwrap.dedent(
    """
    import json, sys, time
    from sqlalchemy import event
    from sqlalchemy.orm import Session
    from app.db import make_engine, make_sessionmaker
    from app.services.catalog import import_document

    url, path = sys.argv[1], sys.argv[2]

    @event.listens_for(Session, "before_commit")
    def freeze(session):
        session.flush()
        print("WRITTEN, NOT COMMITTED", flush=True)
        time.sleep(120)

    with make_sessionmaker(make_engine(url))() as session:
        result = import_document(session, json.load(open(path)), actor="test:kill")
    print("FINISHED", result.as_dict(), flush=True)
    """
)


def _snapshot(url: str) -> tuple[dict, int]:  # type: ignore[type-arg]
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            return export_document(session), current_catalog_version(session)
    finally:
        engine.dispose()


def _big_import(document: dict) -> dict:  # type: ignore[type-arg]
    """Every build edited plus many new ones: creates and updates in one transaction."""
    builds = copy.deepcopy(document["builds"])
    for build in builds:
        build["notes"] = (build.get("notes") or "") + " [edited by the interrupted import]"
    extra = []
    for i in range(200):
        clone = copy.deepcopy(document["builds"][i % len(document["builds"])])
        clone["slug"] = f"kill-test-{i}"
        clone["name"] = f"Kill test {i}"
        extra.append(clone)
    return {"builds": builds + extra}


def test_kill_during_import_leaves_the_catalog_unchanged(database_url: str, tmp_path: Path) -> None:
    before, version_before = _snapshot(database_url)
    doc_path = tmp_path / "import.json"
    doc_path.write_text(json.dumps(_big_import(before), default=str))
    script = tmp_path / "child.py"
    script.write_text(CHILD)

    child_log = tmp_path / "child.log"
    with child_log.open("wb") as log:
        child = subprocess.Popen(
            [sys.executable, str(script), database_url, str(doc_path)],
            stdout=subprocess.PIPE, stderr=log, text=True,
            cwd=Path(__file__).resolve().parents[2], env={**os.environ},
        )
    # The first line is read in a thread, with a deadline: a child that hangs before printing
    # fails the test instead of blocking it (the kill below closes the pipe, freeing the thread).
    reader = ThreadPoolExecutor(max_workers=1)
    try:
        first_line = reader.submit(child.stdout.readline)  # type: ignore[union-attr]
        try:
            line = first_line.result(timeout=CHILD_TIMEOUT_S)
        except FutureTimeout:
            pytest.fail(f"the import did not reach its commit within {CHILD_TIMEOUT_S:g} s;"
                        f" its log ends:\n{log_tail(child_log)}")
        assert line.strip() == "WRITTEN, NOT COMMITTED", line + log_tail(child_log)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        reader.shutdown(wait=False)
    assert child.returncode == -signal.SIGKILL

    # PostgreSQL notices the dead client and rolls its transaction back; SQLite recovers its
    # write-ahead log on the next open. Either way nothing of the import may remain.
    deadline = time.monotonic() + 10
    after, version_after = _snapshot(database_url)
    while after != before and time.monotonic() < deadline:
        time.sleep(0.2)
        after, version_after = _snapshot(database_url)
    assert version_after == version_before
    assert after == before
