"""The two forms of a stored build's cards and RAM, kept in step by admin writes.

A stored build carries its cards as accelerator x accelerators_per_node and as accelerator
groups, and its RAM as host_memory_gb and host.ram_gb (issue 14 grew the second forms without
dropping the first). An admin patch or form edit changes one form; these functions let the
other follow instead of contradicting it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel


def let_the_other_form_follow(document: dict[str, Any], patch: Mapping[str, Any]) -> None:
    """A stored build carries its cards and RAM in both forms (accelerator x
    accelerators_per_node and accelerators; host_memory_gb and host.ram_gb). A patch that gives
    one form drops (or, for a single group, updates) the stored copy of the other, instead of
    the stale copy contradicting the patch. A count or card alone is ambiguous on a mixed build
    (which group?), so there the stored groups stay and the record is refused as before."""
    if "accelerators" in patch:
        for key in ("accelerator", "accelerators_per_node"):
            if key not in patch:
                document.pop(key, None)
    elif "accelerator" in patch or "accelerators_per_node" in patch:
        groups = document.get("accelerators") or []
        if len(groups) == 1:
            # One group: the single-card form is that group; keep its PCIe fields.
            group = _as_dict(groups[0])
            for key, field in (("accelerator", "accelerator"), ("accelerators_per_node", "count")):
                if patch.get(key) is not None:
                    group[field] = patch[key]
            document["accelerators"] = [group]
    host_patch = patch.get("host")
    host = document.get("host")
    if isinstance(host_patch, Mapping) and "ram_gb" in host_patch:
        if "host_memory_gb" not in patch:
            document.pop("host_memory_gb", None)
    elif "host_memory_gb" in patch and host is not None:
        stored = _as_dict(host)
        stored.pop("ram_gb", None)
        document["host"] = stored


def follow_edited_card_form(stored: Mapping[str, Any], raw: dict[str, Any]) -> None:
    """A whole-record edit (the admin form shows both forms of the cards): the form the admin
    changed wins and the unchanged other one follows it, as in a merge patch."""
    single = ("accelerator", "accelerators_per_node")

    def groups(value: Any) -> Any:
        if not isinstance(value, list):
            return value
        return [
            {k: v for k, v in _as_dict(g).items() if v is not None}
            if isinstance(g, Mapping | BaseModel) else g
            for g in value
        ]

    if "accelerators" not in raw:
        return  # the groups' input left empty: the single-card fields alone describe the cards
    groups_changed = groups(raw["accelerators"]) != groups(stored.get("accelerators"))
    single_changed = any(raw.get(k) != stored.get(k) for k in single)
    if groups_changed and not single_changed:
        for key in single:
            raw.pop(key, None)
    elif single_changed and not groups_changed:
        changed = {k: raw[k] for k in single if k in raw and raw[k] != stored.get(k)}
        document = {"accelerators": raw["accelerators"]}
        let_the_other_form_follow(document, changed)
        raw["accelerators"] = document["accelerators"]


def _as_dict(value: Any) -> dict[str, Any]:
    return value.model_dump() if isinstance(value, BaseModel) else dict(value)
