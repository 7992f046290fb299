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

from pydantic import BaseModel, ValidationError
from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.orm.exc import StaleDataError

from app.catalog_version import bump_catalog_version
from app.engine import EngineInputError, model_spec_from_hf_config
from app.errors import (
    Conflict,
    FieldError,
    InvalidInput,
    NotFound,
    PreconditionFailed,
    PreconditionRequired,
)
from app.models import AuditEvent, Build, BuildAcceleratorGroup
from app.services.audit import record_change
from app.services.catalog import ImportResult
from app.services.records import (
    ACCELERATOR,
    BUILD,
    KIND_BY_NAME,
    KINDS,
    MODEL,
    Kind,
    Record,
    columns_for,
    get_record,
    record_document,
    strip_read_only,
    validate_record,
)

# ---- preconditions (If-Match / If-None-Match) ------------------------------------------------


@dataclass(frozen=True)
class Preconditions:
    """What the client said it expects: If-Match versions (None = header absent) and/or
    If-None-Match: * (create only)."""

    if_match: frozenset[str] | None = None
    if_none_match_any: bool = False

    def check_existing(self, record: Record) -> None:
        """Raise unless the client may change this existing record."""
        if self.if_none_match_any:
            raise PreconditionFailed(
                f"'{record.slug}' already exists (If-None-Match: * asks to create only)"
            )
        if self.if_match is None:
            raise PreconditionRequired(
                f"changing an existing record needs If-Match: the ETag from GET "
                f"(currently \"{record.version}\"), so that no one else's edit is overwritten"
            )
        if "*" in self.if_match:
            # RFC 9110 lets `*` match any current version, which is no protection at all against
            # a lost update; this API requires the conditional request to name the version.
            raise PreconditionRequired(
                f"If-Match: * matches any version, so it cannot stop you overwriting someone "
                f"else's edit; send the ETag from GET (currently \"{record.version}\")"
            )
        if str(record.version) not in self.if_match:
            raise PreconditionFailed(
                f"'{record.slug}' is at version {record.version}, not the one in If-Match; "
                "someone changed it since you read it: GET it again and reapply your change"
            )

    def check_absent(self, slug: str) -> None:
        """Raise if the client expected an existing record (If-Match on a missing one)."""
        if self.if_match is not None:
            raise PreconditionFailed(f"'{slug}' does not exist, so If-Match cannot match")


def parse_preconditions(if_match: str | None, if_none_match: str | None) -> Preconditions:
    """Parse the two headers; weak or malformed entity tags simply never match."""
    tags: frozenset[str] | None = None
    if if_match is not None:
        parsed = set()
        for part in if_match.split(","):
            part = part.strip()
            if part == "*":
                parsed.add("*")
            elif len(part) >= 2 and part[0] == part[-1] == '"':
                parsed.add(part[1:-1])  # W/"3" is weak: If-Match uses strong comparison only
        tags = frozenset(parsed)
    none_match_any = if_none_match is not None and if_none_match.strip() == "*"
    return Preconditions(if_match=tags, if_none_match_any=none_match_any)


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
    _finish(session, slug, conflict=f"'{slug}' is still referenced; nothing was deleted")
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


def _document_after(kind: Kind, record: BaseModel, values: Mapping[str, Any]) -> dict[str, Any]:
    after = record.model_dump(mode="json")
    if kind is BUILD:
        after["tier"] = values["tier"]  # derived; the stored document always carries it
    return after


def _create(
    session: Session, kind: Kind, raw: Any, *, actor: str, action: str,
    race_is_precondition: bool,
) -> WriteResult:
    record = _validated(session, kind, raw)
    slug: str = record.slug  # type: ignore[attr-defined]
    values = columns_for(session, record)
    session.add(kind.orm(**values))
    after = _document_after(kind, record, values)
    record_change(session, actor=actor, action=action, kind=kind.name, slug=slug,
                  before=None, after=after)
    message = f"{kind.name} '{slug}' was created by someone else meanwhile"
    try:
        _finish(session, slug, conflict=message)
    except Conflict:
        if race_is_precondition:
            raise PreconditionFailed(message) from None
        raise
    return _result(session, kind, slug, created=True)


def _replace(
    session: Session, kind: Kind, existing: Record, raw: Any, *, actor: str
) -> WriteResult:
    record = _validated(session, kind, raw)
    values = columns_for(session, record)
    before = record_document(existing)
    after = _document_after(kind, record, values)
    if before == after:
        # The version this request read and compared, taken before the rollback: reading the
        # attribute afterwards would reload it and could answer a concurrent writer's version
        # with this (older) body, an ETag that lets the client's next write revert theirs.
        version, slug = existing.version, existing.slug
        session.rollback()
        return WriteResult(kind, slug, before, version, changed=False)
    for column, value in values.items():
        setattr(existing, column, value)
    record_change(session, actor=actor, action="update", kind=kind.name, slug=existing.slug,
                  before=before, after=after)
    _finish(session, existing.slug, conflict=f"'{existing.slug}' conflicts with another record")
    return _result(session, kind, existing.slug)


def _finish(session: Session, slug: str, *, conflict: str) -> None:
    """Raise the catalog version and commit; a stale version or a lost race changes nothing."""
    try:
        # Raising the version flushes the pending INSERT/UPDATE first, so a stale version or
        # a duplicate slug can surface here as well as at commit.
        bump_catalog_version(session)
        session.commit()
    except StaleDataError:
        session.rollback()
        raise _stale(slug) from None
    except IntegrityError:
        session.rollback()
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


# ---- import preview --------------------------------------------------------------------------


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
