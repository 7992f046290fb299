"""A migrated, seeded SQLite catalog for the in-process benchmarks (one place for the recipe).

The catalog is built by the `tierline migrate` and `tierline seed` commands in a subprocess,
as a user builds it, so a benchmark measures the schema and the data the service ships with.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def seeded_catalog(directory: str | Path) -> str:
    """Migrate and seed a fresh SQLite catalog in `directory`; its database URL."""
    url = f"sqlite:///{Path(directory) / 'tierline.db'}"
    env = {**os.environ, "TIERLINE_DATABASE_URL": url}
    for command in ("migrate", "seed"):
        subprocess.run(
            [sys.executable, "-c", "from app.cli import main; main()", command],
            cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    return url
