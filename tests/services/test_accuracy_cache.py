"""The accuracy report is cached by what it depends on (the measurements and the records they
name), not by catalog version: an unrelated admin edit keeps it, a relevant one rebuilds it."""

from typing import Any

from sqlalchemy.orm import Session

from app.caching import snapshot
from app.services.accuracy import accuracy_report, report_inputs_digest
from app.services.catalog import export_document, import_document
from app.services.measurements import measurement_rows


def _edit(session: Session, kind: str, slug: str, **changes: Any) -> None:
    record = next(r for r in export_document(session)[kind] if r["slug"] == slug)
    record.update(changes)
    result = import_document(session, {kind: [record]}, actor="test")
    assert result.ok and result.updated, result.errors
    session.commit()


def _unmeasured_build(session: Session) -> str:
    named = {r.list_item.build for r in measurement_rows(snapshot(session))}
    builds = [b["slug"] for b in export_document(session)["builds"]]
    return next(slug for slug in builds if slug not in named)


def test_an_unrelated_build_edit_keeps_the_cached_report(session: Session) -> None:
    before = accuracy_report(snapshot(session))
    session.commit()
    _edit(session, "builds", _unmeasured_build(session), notes="edited: no measurement names it")
    after = accuracy_report(snapshot(session))
    assert after["catalog_version"] > before["catalog_version"]
    assert after["rows"] is before["rows"]  # the same cached body: nothing was rebuilt


def test_a_measurement_edit_rebuilds_the_report(session: Session) -> None:
    snap = snapshot(session)
    before = accuracy_report(snap)
    digest = report_inputs_digest(snap)
    edited = before["rows"][0]
    session.commit()
    _edit(session, "measurements", edited["slug"], value=edited["measured"] * 2)
    after = accuracy_report(snapshot(session))
    assert report_inputs_digest(snapshot(session)) != digest
    row = next(r for r in after["rows"] if r["slug"] == edited["slug"])
    assert row["measured"] == edited["measured"] * 2


def test_an_edit_of_a_measured_accelerator_rebuilds_the_report(session: Session) -> None:
    snap = snapshot(session)
    row = next(
        r
        for r in measurement_rows(snap)
        if r.list_item.accelerator == "rtx-4090" and r.list_item.metric == "decode_tokens_per_s"
    )
    before = next(r for r in accuracy_report(snap)["rows"] if r["slug"] == row.slug)
    session.commit()
    card = next(a for a in export_document(session)["accelerators"] if a["slug"] == "rtx-4090")
    _edit(
        session, "accelerators", "rtx-4090", memory_bandwidth_gbs=card["memory_bandwidth_gbs"] / 2
    )
    after = next(r for r in accuracy_report(snapshot(session))["rows"] if r["slug"] == row.slug)
    assert after["predicted"] != before["predicted"]
