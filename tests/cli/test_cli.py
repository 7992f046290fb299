"""The `tierline` command: seed (dry run, idempotence, all-or-nothing errors), export round trip."""

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from app.cli import cli
from app.config import get_settings
from app.db import make_engine, make_sessionmaker
from app.services.catalog import export_document

runner = CliRunner()


@pytest.fixture
def use_database(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Point the CLI's settings at a test database (settings are cached per process)."""
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _point_at(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv("TIERLINE_DATABASE_URL", url)
    get_settings.cache_clear()


def _export(url: str) -> dict:
    engine = make_engine(url)
    with make_sessionmaker(engine)() as session:
        document = export_document(session)
    engine.dispose()
    return document


@pytest.mark.parametrize("command", [[], ["serve"], ["migrate"], ["seed"], ["export"]])
def test_every_command_has_help(command: list[str]) -> None:
    result = runner.invoke(cli, [*command, "--help"])
    assert result.exit_code == 0
    assert "Usage" in result.output


def test_seed_dry_run_lists_records_and_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, use_database: None, empty_catalog_url: str
) -> None:
    _point_at(monkeypatch, empty_catalog_url)
    result = runner.invoke(cli, ["seed", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "create build 4x-rtx-4090-workstation" in result.output
    assert "would create" in result.output
    assert _export(empty_catalog_url) == {
        "accelerators": [],
        "builds": [],
        "models": [],
        "measurements": [],
    }


def test_seed_twice_changes_nothing_the_second_time(
    monkeypatch: pytest.MonkeyPatch, use_database: None, empty_catalog_url: str
) -> None:
    _point_at(monkeypatch, empty_catalog_url)
    first = runner.invoke(cli, ["seed"])
    assert first.exit_code == 0, first.output
    created = _export(empty_catalog_url)
    second = runner.invoke(cli, ["seed"])
    assert second.exit_code == 0, second.output
    assert "did create 0, update 0" in second.output
    assert _export(empty_catalog_url) == created


def test_export_reseeded_into_an_empty_database_yields_the_same_catalog(
    monkeypatch: pytest.MonkeyPatch,
    use_database: None,
    database_url: str,
    empty_catalog_url: str,
    tmp_path: Path,
) -> None:
    _point_at(monkeypatch, database_url)
    out = tmp_path / "catalog.json"
    exported = runner.invoke(cli, ["export", "--format", "json", "-o", str(out)])
    assert exported.exit_code == 0, exported.output
    _point_at(monkeypatch, empty_catalog_url)
    seeded = runner.invoke(cli, ["seed", str(out)])
    assert seeded.exit_code == 0, seeded.output
    assert _export(empty_catalog_url) == _export(database_url)


def test_bad_seed_file_names_file_record_and_field_and_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, use_database: None, database_url: str, tmp_path: Path
) -> None:
    _point_at(monkeypatch, database_url)
    before = _export(database_url)
    good = dict(before["builds"][0], name="renamed but must not be saved")
    bad = dict(before["builds"][1], power_w=-5)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"builds": [good, bad]}))
    result = runner.invoke(cli, ["seed", str(path)])
    assert result.exit_code == 1
    assert str(path) in result.output
    assert f"build '{bad['slug']}'" in result.output
    assert "power_w" in result.output
    assert _export(database_url) == before


def test_seeded_tier_that_contradicts_the_hardware_is_refused(
    monkeypatch: pytest.MonkeyPatch, use_database: None, database_url: str, tmp_path: Path
) -> None:
    _point_at(monkeypatch, database_url)
    before = _export(database_url)
    desktop = next(b for b in before["builds"] if b["slug"] == "4x-rtx-4090-workstation")
    path = tmp_path / "tier.yaml"
    path.write_text(yaml.safe_dump({"builds": [dict(desktop, tier="dgx")]}))
    result = runner.invoke(cli, ["seed", str(path)])
    assert result.exit_code == 1
    assert "tier: 'dgx' contradicts the hardware" in result.output
    assert "'desktop'" in result.output
    assert _export(database_url) == before


def test_seed_of_a_missing_path_fails_with_a_message(
    monkeypatch: pytest.MonkeyPatch, use_database: None, database_url: str, tmp_path: Path
) -> None:
    _point_at(monkeypatch, database_url)
    result = runner.invoke(cli, ["seed", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 1
    assert "no such file" in result.output


def test_serve_options_are_settings_uvicorn_accepts() -> None:
    # Every option `serve` passes is a public uvicorn.Config parameter of the installed version
    # (timeout_worker_healthcheck needs uvicorn >= 0.37, the range's lower bound).
    import uvicorn

    from app.cli.server import uvicorn_options

    options = uvicorn_options(get_settings(), workers=2)
    config = uvicorn.Config("app.main:app", **options)
    assert config.timeout_worker_healthcheck == 30
    assert config.workers == 2
