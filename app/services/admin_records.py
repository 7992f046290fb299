"""Single-record admin writes: create-or-replace, merge-patch, delete, restore from the audit log.

Every write checks the caller's precondition against the record's version (its ETag), validates
the whole record through `validate_record`, records an audit event, raises the catalog version and
commits once. The version column makes the UPDATE/DELETE itself conditional, so two concurrent
edits of one version can never both succeed, whatever the preconditions said.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.engine import EngineInputError, model_spec_from_hf_config
from app.errors import Conflict, FieldError, InvalidInput, NotFound, PreconditionFailed
from app.models import AuditEvent, Build, BuildAcceleratorGroup
from app.services.audit import record_change
from app.services.build_card_forms import let_the_other_form_follow
from app.services.preconditions import Preconditions
from app.services.record_validation import validate_record
from app.services.record_writes import LostRace, StagedWrite, commit_catalog_change, stage_write
from app.services.records import (
    ACCELERATOR,
    BUILD,
    KIND_BY_NAME,
    MODEL,
    Kind,
    Record,
    get_record,
    record_document,
    strip_read_only,
)

# ---- results ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class WriteResult:
    """The record after a write (None after a delete) and what happened."""

    kind: Kind
    slug: str
    document: dict[str, Any] | None
    version: int | None
    created: bool = False
    changed: bool = True


def record_with_version(record: Record) -> dict[str, Any]:
    """A record in document shape plus its version (what admin GET answers)."""
    return {**record_document(record), "version": record.version}


def read_record(session: Session, kind: Kind, slug: str) -> Record:
    """One record or NotFound."""
    record = get_record(session, kind, slug)
    if record is None:
        raise NotFound(f"no {kind.name} '{slug}'")
    return record


# ---- writes ----------------------------------------------------------------------------------


def put_record(
    session: Session,
    kind: Kind,
    slug: str,
    raw: Any,
    *,
    actor: str,
    preconditions: Preconditions,
) -> WriteResult:
    """Create or replace a whole record (the body of GET is accepted back unchanged)."""
    raw = _with_slug(raw, slug)
    existing = get_record(session, kind, slug)
    if existing is None:
        preconditions.check_absent(slug)
        return _create(session, kind, raw, actor=actor, action="create",
                       race_is_precondition=preconditions.if_none_match_any)
    preconditions.check_existing(existing)
    return _replace(session, kind, existing, raw, actor=actor)


def patch_record(
    session: Session,
    kind: Kind,
    slug: str,
    patch: Any,
    *,
    actor: str,
    preconditions: Preconditions,
) -> WriteResult:
    """Apply a JSON merge patch (RFC 7396) to a record and validate the result as a whole."""
    existing = read_record(session, kind, slug)
    preconditions.check_existing(existing)
    patch = _with_slug(patch, slug)
    document = record_document(existing)
    if kind is BUILD and "tier" not in patch:
        # The stored tier is derived; let it follow a patched shape instead of contradicting it.
        document.pop("tier", None)
    if kind is BUILD:
        let_the_other_form_follow(document, patch)
    merged = merge_patch(document, patch)
    return _replace(session, kind, existing, merged, actor=actor)


def delete_record(
    session: Session, kind: Kind, slug: str, *, actor: str, preconditions: Preconditions
) -> WriteResult:
    """Delete a record; its last state stays in the audit log, from which it can be restored."""
    existing = read_record(session, kind, slug)
    preconditions.check_existing(existing)
    if kind is ACCELERATOR:
        users = list(
            session.scalars(
                select(Build.slug)
                .join(BuildAcceleratorGroup)
                .where(BuildAcceleratorGroup.accelerator_id == existing.id)
                .distinct()
                .order_by(Build.slug)
            )
        )
        if users:
            raise Conflict(
                f"accelerator '{slug}' is used by {len(users)} build(s): {', '.join(users)}; "
                "delete them or move them to another accelerator first",
                errors=[FieldError("slug", f"used by builds: {', '.join(users)}")],
            )
    before = record_document(existing)
    # A Core DELETE with the version in its WHERE clause: same guarantee as the ORM's version
    # check, without loading the accelerator's builds collection (lazy="raise").
    result = session.execute(
        delete(kind.orm)
        .where(kind.orm.id == existing.id, kind.orm.version == existing.version)
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        session.rollback()
        raise _stale(slug)
    session.expunge(existing)
    record_change(session, actor=actor, action="delete", kind=kind.name, slug=slug,
                  before=before, after=None)
    _finish(session, None, conflict=f"'{slug}' is still referenced; nothing was deleted")
    return WriteResult(kind, slug, None, None)


def restore_from_audit(session: Session, event_id: int, *, actor: str) -> WriteResult:
    """Recreate a deleted record from its delete event in the audit log."""
    event = session.get(AuditEvent, event_id)
    if event is None:
        raise NotFound(f"no audit event {event_id}")
    kind = KIND_BY_NAME.get(event.kind)
    if event.action != "delete" or event.before is None or kind is None:
        raise Conflict(f"audit event {event_id} is a {event.action}, not a delete; "
                       "only deleted records can be restored")
    if get_record(session, kind, event.slug) is not None:
        raise Conflict(f"{kind.name} '{event.slug}' exists again; edit it instead of restoring")
    return _create(session, kind, event.before, actor=actor, action="restore",
                   race_is_precondition=False)


def model_from_config(
    session: Session,
    *,
    slug: str,
    name: str,
    config: Mapping[str, Any],
    source_url: str,
    actor: str,
    as_of: date | None = None,
    params_total: int | None = None,
    params_active: int | None = None,
    max_context_tokens: int | None = None,
    organization: str = "",
    license: str = "",
    notes: str = "",
) -> WriteResult:
    """Create a model profile from a Hugging Face config.json; counts not given are the
    engine's and are marked as estimates."""
    if get_record(session, MODEL, slug) is not None:
        raise Conflict(f"model '{slug}' exists; PUT /api/v1/admin/models/{slug} replaces it")
    try:
        spec = model_spec_from_hf_config(config, name=name)
    except EngineInputError as exc:
        raise InvalidInput(f"config.{exc.field}: {exc.reason}",
                           errors=[FieldError(f"config.{exc.field}", exc.reason)]) from None
    estimated = []
    if params_total is None:
        params_total = spec.params_total
        estimated.append("params_total")
    if params_active is None:
        params_active = spec.params_active if spec.is_moe else params_total
        estimated.append("params_active")
    raw = {
        "slug": slug,
        "name": name,
        "organization": organization,
        "license": license,
        "params_total": params_total,
        "params_active": params_active,
        "max_context_tokens": max_context_tokens or spec.max_position_embeddings,
        "config": dict(config),
        "estimated": estimated,
        "notes": notes,
        "source_url": source_url,
        "as_of": (as_of or datetime.now(UTC).date()).isoformat(),
    }
    return _create(session, MODEL, raw, actor=actor, action="create", race_is_precondition=False)


# ---- helpers ---------------------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON merge patch: objects merge recursively, null removes, the rest replaces."""
    if not isinstance(patch, Mapping):
        return patch
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _with_slug(raw: Any, slug: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise InvalidInput("the body must be a JSON object",
                           errors=[FieldError("(body)", "must be an object")])
    values = strip_read_only(raw)
    if "slug" in values and values["slug"] != slug:
        raise InvalidInput(
            "the slug in the body differs from the one in the URL",
            errors=[FieldError("slug", f"{values['slug']!r} does not match the URL's '{slug}'")],
        )
    values["slug"] = slug
    return values


def _validated(session: Session, kind: Kind, raw: Any) -> BaseModel:
    record, problems = validate_record(session, kind, raw)
    if record is None or problems:
        summary = "; ".join(f"{p.field}: {p.message}" for p in problems[:5])
        raise InvalidInput(summary or "invalid record", errors=problems)
    return record


def _create(
    session: Session, kind: Kind, raw: Any, *, actor: str, action: str,
    race_is_precondition: bool,
) -> WriteResult:
    record = _validated(session, kind, raw)
    write = stage_write(session, kind, record, existing=None, actor=actor, action=action)
    assert write is not None, "a create always writes"
    message = f"{kind.name} '{write.slug}' was created by someone else meanwhile"
    try:
        _finish(session, write, conflict=message)
    except Conflict:
        if race_is_precondition:
            raise PreconditionFailed(message) from None
        raise
    return _result(session, kind, write.slug, created=True)


def _replace(
    session: Session, kind: Kind, existing: Record, raw: Any, *, actor: str
) -> WriteResult:
    record = _validated(session, kind, raw)
    # The version this request read and compared, taken before any rollback: reading the
    # attribute afterwards would reload it and could answer a concurrent writer's version with
    # this (older) body, an ETag that lets the client's next write revert theirs.
    version, slug = existing.version, existing.slug
    write = stage_write(session, kind, record, existing=existing, actor=actor)
    if write is None:
        document = record_document(existing)
        session.rollback()
        return WriteResult(kind, slug, document, version, changed=False)
    _finish(session, write, conflict=f"'{slug}' conflicts with another record")
    return _result(session, kind, slug)


def _finish(session: Session, write: StagedWrite | None, *, conflict: str) -> None:
    """Raise the catalog version and commit; a stale version or a lost race changes nothing."""
    try:
        commit_catalog_change(session, [write] if write is not None else [])
    except LostRace as race:
        if race.stale:
            raise _stale(race.records[0].slug) from None
        raise Conflict(conflict) from None
    except IntegrityError:
        raise Conflict(conflict) from None


def _stale(slug: str) -> PreconditionFailed:
    return PreconditionFailed(
        f"'{slug}' was changed or deleted by someone else while this request ran; "
        "GET it again and reapply your change"
    )


def _result(session: Session, kind: Kind, slug: str, *, created: bool = False) -> WriteResult:
    # Re-read so derived columns and relationships reflect what was committed.
    session.expunge_all()
    fresh = read_record(session, kind, slug)
    return WriteResult(kind, slug, record_document(fresh), fresh.version, created=created)
