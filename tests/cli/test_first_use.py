"""A first-time user's commands: a fresh directory's default database is prepared as `serve`
prepares it; a database the CLI must not change, or a malformed URL, is one message."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from app.cli import cli
from app.config import Settings, get_settings

runner = CliRunner()
ESTIMATE = ["estimate", "--build", "1x-rtx-4090-desktop", "--model", "gpt-oss-120b", "--json"]


@pytest.fixture
def fresh_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """An empty working directory and the default settings (no TIERLINE_ variables)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TIERLINE_DATABASE_URL", raising=False)
    monkeypatch.delenv("TIERLINE_SEED_ON_START", raising=False)
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def _use_url(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv("TIERLINE_DATABASE_URL", url)
    get_settings.cache_clear()


def test_estimate_in_a_fresh_directory_migrates_seeds_and_answers(fresh_directory: Path) -> None:
    result = runner.invoke(cli, ESTIMATE)
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["build"]["slug"] == "1x-rtx-4090-desktop"
    assert answer["model"]["slug"] == "gpt-oss-120b"
    assert "seeded the empty catalog" in result.stderr
    assert (fresh_directory / "tierline.db").is_file()


def test_a_second_command_reuses_the_prepared_catalog(fresh_directory: Path) -> None:
    assert runner.invoke(cli, ESTIMATE).exit_code == 0
    again = runner.invoke(cli, ESTIMATE)
    assert again.exit_code == 0, again.output
    assert again.stderr == ""


def test_export_of_a_new_database_names_it_and_the_commands_to_run(
    fresh_directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{fresh_directory / 'other.db'}"
    _use_url(monkeypatch, url)
    result = runner.invoke(cli, ["export"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"the database {url} has no tierline schema yet: run `tierline migrate` and `tierline seed`"
    ]


@pytest.mark.parametrize("url", ["", "not-a-url", "postgres://user:hunter2@db.example/tl"])
@pytest.mark.parametrize("command", [ESTIMATE, ["serve"], ["export"], ["admin", "list-tokens"]])
def test_a_malformed_database_url_is_one_line_naming_the_setting(
    fresh_directory: Path, monkeypatch: pytest.MonkeyPatch, url: str, command: list[str]
) -> None:
    _use_url(monkeypatch, url)
    result = runner.invoke(cli, command)
    assert result.exit_code == 2
    assert isinstance(result.exception, SystemExit)  # no traceback: the command exited
    [line] = result.output.strip().splitlines()
    assert line.startswith("TIERLINE_DATABASE_URL: ")
    assert "hunter2" not in line
    assert not (fresh_directory / "tierline.db").exists()


def test_settings_refuse_a_url_of_an_unknown_database_kind() -> None:
    with pytest.raises(ValidationError, match="unknown database kind 'postgres'"):
        Settings(database_url="postgres://user@db.example/tl")
