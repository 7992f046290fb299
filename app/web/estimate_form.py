"""The calculator's query turned into the POST /api/v1/estimate request: the described build,
the pasted config, and a model by its Hugging Face id."""

import json
from typing import Any

from app.config import Settings
from app.errors import FieldError, InvalidInput
from app.schemas.build import missing_ram_half
from app.services.hf_hub import fetch_config
from app.web.form_fields import (
    COST_FIELDS,
    CUSTOM_ACCELERATOR_FIELDS,
    CUSTOM_BUILD_FIELDS,
    GROUP_PARTS,
    GROUP_ROWS,
    HOST_FIELDS,
    WORKLOAD_FIELDS,
    group_prefix,
)

MAX_CONFIG_CHARS = 100_000
EXAMPLE_QUERY = "/estimate.json?build=2x-dgx-h200-cluster&model=deepseek-v3&precision=fp8"


def _set(target: dict[str, Any], path: str, value: Any) -> None:
    node = target
    *parents, leaf = path.split(".")
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[leaf] = value


def request_from_form(raw: dict[str, str]) -> tuple[dict[str, Any] | None, list[FieldError]]:
    """The estimate request a calculator query describes (None when it names no build or
    model yet), plus the form-level problems found before schema validation."""
    errors: list[FieldError] = []
    body: dict[str, Any] = {}
    build_source = raw.get("build_source", "catalog")
    model_source = raw.get("model_source", "catalog")
    if build_source == "custom":
        body["build"] = _described_build(raw)
    elif "build" in raw:
        body["build"] = raw["build"]
    if model_source == "config":
        text = raw.get("config", "")
        if text:
            if len(text) > MAX_CONFIG_CHARS:
                errors.append(FieldError("config", f"longer than {MAX_CONFIG_CHARS:,} characters"))
            else:
                try:
                    config = json.loads(text)
                except json.JSONDecodeError as exc:
                    errors.append(FieldError("config", f"not valid JSON ({exc.msg}, line "
                                                       f"{exc.lineno})"))
                except ValueError:  # e.g. numbers too long to convert
                    errors.append(FieldError("config", "not valid JSON"))
                except RecursionError:
                    errors.append(FieldError("config", "nested too deeply"))
                else:
                    if isinstance(config, dict):
                        body["model"] = {"name": raw.get("model_name") or "Pasted model",
                                         "config": config}
                    else:
                        errors.append(FieldError("config", "must be a JSON object"))
    elif "model" in raw:
        body["model"] = raw["model"]
    if build_source == "custom":
        errors.extend(_half_ram_pair(raw))
        errors.extend(_group_row_problems(raw))
    workload: dict[str, Any] = {f: raw[f] for f in WORKLOAD_FIELDS if f in raw}
    if "activation_recomputation" in workload:
        # "default" (or absent) leaves the mode's standard recipe; on/off choose explicitly.
        choice = workload.pop("activation_recomputation")
        if choice in ("true", "on", "1"):
            workload["activation_recomputation"] = True
        elif choice in ("false", "off", "0"):
            workload["activation_recomputation"] = False
    body["workload"] = workload
    costs = {f: raw[f] for f in COST_FIELDS if f in raw}
    if costs:
        body["costs"] = costs
    if "build" not in body and "model" not in body:
        return None, errors
    if "build" not in body:
        errors.append(FieldError("build", "choose a catalog build or describe one"))
    if "model" not in body and not any(e.field == "config" for e in errors):
        errors.append(FieldError("model", "choose a catalog model or paste a config.json"))
    return body, errors


def _half_ram_pair(raw: dict[str, str]) -> list[FieldError]:
    """The schema's RAM channels/speed rule, worded for the form field left empty (the schema
    can only name the host as a whole)."""
    def given(field: str) -> bool:
        return bool(raw.get(field, "").strip())

    missing = missing_ram_half(
        channels=given("h_channels"), speed=given("h_speed_mts"), bandwidth=given("h_bandwidth_gbs")
    )
    if missing == "ram_speed_mts":
        return [FieldError("h_speed_mts", "give the RAM speed too (bandwidth = channels × MT/s "
                                          "× 8 bytes), or the RAM bandwidth")]
    if missing == "ram_channels":
        return [FieldError("h_channels", "give the number of RAM channels too (bandwidth = "
                                         "channels × MT/s × 8 bytes), or the RAM bandwidth")]
    return []


def _group_row_problems(raw: dict[str, str]) -> list[FieldError]:
    """Card rows 2.. the request cannot take as given: a count or PCIe setting on a row with no
    card (it would be dropped silently), or a card below an empty row (request groups are
    numbered in order, so its values and errors would land on the empty row above)."""
    errors: list[FieldError] = []
    empty_row = None
    for row in range(2, GROUP_ROWS + 1):
        prefix = group_prefix(row)
        if raw.get(f"{prefix}accelerator"):
            if empty_row is not None:
                errors.append(FieldError(f"{prefix}accelerator",
                                         f"fill card kind {empty_row} first (card kinds are "
                                         "read in order)"))
        else:
            if empty_row is None:
                empty_row = row
            if any(raw.get(f"{prefix}{part}") for part in ("count", "pcie_gen", "pcie_lanes")):
                errors.append(FieldError(f"{prefix}accelerator",
                                         "choose the card, or clear this row's count and PCIe "
                                         "fields"))
    return errors


def _described_build(raw: dict[str, str]) -> dict[str, Any]:
    """The inline build the "describe a build" fields give: groups of cards and a host."""
    build: dict[str, Any] = {"name": raw.get("b_name", "Custom build")}
    for name, path in CUSTOM_BUILD_FIELDS.items():
        if name in raw:
            _set({"build": build}, path, raw[name])
    first: dict[str, Any] = {"count": raw.get("b_per_node", "1")}
    accelerator = raw.get("b_accelerator", "custom")
    if accelerator == "custom":
        described = {"name": "Custom accelerator"}
        for name, path in CUSTOM_ACCELERATOR_FIELDS.items():
            if name in raw:
                described[path.rsplit(".", 1)[1]] = raw[name]
        first["accelerator"] = described
    else:
        first["accelerator"] = accelerator
    groups = [first]
    for row in range(2, GROUP_ROWS + 1):
        card = raw.get(f"g{row}_accelerator")
        if card:
            groups.append({"accelerator": card, "count": raw.get(f"g{row}_count", "1")})
    for row, group in enumerate(groups, start=1):
        prefix = group_prefix(row)
        for part in ("pcie_gen", "pcie_lanes"):
            text = raw.get(f"{prefix}{part}")
            if text is not None:
                # Lanes are a choice of whole numbers; the form sends text.
                group[GROUP_PARTS[part]] = int(text) if text.isdigit() else text
    build["accelerators"] = groups
    host = {path.rsplit(".", 1)[1]: raw[name] for name, path in HOST_FIELDS.items() if name in raw}
    if host:
        build["host"] = host
    return build


# ---- hf_id: a model by its Hugging Face id (issue 15, item 11) -------------------------------
# Kept apart from the form parsing above: the id is turned into the pasted-config fields, so
# everything after it treats a fetched config exactly like a pasted one.


def with_hub_config(raw: dict[str, str], settings: Settings) -> dict[str, str]:
    """The query with `hf_id`'s config.json from the Hub in place of a pasted config, when the
    model comes from a config (or nothing else names one); raises a DomainError on `hf_id`."""
    hf_id = raw.get("hf_id", "").strip()
    source = raw.get("model_source")
    if not hf_id or not (source == "config" or (source is None and "model" not in raw)):
        return raw
    if raw.get("config", "").strip():
        message = "give either a Hugging Face id or a pasted config.json, not both"
        raise InvalidInput(f"hf_id: {message}", errors=[FieldError("hf_id", message)])
    fetched = fetch_config(hf_id, settings=settings, field="hf_id")
    return {
        **raw,
        "model_source": "config",
        "config": json.dumps(fetched.config),
        "model_name": raw.get("model_name") or fetched.hf_id,
    }
