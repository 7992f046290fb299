"""Measurements as catalog records: validation against the catalog, import, export, round trip."""

from typing import Any

import pytest
from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import AuditEvent, Measurement
from app.schemas.measurement import MeasurementIn
from app.services.catalog import export_document, import_document


def measurement(slug: str = "t-decode", **changes: Any) -> dict[str, Any]:
    """A valid measurement on a catalog accelerator and model (the SCHEMA.md shape)."""
    record: dict[str, Any] = {
        "slug": slug,
        "hardware": {"accelerator": "rtx-4090", "count": 1},
        "model": "llama-3-1-8b",
        "runtime": "llama.cpp",
        "precision": "q4_0",
        "batch": 1,
        "prompt_tokens": 0,
        "output_tokens": 128,
        "metric": "decode_tokens_per_s",
        "value": 130.5,
        "unit": "tokens/s",
        "source_url": "https://github.com/ggml-org/llama.cpp/discussions/15013",
        "as_of": "2025-08-01",
    }
    record.update(changes)
    return record


def _count(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(Measurement)) or 0


def test_a_valid_measurement_is_created_with_an_audit_event(session: Session) -> None:
    before = _count(session)
    result = import_document(session, {"measurements": [measurement()]}, actor="test")
    assert result.ok, result.errors
    assert _count(session) == before + 1
    event = session.scalar(select(AuditEvent).where(AuditEvent.slug == "t-decode"))
    assert event is not None and event.kind == "measurement" and event.action == "create"


def test_unknown_model_and_accelerator_are_named_and_nothing_is_written(session: Session) -> None:
    before = export_document(session)
    bad = measurement(model="no-such-model", hardware={"accelerator": "no-such-card", "count": 1})
    result = import_document(session, {"measurements": [measurement("t-ok"), bad]}, actor="t")
    fields = {(e.slug, e.field) for e in result.errors}
    assert fields == {("t-decode", "model"), ("t-decode", "hardware.accelerator")}
    assert export_document(session) == before


def test_a_measurement_may_name_a_model_of_the_same_document(session: Session) -> None:
    model = next(m for m in export_document(session)["models"] if m["slug"] == "llama-3-1-8b")
    new_model = {**model, "slug": "t-llama-copy", "name": "Copy of Llama 3.1 8B"}
    document = {"models": [new_model], "measurements": [measurement(model="t-llama-copy")]}
    result = import_document(session, document, actor="test")
    assert result.ok, result.errors
    assert [r.kind for r in result.created] == ["model", "measurement"]


def test_a_build_named_must_match_the_accelerators_used(session: Session) -> None:
    wrong_count = measurement(hardware={"build": "4x-rtx-4090-workstation", "count": 2})
    result = import_document(session, {"measurements": [wrong_count]}, actor="test")
    assert [e.field for e in result.errors] == ["hardware.count"]
    right = measurement(hardware={"build": "4x-rtx-4090-workstation", "count": 4})
    assert import_document(session, {"measurements": [right]}, actor="test").ok


def test_an_uncatalogued_accelerator_needs_its_spec() -> None:
    with pytest.raises(ValidationError, match="accelerator_spec"):
        MeasurementIn.model_validate(measurement(hardware={"count": 1}))
    spec = {
        "name": "Test GPU",
        "memory_gb": 16,
        "memory_bandwidth_gbs": 500,
        "fp16_tflops": 40,
        "memory_kind": "gddr",
        "source_url": "https://example.com/spec",
    }
    record = MeasurementIn.model_validate(
        measurement(hardware={"accelerator": "Test GPU", "accelerator_spec": spec, "count": 1})
    )
    assert record.hardware.accelerator_spec is not None


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"unit": "ms"}, "unit"),
        ({"value": -1.0}, "value"),
        ({"metric": "out_of_memory", "unit": "bool", "value": 3.0}, "out_of_memory"),
        ({"metric": "itl_ms", "unit": "ms", "value": True}, "positive number"),
        ({"hardware": {"accelerator": "rtx-4090", "count": 3, "nodes": 2}}, "multiple of nodes"),
        ({"source_url": "ftp://example.com"}, "source_url"),
    ],
)
def test_inconsistent_records_are_refused_naming_the_reason(
    changes: dict[str, Any], field: str
) -> None:
    with pytest.raises(ValidationError, match=field):
        MeasurementIn.model_validate(measurement(**changes))


def test_export_gives_back_the_imported_document(session: Session) -> None:
    oom = measurement(
        "t-oom", metric="out_of_memory", unit="bool", value=True, batch=None, output_tokens=None
    )
    records = [measurement(), oom]
    assert import_document(session, {"measurements": records}, actor="test").ok
    exported = {m["slug"]: m for m in export_document(session)["measurements"]}
    for raw in records:
        assert exported[raw["slug"]] == MeasurementIn.model_validate(raw).model_dump(mode="json")
    assert exported["t-oom"]["value"] is True
    again = import_document(session, {"measurements": list(exported.values())}, actor="test")
    assert again.ok and not again.created and not again.updated
