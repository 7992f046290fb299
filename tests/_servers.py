"""`tierline serve` in a child process for tests that need a real server, bounded in time.

Under load a server can take long to start, or never answer; a test must then fail with the
server's own log, never hang. So the log goes to a file (a pipe fills up and stalls the server,
and reading one blocks until it closes), every wait has a deadline, and the whole process group
(uvicorn's workers included) is stopped on the way out, killed if it will not stop.
"""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests._ports import free_port

START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 25.0
LOG_TAIL_CHARS = 2000


@dataclass(frozen=True)
class RunningServer:
    """A started server: where it answers and where it logs."""

    base_url: str
    log_path: Path
    process: subprocess.Popen[bytes]

    def log_tail(self) -> str:
        """The end of the server's log (for failure messages)."""
        return log_tail(self.log_path)


def log_tail(path: Path, chars: int = LOG_TAIL_CHARS) -> str:
    """The last `chars` characters of a log file, or a note when there is none."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return "(no log written)"
    return text[-chars:] or "(log empty)"


@contextmanager
def served(
    serve_args: list[str],
    env: dict[str, str],
    log_path: Path,
    *,
    start_timeout_s: float = START_TIMEOUT_S,
) -> Iterator[RunningServer]:
    """Run `tierline serve SERVE_ARGS --port N` until `/healthz` answers 200; stop it on exit.

    Fails the test (with the log's tail) when the server exits or does not answer in time.
    """
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    argv = [sys.executable, "-c", "from app.cli import main; main()", "serve", *serve_args,
            "--port", str(port)]
    with log_path.open("wb") as log:
        # Its own session: the workers are in its process group, so they can be stopped together.
        process = subprocess.Popen(
            argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = RunningServer(base_url, log_path, process)
    try:
        wait_for_health(server, start_timeout_s)
        yield server
    finally:
        stop(process)


def wait_for_health(server: RunningServer, timeout_s: float) -> None:
    """Poll `/healthz` until it answers 200; fail when the server exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    last_error = "no answer yet"
    while time.monotonic() < deadline:
        code = server.process.poll()
        if code is not None:
            pytest.fail(f"the server exited with status {code} before answering /healthz;"
                        f" its log ends:\n{server.log_tail()}")
        try:
            response = httpx.get(f"{server.base_url}/healthz", timeout=2)
            if response.status_code == 200:
                return
            last_error = f"/healthz answered {response.status_code}"
        except httpx.HTTPError as exc:
            last_error = f"{type(exc).__name__}: {exc}"
        time.sleep(0.2)
    pytest.fail(f"the server did not answer /healthz within {timeout_s:g} s ({last_error});"
                f" its log ends:\n{server.log_tail()}")


def stop(process: subprocess.Popen[bytes], timeout_s: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM the server's process group; SIGKILL it if it has not exited within `timeout_s`."""
    if process.poll() is None:
        _signal_group(process, signal.SIGTERM)
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=timeout_s)
    # Stopped, stuck or exited on its own: either way no worker may outlive the test.
    _signal_group(process, signal.SIGKILL)
    process.wait(timeout=10)


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with suppress(ProcessLookupError):  # the whole group is gone already
        os.killpg(process.pid, signum)
