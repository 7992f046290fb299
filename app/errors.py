"""Domain errors carrying their HTTP status; rendered as problem+json under /api, HTML elsewhere."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any


@dataclass(frozen=True)
class FieldError:
    """One invalid field: where it is (a dotted path) and why it is refused."""

    field: str
    message: str


# Pydantic prefixes the text of a ValueError/AssertionError raised in a validator; people need
# only the reason ("give 2 to 6 builds, got 1").
_PYDANTIC_PREFIXES = ("Value error, ", "Assertion failed, ")


def human_message(error: Mapping[str, Any]) -> str:
    """One Pydantic error's reason in words a person reads: no "Value error, " prefix, "is
    required" for a missing field, and the refused value echoed when it is short."""
    message = str(error.get("msg") or "invalid")
    for prefix in _PYDANTIC_PREFIXES:
        if message.startswith(prefix):
            return message[len(prefix) :]
    kind = str(error.get("type") or "")
    if kind == "missing":
        return "is required"
    value = error.get("input")
    if kind != "value_error" and isinstance(value, str | int | float) and not isinstance(
        value, bool
    ):
        text = repr(value) if isinstance(value, str) else str(value)
        if 0 < len(text) <= 42:
            return f"{message[:1].lower()}{message[1:]}, got {text}"
    return f"{message[:1].lower()}{message[1:]}"


def field_errors(
    errors: Iterable[Mapping[str, Any]], *, fallback: str = "(request)", from_request: bool = False
) -> list[FieldError]:
    """Pydantic/FastAPI validation errors (`exc.errors()`) as field errors: the dotted field
    path and a human reason. `from_request` drops FastAPI's leading "query"/"body" when a field
    path follows it. The one conversion the API, the pages and the records service use."""
    out = []
    for error in errors:
        loc = [str(part) for part in error.get("loc", ())]
        if from_request and len(loc) > 1:
            loc = loc[1:]
        out.append(FieldError(".".join(loc) or fallback, human_message(error)))
    return out


def summary(errors: Iterable[FieldError], *, limit: int = 5) -> str:
    """"field: reason; field: reason" for a problem's `detail` (at most `limit` of them)."""
    return "; ".join(f"{e.field}: {e.message}" for e in list(errors)[:limit])


class DomainError(Exception):
    """An error a user or client caused or can act on; never a stack trace."""

    status_code = 400
    title = "Bad request"

    def __init__(
        self,
        detail: str,
        *,
        errors: list[FieldError] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []
        self.headers = headers or {}

    def problem(self, instance: str | None = None) -> dict[str, Any]:
        """RFC 9457 problem details."""
        body: dict[str, Any] = {
            "type": "about:blank",
            "title": self.title,
            "status": self.status_code,
            "detail": self.detail,
        }
        if instance:
            body["instance"] = instance
        if self.errors:
            body["errors"] = [{"field": e.field, "message": e.message} for e in self.errors]
        return body


def error_for_status(
    status_code: int, detail: str, *, headers: dict[str, str] | None = None
) -> DomainError:
    """A DomainError for an HTTP status raised by the framework (404, 405, 400 …)."""
    error = DomainError(detail, headers=headers)
    error.status_code = status_code
    try:
        error.title = HTTPStatus(status_code).phrase
    except ValueError:
        error.title = "Error"
    return error


class NotFound(DomainError):
    status_code = 404
    title = "Not found"


class Conflict(DomainError):
    status_code = 409
    title = "Conflict"


class PreconditionFailed(DomainError):
    status_code = 412
    title = "Precondition failed"


class InvalidInput(DomainError):
    status_code = 422
    title = "Invalid input"


class PreconditionRequired(DomainError):
    status_code = 428
    title = "Precondition required"


class RequestTimeout(DomainError):
    status_code = 408
    title = "Request timeout"


class ContentTooLarge(DomainError):
    status_code = 413
    title = "Content too large"


class Unauthorized(DomainError):
    status_code = 401
    title = "Unauthorized"


class Forbidden(DomainError):
    status_code = 403
    title = "Forbidden"


class TooManyRequests(DomainError):
    status_code = 429
    title = "Too many requests"


class ServiceUnavailable(DomainError):
    status_code = 503
    title = "Service unavailable"


@dataclass
class RecordError:
    """An invalid record in a document: which record, which field, why."""

    kind: str
    slug: str | None
    index: int | None
    field: str
    message: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "slug": self.slug,
            "index": self.index,
            "field": self.field,
            "message": self.message,
        }
