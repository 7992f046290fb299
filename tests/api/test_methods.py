"""HEAD wherever GET is (load balancers probe with it); a 405 lists every method the path takes."""

from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from tests._servers import log_tail, served

GET_PATHS = [
    "/healthz",
    "/api/v1/builds",
    "/api/v1/builds/4x-rtx-4090-workstation",
    "/api/v1/builds.csv",
    "/api/v1/tiers",
    "/",
    "/builds",
    "/static/css/site.css",
    "/openapi.json",
]


@pytest.mark.parametrize("path", GET_PATHS)
def test_head_answers_like_get_without_a_body(client: TestClient, path: str) -> None:
    got = client.get(path)
    head = client.head(path)
    assert head.status_code == got.status_code == 200
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    assert head.headers["content-length"] == str(len(got.content))
    assert head.headers["content-security-policy"]


def test_head_on_a_post_only_route_is_405_naming_post(client: TestClient) -> None:
    response = client.head("/api/v1/estimate")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("DELETE", "/healthz", "GET, HEAD"),
        ("PUT", "/api/v1/builds", "GET, HEAD"),
        ("POST", "/api/v1/builds/4x-rtx-4090-workstation", "GET, HEAD"),
    ],
)
def test_a_405_lists_every_method_of_the_path(
    client: TestClient, method: str, path: str, allow: str
) -> None:
    response = client.request(method, path)
    assert response.status_code == 405
    assert response.headers["allow"] == allow


def test_head_over_a_real_server_is_clean(database_url: str, tmp_path: Path) -> None:
    """Through uvicorn (which checks Content-Length against the body it is sent), HEAD answers
    the GET's headers with no body and the server logs no error."""
    env = {
        "TIERLINE_DATABASE_URL": database_url,
        "TIERLINE_SEED_ON_START": "false",
        "PATH": "/usr/bin:/bin",
    }
    log = tmp_path / "serve.log"
    with served(["--no-migrate"], env, log) as server, httpx.Client(
        base_url=server.base_url, timeout=30
    ) as client:
        for path in ("/healthz", "/api/v1/builds", "/"):
            got = client.get(path)
            head = client.head(path)
            assert head.status_code == 200 and head.content == b""
            assert head.headers["content-length"] == str(len(got.content))
    assert "Content-Length" not in log.read_text(), log_tail(log)
