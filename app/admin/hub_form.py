"""The admin "new model" form's Hugging Face id: fetch the config.json, then create the model
as the from-config API does (counts not given are computed and marked as estimates)."""

from typing import Any

from sqlalchemy.orm import Session

from app.admin.forms import BoundForm
from app.config import Settings
from app.errors import DomainError, FieldError, InvalidInput
from app.services.admin_records import model_from_config
from app.services.hf_hub import fetch_config

# The form's fields that model_from_config takes besides the config (the rest it derives).
PASSED_FIELDS = ("slug", "name", "source_url", "as_of", "params_total", "params_active",
                 "max_context_tokens", "organization", "license", "notes")
HF_ID_FIELD = "hf_id"


def create_model_from_hub(
    session: Session, raw: dict[str, Any], *, hf_id: str, actor: str, settings: Settings
) -> str:
    """Create the model the form describes from the Hub's config.json for `hf_id`; returns
    its slug. Raises a DomainError naming the field (hf_id for the fetch, else the record's)."""
    if raw.get("config"):
        message = "give either a Hugging Face id or a pasted config.json, not both"
        raise InvalidInput(f"{HF_ID_FIELD}: {message}", errors=[FieldError(HF_ID_FIELD, message)])
    missing = [f for f in ("slug", "name") if not raw.get(f)]
    if missing:
        raise InvalidInput(
            "; ".join(f"{f}: is required" for f in missing),
            errors=[FieldError(f, "is required") for f in missing],
        )
    fetched = fetch_config(hf_id, settings=settings, field=HF_ID_FIELD)
    values = {k: raw[k] for k in PASSED_FIELDS if raw.get(k) not in (None, "")}
    values.setdefault("source_url", fetched.page_url)
    result = model_from_config(session, actor=actor, config=fetched.config, **values)
    return result.slug


def file_hub_errors(bound: BoundForm, error: DomainError, *, hf_id: str) -> None:
    """Show the errors beside their inputs: the Hub's beside the id, the record's beside its;
    the id typed stays in its input."""
    bound.values[HF_ID_FIELD] = hf_id
    errors = error.errors or [FieldError("(record)", error.detail)]
    for e in errors:
        if e.field == HF_ID_FIELD:
            bound.errors.setdefault(HF_ID_FIELD, []).append(e.message)
    bound.add_errors([e for e in errors if e.field != HF_ID_FIELD])
