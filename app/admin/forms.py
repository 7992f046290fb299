"""Edit forms generated from the record schemas, so a new schema field gets its input for free.

Scalars become inputs (select for enums), nested links become dotted inputs, lists a comma-separated
input, the model's config.json a JSON textarea. A submitted form turns back into a raw record that
goes through the same `validate_record` as the API, and each field error lands next to its input.
"""

import json
import re
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from app.errors import FieldError
from app.services.records import Kind

# Derived or identity fields that the form does not edit (host.ram_gb is host_memory_gb's twin).
SKIPPED = {"tier", "host.ram_gb"}
TEXTAREAS = {"notes"}
INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True)
class FormField:
    """One input: its dotted name, widget, and what the schema says about it."""

    name: str
    label: str
    widget: str  # text | number | integer | date | url | select | textarea | list | json
    required: bool
    choices: tuple[str, ...] = ()
    help: str = ""

    @property
    def input_id(self) -> str:
        return "f-" + self.name.replace(".", "-").replace("_", "-")


@dataclass
class BoundForm:
    """Fields with the values to show and the errors to show next to them."""

    fields: list[FormField]
    values: dict[str, str]
    errors: dict[str, list[str]] = field(default_factory=dict)
    general_errors: list[FieldError] = field(default_factory=list)

    def add_errors(self, errors: list[FieldError]) -> None:
        """File each error under the input it concerns, or with the form's general errors."""
        names = sorted((f.name for f in self.fields), key=len, reverse=True)
        for error in errors:
            target = next(
                (n for n in names if error.field == n or error.field.startswith(n + ".")), None
            )
            if target is None:  # a whole group, e.g. "intra_node_link" missing: its first input
                target = next((f.name for f in self.fields
                               if f.name.startswith(error.field + ".")), None)
            if target is None:
                self.general_errors.append(error)
            else:
                detail = error.message
                if error.field.startswith(target + "."):  # e.g. config.num_hidden_layers
                    detail = f"{error.field[len(target) + 1:]}: {detail}"
                elif error.field != target:
                    detail = f"{error.field}: {detail}"
                self.errors.setdefault(target, []).append(detail)


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """The bare type behind Optional[...] / Annotated[...], and whether None is allowed."""
    optional = False
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        optional = len(args) < len(get_args(annotation))
        annotation = args[0] if len(args) == 1 else annotation
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation, optional


def form_fields(
    schema: type[BaseModel], *, prefix: str = "", with_slug: bool = True
) -> list[FormField]:
    """The inputs for a schema (nested models flattened to dotted names)."""
    fields: list[FormField] = []
    for name, info in schema.model_fields.items():
        dotted = f"{prefix}{name}"
        if dotted in SKIPPED or (name == "slug" and not with_slug):
            continue
        annotation, _ = _unwrap(info.annotation)
        required = info.is_required()
        label = dotted.replace(".", " ").replace("_", " ")
        help_text = info.description or ""
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            fields.extend(form_fields(annotation, prefix=dotted + "."))
            continue
        widget = "text"
        choices: tuple[str, ...] = ()
        if get_origin(annotation) is Literal:
            widget, choices = "select", tuple(str(a) for a in get_args(annotation))
        elif annotation is bool:
            widget = "select"
            choices = ("true", "false")
        elif annotation is int:
            widget = "integer"
        elif annotation is float:
            widget = "number"
        elif annotation is date:
            widget = "date"
        elif get_origin(annotation) is list and any(
            isinstance(arg, type) and issubclass(arg, BaseModel) for arg in get_args(annotation)
        ):
            widget = "json"  # a list of records (a build's accelerator groups)
            help_text = f"{help_text} (JSON list of objects)".strip()
        elif get_origin(annotation) is list:
            widget = "list"
            help_text = help_text or "comma-separated"
        elif get_origin(annotation) is dict or annotation is dict:
            widget = "json"
        elif name in TEXTAREAS:
            widget = "textarea"
        elif name.endswith("url"):
            widget = "url"
        fields.append(FormField(dotted, label, widget, required, choices, help_text))
    if not prefix:
        # The schemas inherit the price fields first; on a form they belong after the specs.
        price = [f for f in fields if f.name.startswith("price_")]
        rest = [f for f in fields if not f.name.startswith("price_")]
        at = next((i for i, f in enumerate(rest) if f.name == "estimated"), len(rest))
        fields = rest[:at] + price + rest[at:]
    return fields


def kind_fields(kind: Kind, *, with_slug: bool) -> list[FormField]:
    """The inputs for a kind's records."""
    return form_fields(kind.schema, with_slug=with_slug)


def _lookup(document: Mapping[str, Any], dotted: str) -> Any:
    value: Any = document
    for part in dotted.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def display_values(fields: list[FormField], document: Mapping[str, Any]) -> dict[str, str]:
    """A record's values as the strings its inputs show."""
    values: dict[str, str] = {}
    for f in fields:
        value = _lookup(document, f.name)
        if value is None:
            values[f.name] = ""
        elif f.widget == "list":
            values[f.name] = ", ".join(str(v) for v in value)
        elif f.widget == "json":
            values[f.name] = json.dumps(value, indent=2, ensure_ascii=False)
        elif isinstance(value, bool):
            values[f.name] = "true" if value else "false"
        elif isinstance(value, float) and value.is_integer():
            values[f.name] = str(int(value))
        else:
            values[f.name] = str(value)
    return values


def record_from_form(
    fields: list[FormField], form: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, str], list[FieldError]]:
    """The raw record a form describes, the submitted strings, and input errors (bad JSON).

    Empty inputs are left out, so optional fields fall back to their defaults and required ones
    are reported missing by the schema, by name.
    """
    raw: dict[str, Any] = {}
    submitted: dict[str, str] = {}
    errors: list[FieldError] = []
    for f in fields:
        value = form.get(f.name)
        text = value if isinstance(value, str) else ""
        submitted[f.name] = text
        if f.widget not in ("textarea", "json"):
            text = text.strip()
        if text == "":
            continue
        parsed: Any = text
        if f.widget == "list":
            parsed = [item.strip() for item in text.split(",") if item.strip()]
        elif f.widget == "json":
            try:
                parsed = json.loads(text)
            except (ValueError, RecursionError) as exc:
                errors.append(FieldError(f.name, f"not valid JSON: {exc}"))
                continue
        elif f.widget in ("integer", "number"):
            # The schemas take numbers strictly (as the JSON API does), so the form's text is
            # turned into one here; what is not a number is reported against its input.
            number = _number(text, integer=f.widget == "integer")
            if number is None:
                kind = "a whole number" if f.widget == "integer" else "a number"
                errors.append(FieldError(f.name, f"must be {kind}"))
                continue
            parsed = number
        _assign(raw, f.name, parsed)
    return raw, submitted, errors


def _number(text: str, *, integer: bool) -> int | float | None:
    """A form's number as int or float (a whole float such as "2.0" stays a float), or None."""
    if integer:
        return int(text) if INTEGER_TEXT.fullmatch(text) else None
    try:
        return int(text) if INTEGER_TEXT.fullmatch(text) else float(text)
    except ValueError:
        return None


def _assign(target: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[last] = value
