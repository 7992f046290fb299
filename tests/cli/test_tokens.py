"""`tierline admin create-token | list-tokens | revoke-token` against a test database."""

import hashlib

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from app.cli import cli
from app.models import ApiToken


@pytest.fixture
def run(seeded: str) -> object:
    runner = CliRunner()

    def invoke(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(cli, ["admin", *args])

    return invoke


def test_create_token_prints_it_last_and_stores_only_its_hash(
    run, session: Session, client: TestClient  # type: ignore[no-untyped-def]
) -> None:
    result = run("create-token", "ci-bot")
    assert result.exit_code == 0, result.output
    token = result.output.strip().splitlines()[-1]
    assert len(token) >= 32
    stored = session.scalars(select(ApiToken).where(ApiToken.name == "ci-bot")).one()
    assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in {stored.name, stored.token_hash}
    response = client.get("/api/v1/admin/audit", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200


def test_create_token_refuses_duplicate_and_bad_names(run) -> None:  # type: ignore[no-untyped-def]
    assert run("create-token", "ops").exit_code == 0
    duplicate = run("create-token", "ops")
    assert duplicate.exit_code == 1
    assert "already exists" in duplicate.output
    bad = run("create-token", "has space:colon")
    assert bad.exit_code == 1
    assert "name" in bad.output


def test_list_tokens_shows_names_and_status_never_tokens(run) -> None:  # type: ignore[no-untyped-def]
    token = run("create-token", "alpha").output.strip().splitlines()[-1]
    run("create-token", "beta")
    run("revoke-token", "beta")
    listing = run("list-tokens")
    assert listing.exit_code == 0
    lines = {line.split()[0]: line for line in listing.output.splitlines()[1:]}
    assert "active" in lines["alpha"]
    assert "revoked" in lines["beta"]
    assert token not in listing.output


def test_revoke_token_stops_api_access(run, client: TestClient) -> None:  # type: ignore[no-untyped-def]
    token = run("create-token", "temp").output.strip().splitlines()[-1]
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/admin/audit", headers=headers).status_code == 200
    result = run("revoke-token", "temp")
    assert result.exit_code == 0
    assert client.get("/api/v1/admin/audit", headers=headers).status_code == 401
    assert run("revoke-token", "nobody").exit_code == 1
