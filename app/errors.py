"""Domain errors carrying their HTTP status; rendered as problem+json under /api, HTML elsewhere."""

from dataclasses import dataclass
from http import HTTPStatus
from typing import Any


@dataclass(frozen=True)
class FieldError:
    """One invalid field: where it is (a dotted path) and why it is refused."""

    field: str
    message: str


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
