"""The entry point: deterministic, frozen results (estimate.py)."""

from __future__ import annotations

import dataclasses

import pytest

from app.engine import Workload, estimate

from .shapes import CLUSTER, DEEPSEEK_V3, spec


def test_estimate_is_deterministic_and_frozen():
    a = estimate(CLUSTER, spec(DEEPSEEK_V3), Workload(precision="fp8"))
    b = estimate(CLUSTER, spec(DEEPSEEK_V3), Workload(precision="fp8"))
    assert a == b
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.fits = False  # type: ignore[misc]
