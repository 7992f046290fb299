"""Run Alembic programmatically (used by `tierline migrate`, `serve` and the tests)."""

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from app.config import PROJECT_ROOT, data_dir
from app.db import make_engine


def alembic_config(url: str) -> Config:
    """An Alembic Config pointing at migrations/ with the database URL attached."""
    # pyproject's [tool.alembic] (revision file names) matters only in a checkout.
    pyproject = PROJECT_ROOT / "pyproject.toml"
    cfg = Config(toml_file=str(pyproject)) if pyproject.is_file() else Config()
    cfg.set_main_option("script_location", str(data_dir("migrations")))
    cfg.attributes["url"] = url
    return cfg


def upgrade_to_head(url: str) -> None:
    """Upgrade the schema at `url` to the newest revision."""
    command.upgrade(alembic_config(url), "head")


def schema_revisions(url: str) -> tuple[set[str], set[str]]:
    """The revisions the schema at `url` is at (none: a new database) and the newest ones."""
    heads = set(ScriptDirectory.from_config(alembic_config(url)).get_heads())
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return set(MigrationContext.configure(conn).get_current_heads()), heads
    finally:
        engine.dispose()
