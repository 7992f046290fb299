"""Real Chromium through Playwright against the app served by uvicorn in a thread.

Chromium comes from the system (/usr/bin/chromium, `apt-get install chromium`), never from
`playwright install`. Without it the tests skip locally and fail under CI=true.
"""

import importlib.util
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import uvicorn

from app.config import PROJECT_ROOT, Settings
from app.main import create_app
from tests._ports import free_port


def _root_conftest() -> ModuleType:
    # tests/ is not a package, so the suite-wide conftest is loaded by path to reuse its
    # skip_or_fail (skip locally, fail under CI=true).
    spec = importlib.util.spec_from_file_location(
        "tierline_tests_conftest", PROJECT_ROOT / "tests" / "conftest.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


skip_or_fail = _root_conftest().skip_or_fail

CHROMIUM = Path(os.environ.get("TIERLINE_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
# Screenshots go to a temporary folder (the suite writes nothing into the checkout).
DEFAULT_OUTPUT = Path(tempfile.gettempdir()) / "tierline-test-output"
OUTPUT_DIR = Path(os.environ.get("TIERLINE_TEST_OUTPUT", DEFAULT_OUTPUT)) / "browser"




class LiveServer:
    """uvicorn serving the app in a background thread."""

    def __init__(self, settings: Settings) -> None:
        self.port = free_port()
        config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=self.port,
                                log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def live_server(database_copies: Any) -> Iterator[LiveServer]:
    """The app on its own copy of the seeded catalog, for one test module."""
    if not CHROMIUM.exists():
        skip_or_fail(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    settings = Settings(database_url=database_copies.copy(seeded=True), seed_on_start=False,
                        secret_key="browser-tests")
    server = LiveServer(settings)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser(live_server: LiveServer) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class PageProblems:
    """Console errors, uncaught exceptions and failed requests seen by one page."""

    def __init__(self, page: Any) -> None:
        self.messages: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.messages.append(f"pageerror: {exc}"))
        page.on("requestfailed", lambda req: self.messages.append(f"failed: {req.url}"))
        page.on("response", self._response)

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.messages.append(f"console {message.type}: {message.text}")

    def _response(self, response: Any) -> None:
        if response.status >= 400 and response.request.resource_type != "document":
            self.messages.append(f"{response.status}: {response.url}")

    def take(self) -> list[str]:
        out, self.messages = self.messages, []
        return out


@pytest.fixture
def page(browser: Any, live_server: LiveServer) -> Iterator[tuple[Any, PageProblems]]:
    """A fresh laptop-sized page (clipboard allowed) and the problems it reports."""
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  base_url=live_server.url)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    tab = context.new_page()
    problems = PageProblems(tab)
    yield tab, problems
    context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where screenshots go (test-output/browser, gitignored)."""
    OUTPUT_DIR.mkdir(parents=True, exist_ok=True)
    return OUTPUT_DIR
