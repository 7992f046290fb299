"""Run Alembic programmatically (used by `tierline migrate`, `serve` and the tests)."""

from alembic import command
from alembic.config import Config

from app.config import PROJECT_ROOT


def alembic_config(url: str) -> Config:
    """An Alembic Config pointing at migrations/ with the database URL attached."""
    cfg = Config(toml_file=str(PROJECT_ROOT / "pyproject.toml"))
    cfg.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    cfg.attributes["url"] = url
    return cfg


def upgrade_to_head(url: str) -> None:
    """Upgrade the schema at `url` to the newest revision."""
    command.upgrade(alembic_config(url), "head")
