"""Import and export of whole catalog documents: seed files, `tierline seed`/`export`, admin import.

A document is `{"accelerators": [...], "builds": [...], "models": [...], "measurements": [...]}`
(any key may be left out). An import validates every record first; if any is invalid nothing is
written and every error is listed with its record and field. Otherwise it upserts by slug in one
transaction, records an audit event per change and raises the catalog version once. A dry run
takes the same path and rolls back at the end, so its answer is the real run's.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.catalog_version import current_catalog_version
from app.errors import RecordError
from app.schemas.accelerator import AcceleratorIn
from app.schemas.build import BuildIn
from app.schemas.model_profile import ModelIn
from app.services.record_validation import validate_record
from app.services.record_writes import (
    StagedWrite,
    commit_catalog_change,
    racing_writers,
    stage_write,
)
from app.services.records import (
    ACCELERATOR,
    BUILD,
    KIND_BY_KEY,
    KINDS,
    MODEL,
    Kind,
    all_records,
    record_document,
)


@dataclass(frozen=True)
class RecordRef:
    """A record named by kind and slug."""

    kind: str
    slug: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "slug": self.slug}


@dataclass
class ImportResult:
    """What an import did (or, in a dry run, would do)."""

    created: list[RecordRef] = field(default_factory=list)
    updated: list[RecordRef] = field(default_factory=list)
    unchanged: list[RecordRef] = field(default_factory=list)
    errors: list[RecordError] = field(default_factory=list)
    dry_run: bool = False
    catalog_version: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict[str, Any]:
        return {
            "created": [r.as_dict() for r in self.created],
            "updated": [r.as_dict() for r in self.updated],
            "unchanged": [r.as_dict() for r in self.unchanged],
            "errors": [e.as_dict() for e in self.errors],
        }


# libyaml's loader when PyYAML was built with it: the pure-Python one takes seconds per MB, and
# the measurements seed file is megabytes. Both are safe loaders (plain data only).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_document_file(path: Path) -> Any:
    """Parse a YAML or JSON document file (JSON is YAML)."""
    with path.open(encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_YAML_LOADER)


def load_seed_directory(directory: Path) -> dict[str, Any]:
    """Merge seed_data/{accelerators,builds,models,measurements}.yaml into one document."""
    document: dict[str, Any] = {}
    for kind in KINDS:
        path = directory / f"{kind.key}.yaml"
        if path.exists():
            document[kind.key] = load_document_file(path) or []
    return document


def import_document(
    session: Session, document: Any, *, actor: str, dry_run: bool = False
) -> ImportResult:
    """Validate and upsert a whole document, all or nothing; commits unless dry_run or invalid."""
    result = ImportResult(dry_run=dry_run)
    validated = _validate_document(session, document, result.errors)
    if result.errors:
        session.rollback()
        return result
    writes: list[StagedWrite] = []
    try:
        with racing_writers(session, writes):
            for kind, records in validated:
                stored = {r.slug: r for r in all_records(session, kind)}
                # One flush per kind lets the inserts go out in batches (a seed holds thousands
                # of measurements); the lookups columns_for makes need only the kinds before
                # this one.
                with session.no_autoflush:
                    for record in records:
                        slug: str = record.slug  # type: ignore[attr-defined]
                        write = stage_write(session, kind, record, existing=stored.get(slug),
                                            actor=actor)
                        ref = RecordRef(kind.name, slug)
                        if write is None:
                            result.unchanged.append(ref)
                        else:
                            writes.append(write)
                            created = write.read_version is None
                            (result.created if created else result.updated).append(ref)
                # Later kinds of this document refer to these records (builds to accelerators,
                # measurements to builds and models).
                session.flush()
        if writes:
            commit_catalog_change(session, writes, dry_run=dry_run)
        else:
            session.rollback()
    except IntegrityError as exc:
        session.rollback()
        result.created.clear()
        result.updated.clear()
        result.unchanged.clear()
        result.errors.append(
            RecordError("document", None, None, "(database)", _integrity_reason(exc))
        )
        return result
    result.catalog_version = current_catalog_version(session)
    return result


def _validate_document(
    session: Session, document: Any, errors: list[RecordError]
) -> list[tuple[Kind, list[BaseModel]]]:
    if not isinstance(document, Mapping):
        hint = (" (a list of records goes under a key: builds:, accelerators: or models:)"
                if isinstance(document, list) else "")
        errors.append(RecordError("document", None, None, "(document)", "must be an object with "
                                  f"accelerators, builds and/or models lists{hint}"))
        return []
    unknown = sorted(set(map(str, document)) - set(KIND_BY_KEY))
    for key in unknown:
        errors.append(
            RecordError(
                "document",
                None,
                None,
                key,
                f"unknown key; use {', '.join(k.key for k in KINDS)}",
            )
        )
    pending_accelerators: dict[str, AcceleratorIn] = {}
    pending_builds: dict[str, BuildIn] = {}
    pending_models: dict[str, ModelIn] = {}
    validated: list[tuple[Kind, list[BaseModel]]] = []
    for kind in KINDS:  # in dependency order: builds refer to accelerators, measurements to all
        raws = document.get(kind.key, [])
        if not isinstance(raws, list):
            # An empty mapping or a null is not an empty list: the documented shape says list.
            errors.append(
                RecordError(
                    "document", None, None, kind.key, "must be a list (or leave the key out)"
                )
            )
            continue
        seen: set[str] = set()
        records: list[BaseModel] = []
        for index, raw in enumerate(raws):
            slug = raw.get("slug") if isinstance(raw, Mapping) else None
            slug = slug if isinstance(slug, str) else None
            record, problems = validate_record(
                session,
                kind,
                raw,
                pending_accelerators=pending_accelerators,
                pending_builds=pending_builds,
                pending_models=pending_models,
            )
            for problem in problems:
                errors.append(RecordError(kind.name, slug, index, problem.field, problem.message))
            if record is None or problems:
                continue
            slug = record.slug  # type: ignore[attr-defined]
            if slug in seen:
                errors.append(
                    RecordError(kind.name, slug, index, "slug", "appears twice in the document")
                )
                continue
            seen.add(slug)
            if kind is ACCELERATOR:
                pending_accelerators[slug] = record  # type: ignore[assignment]
            elif kind is BUILD:
                pending_builds[slug] = record  # type: ignore[assignment]
            elif kind is MODEL:
                pending_models[slug] = record  # type: ignore[assignment]
            records.append(record)
        validated.append((kind, records))
    return validated


def _integrity_reason(exc: IntegrityError) -> str:
    # Name the violated constraint, never the SQL.
    text = str(exc.orig) if exc.orig is not None else ""
    for token in text.replace('"', " ").split():
        if token.startswith(("ck_", "uq_", "fk_", "ix_")):
            return f"violates constraint {token}"
    return "violates a database constraint"


def export_document(session: Session) -> dict[str, list[dict[str, Any]]]:
    """The whole catalog as one document, in seed-file shape, sorted by slug."""
    return {kind.key: [record_document(r) for r in all_records(session, kind)] for kind in KINDS}
