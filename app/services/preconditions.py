"""Conditional writes: what If-Match / If-None-Match ask of a record's version (its ETag)."""

from dataclasses import dataclass

from app.errors import PreconditionFailed, PreconditionRequired
from app.services.records import Record


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
