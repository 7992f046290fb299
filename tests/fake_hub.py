"""A small local stand-in for the Hugging Face Hub: a real HTTP server on a random port that
serves a few config.json files (and the Hub's failure modes), so the real fetching code runs in
tests and nothing reaches the internet."""

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

SEED_MODELS = Path(__file__).resolve().parent.parent / "seed_data" / "models.yaml"
GATED_TOKEN = "hf_test_token_with_access"


def _seed_config(slug: str) -> dict[str, Any]:
    models = yaml.safe_load(SEED_MODELS.read_text(encoding="utf-8"))
    return dict(next(m for m in models if m["slug"] == slug)["config"])


LLAMA_8B = _seed_config("llama-3-1-8b")
DEEPSEEK_V3 = _seed_config("deepseek-v3")
SUFFIX = "/resolve/main/config.json"


class _Hub(BaseHTTPRequestHandler):
    server_version = "FakeHub/1"
    requests_seen: list[tuple[str, str | None]] = []

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        auth = self.headers.get("Authorization")
        type(self).requests_seen.append((self.path, auth))
        if not self.path.endswith(SUFFIX):
            self._send(404, b'{"error": "Entry not found"}')
            return
        repo = self.path[1 : -len(SUFFIX)]
        if repo == "meta-llama/Llama-3.1-8B":
            self._send(200, json.dumps(LLAMA_8B).encode())
        elif repo == "deepseek-ai/DeepSeek-V3":
            self._send(200, json.dumps(DEEPSEEK_V3).encode())
        elif repo == "gated-org/gated-model":
            if auth == f"Bearer {GATED_TOKEN}":
                self._send(200, json.dumps(LLAMA_8B).encode())
            else:
                self._send(401, b'{"error": "Access to model gated-org/gated-model is restricted"}')
        elif repo == "renamed-org/old-name":
            self._send(307, b"", headers={"Location": "/meta-llama/Llama-3.1-8B" + SUFFIX})
        elif repo == "odd-org/html-page":
            self._send(200, b"<html><body>Sign in</body></html>", "text/html")
        elif repo == "odd-org/json-list":
            self._send(200, b"[1, 2, 3]")
        elif repo == "odd-org/tokenizer-like":
            self._send(200, b'{"vocab": {"a": 1}}')
        elif repo == "odd-org/huge":
            self._send(200, b'{"model_type": "' + b"x" * 1_100_000 + b'"}')
        elif repo == "odd-org/broken":
            self._send(500, b"internal error", "text/plain")
        elif repo == "odd-org/slow":
            time.sleep(1.5)
            self._send(200, json.dumps(LLAMA_8B).encode())
        else:
            self._send(404, b'{"error": "Repository not found"}')


@contextmanager
def fake_hub() -> Iterator[str]:
    """Serve the fake Hub on 127.0.0.1 at a random free port; yields its base URL."""
    _Hub.requests_seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def requests_seen() -> list[tuple[str, str | None]]:
    """(path, Authorization header) of every request the fake Hub answered."""
    return list(_Hub.requests_seen)


def closed_port_url() -> str:
    """A URL on a local port nothing listens on (an "offline" Hub)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
