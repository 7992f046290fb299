"""HEAD wherever GET is (load balancers probe with it); a 405 lists every method the path takes."""

import pytest
from fastapi.testclient import TestClient

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


def test_head_over_a_real_server_is_clean(database_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Through uvicorn (which checks Content-Length against the body it is sent), HEAD answers
    the GET's headers with no body and the server logs no error."""
    import subprocess
    import sys
    import time

    import httpx

    from tests._ports import free_port

    port = free_port()
    log = tmp_path / "serve.log"
    env = {
        "TIERLINE_DATABASE_URL": database_url,
        "TIERLINE_SEED_ON_START": "false",
        "PATH": "/usr/bin:/bin",
    }
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-c", "from app.cli import main; main()", "serve", "--no-migrate",
             "--port", str(port)],
            env=env, stdout=out, stderr=out,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(300):
                try:
                    if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            for path in ("/healthz", "/api/v1/builds", "/"):
                got = httpx.get(base + path, timeout=30)
                head = httpx.head(base + path, timeout=30)
                assert head.status_code == 200 and head.content == b""
                assert head.headers["content-length"] == str(len(got.content))
        finally:
            server.terminate()
            server.wait(timeout=30)
    assert "Content-Length" not in log.read_text(), log.read_text()[-2000:]
