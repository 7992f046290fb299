"""Reliability fixtures (helpers in rel_support.py)."""

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.rel_support import PG_BIN_CANDIDATES, PrivateCluster, skip_or_fail


@pytest.fixture(scope="module")
def private_cluster() -> Iterator[PrivateCluster]:
    """A running private cluster for this module (stopped and removed afterwards)."""
    bindir = next((b for b in PG_BIN_CANDIDATES if (b / "initdb").exists()), None)
    if bindir is None or shutil.which("runuser") is None:
        skip_or_fail("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    root = Path(tempfile.mkdtemp(prefix="rel_pg_"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    cluster = PrivateCluster(bindir, root)  # type: ignore[arg-type]
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        if cluster.is_running():
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
