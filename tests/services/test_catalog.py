"""Catalog import: all or nothing, dry run equals the real run, audit and catalog version."""

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.catalog_version import current_catalog_version
from app.models import AuditEvent
from app.services.catalog import export_document, import_document


def _accelerator(slug: str, **changes: Any) -> dict[str, Any]:
    record = {
        "slug": slug,
        "name": f"Test card {slug}",
        "vendor": "Test",
        "memory_gb": 48,
        "memory_bandwidth_gbs": 900,
        "fp16_tflops": 150,
        "source_url": "https://example.com/spec",
        "as_of": "2026-11-01",
    }
    record.update(changes)
    return record


def _build(slug: str, accelerator: str, **changes: Any) -> dict[str, Any]:
    record = {
        "slug": slug,
        "name": f"Test build {slug}",
        "accelerator": accelerator,
        "accelerators_per_node": 2,
        "intra_node_link": {"kind": "pcie", "bandwidth_gbs": 32},
        "source_url": "https://example.com/build",
        "as_of": "2026-11-01",
    }
    record.update(changes)
    return record


def test_import_creates_records_that_reference_each_other(session: Session) -> None:
    version = current_catalog_version(session)
    result = import_document(
        session,
        {"accelerators": [_accelerator("t-card")], "builds": [_build("t-rig", "t-card")]},
        actor="test",
    )
    assert result.ok, result.errors
    assert [r.slug for r in result.created] == ["t-card", "t-rig"]
    exported = export_document(session)
    rig = next(b for b in exported["builds"] if b["slug"] == "t-rig")
    assert rig["tier"] == "desktop"
    assert current_catalog_version(session) == version + 1


def test_one_invalid_record_means_nothing_is_written_and_every_error_is_listed(
    session: Session,
) -> None:
    before = export_document(session)
    audits = session.scalar(select(func.count()).select_from(AuditEvent))
    result = import_document(
        session,
        {
            "accelerators": [_accelerator("ok-card"), _accelerator("bad-card", memory_gb=0)],
            "builds": [_build("bad-rig", "no-such-card")],
        },
        actor="test",
    )
    fields = {(e.kind, e.slug, e.field) for e in result.errors}
    assert ("accelerator", "bad-card", "memory_gb") in fields
    assert ("build", "bad-rig", "accelerator") in fields
    assert not result.created
    assert export_document(session) == before
    assert session.scalar(select(func.count()).select_from(AuditEvent)) == audits


def test_dry_run_answers_like_the_real_run_and_writes_nothing(session: Session) -> None:
    document = {"accelerators": [_accelerator("dry-card")], "builds": [_build("dry", "dry-card")]}
    before = export_document(session)
    dry = import_document(session, document, actor="test", dry_run=True)
    assert export_document(session) == before
    real = import_document(session, document, actor="test")
    assert dry.as_dict() == real.as_dict()
    assert export_document(session) != before


def test_importing_the_same_document_twice_changes_nothing(session: Session) -> None:
    document = export_document(session)
    version = current_catalog_version(session)
    result = import_document(session, document, actor="test")
    assert result.ok
    assert not result.created and not result.updated
    assert len(result.unchanged) == sum(len(v) for v in document.values())
    assert current_catalog_version(session) == version


def test_an_update_is_audited_with_before_and_after(session: Session) -> None:
    document = export_document(session)
    build = dict(document["builds"][0], notes="corrected by test")
    result = import_document(session, {"builds": [build]}, actor="tester")
    assert [r.slug for r in result.updated] == [build["slug"]]
    event = session.scalars(
        select(AuditEvent).where(AuditEvent.slug == build["slug"]).order_by(AuditEvent.id.desc())
    ).first()
    assert event is not None
    assert event.actor == "tester" and event.action == "update"
    assert event.before is not None and event.after is not None
    assert event.before["notes"] != "corrected by test"
    assert event.after["notes"] == "corrected by test"


def test_duplicate_slugs_and_unknown_keys_are_refused(session: Session) -> None:
    result = import_document(
        session,
        {"accelerators": [_accelerator("twin"), _accelerator("twin")], "gpus": []},
        actor="test",
    )
    fields = {(e.kind, e.field) for e in result.errors}
    assert ("accelerator", "slug") in fields
    assert ("document", "gpus") in fields


def test_a_price_without_its_source_is_refused(session: Session) -> None:
    result = import_document(
        session, {"accelerators": [_accelerator("cheap", price_usd=100)]}, actor="test"
    )
    assert any("price_source_url" in e.message for e in result.errors)


def test_several_nodes_without_a_network_are_refused(session: Session) -> None:
    result = import_document(
        session,
        {"accelerators": [_accelerator("n-card")], "builds": [_build("n", "n-card", nodes=2)]},
        actor="test",
    )
    assert any(e.slug == "n" and "inter_node_link" in e.message for e in result.errors)
