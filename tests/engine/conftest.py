"""Fixtures shared by the engine tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import MappingProxyType

import pytest

from app.engine import runtime
from app.engine.plan import clear_prepared


@pytest.fixture
def calibration(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[dict], None]]:
    """Replace the fitted calibration table for one test; prepared inputs memoise their
    efficiencies, so they are dropped whenever the table changes and after the test."""

    def use(table: dict) -> None:
        monkeypatch.setattr(runtime, "CALIBRATION", MappingProxyType(table))
        clear_prepared()

    yield use
    monkeypatch.undo()
    clear_prepared()
