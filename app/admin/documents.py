"""Reading import documents: a bounded request body, then JSON or YAML (no YAML aliases)."""

import json
from typing import Any

import yaml
from fastapi import Request

from app.errors import ContentTooLarge, DomainError, FieldError, InvalidInput

JSON_TYPES = ("application/json",)
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")


class UnsupportedMediaType(DomainError):
    status_code = 415
    title = "Unsupported media type"


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases: a few anchors can expand into billions of nodes."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not accepted in imports", event.start_mark
            )
        return super().compose_node(parent, index)


def too_large(limit: int) -> ContentTooLarge:
    return ContentTooLarge(f"the document exceeds the {limit:,}-byte import limit")


async def read_bounded_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 as soon as it passes `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def parse_document(body: bytes | str, media_type: str | None) -> Any:
    """Parse JSON (`application/json`) or YAML (`application/yaml` and kin; None: sniff)."""
    media = (media_type or "").split(";")[0].strip().lower()
    is_json = media in JSON_TYPES or media.endswith("+json")
    if media and not is_json and media not in YAML_TYPES:
        raise UnsupportedMediaType(
            f"send the document as application/json or application/yaml, not {media}"
        )
    try:
        text = body.decode("utf-8") if isinstance(body, bytes) else body
        if is_json:
            return json.loads(text)
        return yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
    except UnicodeDecodeError:
        problem = "is not UTF-8 text"
    except json.JSONDecodeError as exc:
        problem = f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    except yaml.YAMLError as exc:
        problem = f"is not valid YAML: {_yaml_reason(exc)}"
    except RecursionError:
        problem = "nests too deeply"
    raise InvalidInput(f"the document {problem}", errors=[FieldError("(document)", problem)])


def _yaml_reason(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        where = f" at line {exc.problem_mark.line + 1}" if exc.problem_mark else ""
        return f"{exc.problem or exc.context}{where}"
    return str(exc).splitlines()[0]
