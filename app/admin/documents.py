"""Reading import documents: a bounded request body, then JSON or YAML (no YAML aliases)."""

import json
import sys
from typing import Any

import yaml
from fastapi import Request

from app.errors import ContentTooLarge, DomainError, FieldError, InvalidInput

JSON_TYPES = ("application/json",)
# An import answer lists at most this many problems, then counts the rest (`error_count`): a
# 1 MB document of bad records would otherwise answer tens of megabytes.
MAX_LISTED_ERRORS = 100
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")


class UnsupportedMediaType(DomainError):
    status_code = 415
    title = "Unsupported media type"


# libyaml's C loader when PyYAML was built with it (the wheels are): ~20x faster than the
# pure-Python one, which needs minutes for a document at the import limit.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
ALIASES_REFUSED = "YAML aliases (*name) are not accepted in imports"


def _refuse_aliases(root: yaml.Node) -> None:
    """Raise on the first node reached twice: that is what an alias composes to.

    A few anchors can expand into billions of nodes (the "billion laughs"); the composed graph
    stays small, so walking it once, each node at most once, is cheap and bounded.
    """
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise yaml.composer.ComposerError(None, None, ALIASES_REFUSED, node.start_mark)
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.append(key)
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def load_yaml(text: str) -> Any:
    """One YAML document with safe tags only and no aliases (ComposerError on an alias)."""
    loader = _SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _refuse_aliases(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


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
        return load_yaml(text)
    except UnicodeDecodeError:
        problem = "is not UTF-8 text"
    except json.JSONDecodeError as exc:
        problem = f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    except yaml.YAMLError as exc:
        problem = f"is not valid YAML: {_yaml_reason(exc)}"
    except RecursionError:
        problem = "nests too deeply"
    except ValueError:  # after its subclasses above: an integer past Python's digit limit
        problem = f"holds a number longer than {sys.get_int_max_str_digits():,} digits"
    raise InvalidInput(f"the document {problem}", errors=[FieldError("(document)", problem)])


def _yaml_reason(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        where = f" at line {exc.problem_mark.line + 1}" if exc.problem_mark else ""
        return f"{exc.problem or exc.context}{where}"
    return str(exc).splitlines()[0]
