"""What an import would change, field by field, for people to review before applying it."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from app.services.catalog import ImportResult
from app.services.records import KIND_BY_NAME, KINDS, get_record, record_document, strip_read_only


@dataclass(frozen=True)
class FieldChange:
    """One field an import changes (dotted path; values as JSON would show them)."""

    field: str
    before: Any
    after: Any


@dataclass(frozen=True)
class RecordChange:
    """What an import does to one record: create it, or change these fields."""

    kind: str
    slug: str
    action: str
    name: str
    changes: list[FieldChange]


def describe_import(
    session: Session, document: Any, result: ImportResult
) -> list[RecordChange]:
    """Field by field, what a (dry-run) import result would change, for people to review."""
    incoming: dict[tuple[str, str], dict[str, Any]] = {}
    if isinstance(document, Mapping):
        for kind in KINDS:
            raws = document.get(kind.key)
            for raw in raws if isinstance(raws, list) else []:
                try:
                    record = kind.schema.model_validate(strip_read_only(raw))
                except (ValidationError, TypeError, AttributeError):
                    continue
                incoming[(kind.name, record.slug)] = record.model_dump(mode="json")  # type: ignore[attr-defined]
    described = []
    for ref in result.created:
        after = incoming.get((ref.kind, ref.slug), {})
        described.append(RecordChange(ref.kind, ref.slug, "create", str(after.get("name", "")),
                                      []))
    for ref in result.updated:
        after = incoming.get((ref.kind, ref.slug), {})
        stored = get_record(session, KIND_BY_NAME[ref.kind], ref.slug)
        before = record_document(stored) if stored is not None else {}
        if after.get("tier") is None:
            before.pop("tier", None)
            after = {k: v for k, v in after.items() if k != "tier"}
        old, new = _flatten(before), _flatten(after)
        changes = [
            FieldChange(key, old.get(key), new.get(key))
            for key in sorted(set(old) | set(new))
            if old.get(key) != new.get(key)
        ]
        described.append(RecordChange(ref.kind, ref.slug, "update", str(after.get("name", "")),
                                      changes))
    return described


def _flatten(document: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in document.items():
        if isinstance(value, Mapping) and value:
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat
