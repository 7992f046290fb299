"""The Host header cannot poison absolute URLs: with TIERLINE_ALLOWED_HOSTS any other Host is
refused, and `serve` will not listen beyond loopback without it."""

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli import cli
from app.config import Settings, get_settings
from app.main import create_app

PUBLIC = "tierline.example.org"


@pytest.fixture
def guarded(settings: Settings) -> TestClient:
    app = create_app(settings.model_copy(update={"allowed_hosts": f"{PUBLIC}, 127.0.0.1"}))
    return TestClient(app, base_url=f"http://{PUBLIC}")


def test_a_foreign_host_is_refused_before_any_url_is_built(guarded: TestClient) -> None:
    with guarded as client:
        for path in ("/api/v1/builds?per_page=1", "/builds", "/healthz"):
            response = client.get(path, headers={"Host": "evil.example"})
            assert response.status_code == 400, path
            assert "evil.example" not in response.text
            assert "evil.example" not in response.headers.get("link", "")
            assert response.headers["x-content-type-options"] == "nosniff"


def test_the_configured_host_builds_the_absolute_urls(guarded: TestClient) -> None:
    with guarded as client:
        response = client.get("/api/v1/builds", params={"per_page": 1})
        assert response.status_code == 200
        assert f"<http://{PUBLIC}/api/v1/builds?" in response.headers["link"]
        assert response.json()["next_url"].startswith(f"http://{PUBLIC}/")


@pytest.mark.parametrize("bind", ["0.0.0.0", "192.0.2.10", "::"])
def test_serve_beyond_loopback_without_allowed_hosts_refuses_to_start(
    bind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TIERLINE_ALLOWED_HOSTS", raising=False)
    monkeypatch.setenv("TIERLINE_DATABASE_URL", "sqlite:////nonexistent/never-created.db")
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(cli, ["serve", "--host", bind])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 2, result.output
    assert "TIERLINE_ALLOWED_HOSTS" in result.output


def test_loopback_or_configured_hosts_may_serve() -> None:
    assert Settings().exposure_problem("127.0.0.1") is None
    assert Settings(allowed_hosts=PUBLIC).exposure_problem("0.0.0.0") is None
    assert Settings().exposure_problem("0.0.0.0") is not None
