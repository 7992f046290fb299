"""Shared field types: slugs, bounded text without NUL bytes, source URLs, pages."""

import marshal
import math
from datetime import date
from typing import Annotated, Any, Generic, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
)
from pydantic_core import PydanticCustomError

from app.models._mixins import (
    NAME_LENGTH,
    NOTES_LENGTH,
    SHORT_TEXT_LENGTH,
    SLUG_LENGTH,
    URL_LENGTH,
)


def text_problem(value: str) -> str | None:
    """Why a string cannot be stored, or None: PostgreSQL text holds neither NUL nor a lone
    surrogate (JSON's "\\ud800" parses to one, and no UTF-8 encoder or database takes it)."""
    if "\x00" in value:
        return "must not contain NUL characters"
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "must not contain unpaired surrogate characters"
    return None


def storable_text(value: str | None) -> str | None:
    """The value, or ValueError (a 422 naming the field) when no database could store it: so
    the database, and the JSON answer, never see it."""
    problem = None if value is None else text_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _http_url(value: str) -> str:
    if not value.startswith(("https://", "http://")):
        raise ValueError("must be an http(s) URL")
    return value


MAX_CONFIG_NUMBER = 1e12
MAX_CONFIG_STRING = SHORT_TEXT_LENGTH
MAX_CONFIG_DEPTH = 32


def _config_problem(value: Any, path: str, depth: int = 0) -> str | None:
    """The first thing in a config.json no database or engine should take, as "path: reason"."""
    where = path or "(config)"
    if depth > MAX_CONFIG_DEPTH:
        return f"{where}: nested too deeply"
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        # Sizes and counts: beyond 1e12 is a typo or an attack, and overflows the arithmetic.
        # Integers are compared as integers: past ~1e308 they do not convert to float at all.
        in_range = abs(value) <= MAX_CONFIG_NUMBER
        if in_range and (isinstance(value, int) or math.isfinite(value)):
            return None
        return f"{where}: must be a finite number of magnitude at most 1e12"
    if isinstance(value, str):
        problem = text_problem(value)
        if problem is not None:
            return f"{where}: {problem}"
        if len(value) > MAX_CONFIG_STRING:
            return f"{where}: longer than {MAX_CONFIG_STRING} characters"
        return None
    items: Any = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        # Most keys are plain ASCII: checked inline, text_problem only looks at the others.
        if key.__class__ is not str or not key.isascii() or "\x00" in key:
            key_problem = text_problem(key) if isinstance(key, str) else None
            if key_problem is not None:
                return f"{where}: keys {key_problem}"
        # Most of a config is plain scalars: accepted here, without a call or a path per value
        # (a batch checks 100 configs); anything else takes the full check below.
        kind = item.__class__
        if kind is int or kind is float:
            if -MAX_CONFIG_NUMBER <= item <= MAX_CONFIG_NUMBER:  # NaN and infinities fail it
                continue
        elif kind is str:
            if len(item) <= MAX_CONFIG_STRING and "\x00" not in item and item.isascii():
                continue
        elif item is None or kind is bool:
            continue
        found = _config_problem(item, f"{path}.{key}" if path else str(key), depth + 1)
        if found is not None:
            return found
    return None


# Configs that passed the check, by their marshal bytes (bounded, cleared when full): a batch
# pastes one config in up to 100 entries, and the walk (~27K instructions) costs three times
# the bytes (~8.5K). Equal bytes are equal values, JSON types included (marshal decodes back);
# bytes that differ for equal values (another key order) only miss.
_PASSED_CONFIGS: set[bytes] = set()
_PASSED_CONFIGS_MAX = 64


def _check_config(config: dict[str, Any]) -> dict[str, Any]:
    try:
        key: bytes | None = marshal.dumps(config)
    except ValueError:  # a value marshal cannot write (only Python callers pass one): no memo
        key = None
    if key is not None and key in _PASSED_CONFIGS:
        return config
    problem = _config_problem(config, "")
    if problem is not None:
        raise PydanticCustomError("config", "{problem}", {"problem": problem})
    if key is not None:
        if len(_PASSED_CONFIGS) >= _PASSED_CONFIGS_MAX:
            _PASSED_CONFIGS.clear()
        _PASSED_CONFIGS.add(key)
    return config


HfConfig = Annotated[
    dict[str, Any],
    AfterValidator(_check_config),
    Field(description="a Hugging Face config.json object"),
]

Slug = Annotated[
    str,
    StringConstraints(pattern=rf"^[a-z0-9][a-z0-9-]{{0,{SLUG_LENGTH - 1}}}$"),
    Field(description="lowercase letters, digits and hyphens; the public identity"),
]
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=NAME_LENGTH),
    AfterValidator(storable_text),
]
ShortText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, max_length=SHORT_TEXT_LENGTH),
    AfterValidator(storable_text),
]
Notes = Annotated[str, StringConstraints(max_length=NOTES_LENGTH), AfterValidator(storable_text)]
SourceUrl = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=8, max_length=URL_LENGTH),
    AfterValidator(storable_text),
    AfterValidator(_http_url),
]


def _date_not_number(value: Any) -> Any:
    # Lax dates also take Unix timestamps; the contract says an ISO date string (or a YAML date).
    if isinstance(value, bool | int | float):
        raise PydanticCustomError("date_type", "Input should be an ISO date string (YYYY-MM-DD)")
    return value


AsOf = Annotated[
    date, BeforeValidator(_date_not_number), Field(ge=date(1990, 1, 1), le=date(2100, 1, 1))
]

# Numbers in request bodies are strict, as OpenAPI documents them: no booleans, no numeric strings,
# no 2.0 for an integer. Query parameters arrive as text and stay lax (app/schemas/listing.py).
# Bounds keep values inside what every database column can hold (and what is physical).
PositiveMeasure = Annotated[float, Field(strict=True, gt=0, le=1e9, allow_inf_nan=False)]
NonNegativeMeasure = Annotated[float, Field(strict=True, ge=0, le=1e12, allow_inf_nan=False)]
SmallCount = Annotated[int, Field(strict=True, ge=1, le=100_000)]


class StrictModel(BaseModel):
    """Input models refuse unknown fields so a typo is an error, not a silent no-op."""

    model_config = ConfigDict(extra="forbid")


T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    """One page of a list."""

    items: list[T]
    total: int
    page: int
    per_page: int
    next_url: str | None = None
