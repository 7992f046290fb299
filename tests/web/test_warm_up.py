"""A `serve` worker computes the catalog-wide caches in the background as it starts."""

from typing import Any

import pytest
from fastapi.testclient import TestClient

import app.main as main_module
from app.caching import ValueCache
from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.main import create_app
from app.services.accuracy import report
from app.web.warm_up import start_warm_up, warm_caches


def _count_report_computations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    compute = report._report_body

    def counted(snap: Any) -> Any:
        calls.append(1)
        return compute(snap)

    monkeypatch.setattr(report, "REPORTS", ValueCache(max_entries=4))
    monkeypatch.setattr(report, "_report_body", counted)
    return calls


def test_after_the_warm_up_a_build_page_does_not_compute_the_accuracy_report(
    database_copies: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(
        database_url=database_copies.copy(seeded=True), seed_on_start=False, secret_key="t"
    )
    calls = _count_report_computations(monkeypatch)
    engine = make_engine(settings.database_url)
    start_warm_up(make_sessionmaker(engine), settings).join(timeout=120)
    assert calls == [1]
    with TestClient(create_app(settings)) as client:
        assert client.get("/builds/dgx-h200").status_code == 200
        assert client.get("/models/llama-3-3-70b").status_code == 200
    assert calls == [1]
    engine.dispose()


def test_a_failing_warm_up_is_logged_and_does_not_raise(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> Any:
        raise RuntimeError("database gone")

    warm_caches(broken, Settings(secret_key="t"))  # type: ignore[arg-type]
    assert "cache warm-up failed" in caplog.text


@pytest.mark.parametrize("enabled", [True, False])
def test_serve_workers_warm_up_unless_the_setting_turns_it_off(
    enabled: bool, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Settings] = []
    settings = Settings(
        database_url=database_url, seed_on_start=False, secret_key="t", warm_caches=enabled
    )
    monkeypatch.setattr(main_module, "get_settings", lambda: settings)
    monkeypatch.setattr(main_module, "tune_gc_for_serving", lambda: None)
    monkeypatch.setattr(main_module, "start_warm_up", lambda _s, st: started.append(st))
    main_module.app_factory()
    assert started == ([settings] if enabled else [])
