"""Slow and unauthenticated clients against a real uvicorn server on a random port: bodies are
read before a request takes an admission slot (and time out), and admin credentials are checked
before a body is read. Servers and sockets are bounded and stop themselves."""

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

import pytest
import uvicorn
from sqlalchemy.orm import Session

from app.config import Settings
from app.main import create_app

# Generous bounds: the assertions are about whether an answer comes, not how fast.
ANSWER_WITHIN_S = 20.0
SLOTS = 4


@contextmanager
def running_server(settings: Settings) -> Iterator[int]:
    """The app under uvicorn in a thread, on a free loopback port; stopped on exit."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(settings), log_level="warning", lifespan="on",
                            timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if server.started:
                break
            threading.Event().wait(0.05)
        assert server.started, "uvicorn did not start"
        yield port
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


def open_connection(port: int) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", port), timeout=ANSWER_WITHIN_S)
    return conn


def send_head(conn: socket.socket, method: str, path: str, headers: dict[str, str]) -> None:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in
                                                               headers.items())]
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())


def read_status(conn: socket.socket, what: str) -> int:
    """The status code of the response on `conn`; fails with `what` if none comes in time."""
    try:
        data = conn.recv(4096)
    except TimeoutError:
        pytest.fail(f"no answer within {ANSWER_WITHIN_S:g} s: {what}")
    assert data.startswith(b"HTTP/1.1 "), data[:100]
    return int(data.split(b" ", 2)[1])


def stalled_posts(stack: ExitStack, port: int, count: int) -> list[socket.socket]:
    """`count` POSTs that announce 1000 bytes of body, send one, and stop."""
    conns = []
    for _ in range(count):
        conn = stack.enter_context(open_connection(port))
        send_head(conn, "POST", "/api/v1/estimate",
                  {"Content-Type": "application/json", "Content-Length": "1000"})
        conn.sendall(b"{")
        conns.append(conn)
    return conns


def healthz_status(port: int, what: str) -> int:
    with open_connection(port) as conn:
        send_head(conn, "GET", "/healthz", {"Connection": "close"})
        return read_status(conn, what)


@pytest.fixture
def server_settings(settings: Settings) -> Callable[..., Settings]:
    def make(**changes: object) -> Settings:
        return settings.model_copy(update={"max_concurrent_requests": SLOTS, **changes})

    return make


def test_stalled_bodies_never_hold_an_admission_slot(
    server_settings: Callable[..., Settings],
) -> None:
    # Four times as many stalled clients as slots, and a body timeout far beyond the test.
    with running_server(server_settings(body_timeout_s=600)) as port, ExitStack() as stack:
        stalled = stalled_posts(stack, port, 4 * SLOTS)
        for attempt in range(3):
            status = healthz_status(port, f"/healthz while {len(stalled)} bodies stall")
            assert status == 200, (attempt, status)


def test_a_body_that_stops_arriving_is_answered_408(
    server_settings: Callable[..., Settings],
) -> None:
    with running_server(server_settings(body_timeout_s=1)) as port, ExitStack() as stack:
        (conn,) = stalled_posts(stack, port, 1)
        assert read_status(conn, "the stalled POST after its body timeout") == 408


def test_unauthenticated_import_is_refused_before_its_body_is_sent(
    server_settings: Callable[..., Settings],
) -> None:
    # Announces a body at the import limit and sends none of it: the answer can only come
    # from a check made before reading (no token, or a wrong one).
    with running_server(server_settings(body_timeout_s=600)) as port, ExitStack() as stack:
        for headers in ({}, {"Authorization": "Bearer tl_not-a-token"}):
            conn = stack.enter_context(open_connection(port))
            send_head(conn, "POST", "/api/v1/admin/import",
                      {"Content-Type": "application/yaml", "Content-Length": "10000000",
                       **headers})
            assert read_status(conn, f"unauthenticated import {headers}") == 401


def test_healthz_answers_while_a_large_yaml_import_is_parsed(
    server_settings: Callable[..., Settings], session: Session
) -> None:
    from app.services.tokens import create_token

    token = create_token(session, name="yaml-importer")
    # ~3 MB of YAML: minutes for the pure-Python loader, about a second for libyaml.
    document = b"junk:\n" + b"- {a: 1, b: two}\n" * 180_000
    with running_server(server_settings(body_timeout_s=600)) as port, ExitStack() as stack:
        importer = stack.enter_context(open_connection(port))
        importer.settimeout(120)
        send_head(importer, "POST", "/api/v1/admin/import?dry_run=true",
                  {"Content-Type": "application/yaml", "Content-Length": str(len(document)),
                   "Authorization": f"Bearer {token}"})
        importer.sendall(document)
        # Give the server time to finish reading the body and start parsing (sendall returns
        # once the kernel has the bytes); from then on /healthz must not wait for the parse.
        threading.Event().wait(3)
        assert healthz_status(port, "/healthz while a YAML import is parsed") == 200
        assert read_status(importer, "the YAML import") == 422  # `junk` is no catalog key
