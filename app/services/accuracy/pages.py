"""What build, model and estimate pages show of the accuracy report: rows and notes."""

from collections.abc import Iterable
from typing import Any

from app.caching import Snapshot
from app.engine.prep import accelerator_class, resolve_runtime
from app.engine.runtime import device_class
from app.schemas.estimate import EstimateRequest
from app.services.accelerators import accelerator_rows
from app.services.build_rows import build_rows, find_build
from app.services.engine_runs import inline_build_spec, workload_spec
from app.services.measurements import MeasurementRow, measurement_rows

from .groups import FIT_METRIC, METRIC_LABELS, MIXED_CLASS, OFFLOAD_CLASS, SPEED_METRICS
from .report import accuracy_report


def _page_rows(snap: Snapshot, rows: Iterable[MeasurementRow]) -> list[dict[str, Any]]:
    report = accuracy_report(snap)
    by_slug = {r["slug"]: r for r in report["rows"]}
    skipped = {s["slug"]: s["reason"] for s in report["skipped"]}
    out = []
    for row in rows:
        item = row.list_item
        found = by_slug.get(row.slug)
        out.append(
            {
                "slug": row.slug,
                "label": f"{item.model} on {item.accelerator_name}",
                "model": item.model,
                "hardware": item.accelerator_name,
                "runtime": item.runtime,
                "precision": item.precision,
                "batch": item.batch or item.concurrency or 1,
                "metric_label": METRIC_LABELS[item.metric],
                "unit": item.unit,
                "measured": item.value,
                "predicted": found["predicted"] if found else None,
                "error": found["error"] if found else None,
                "agrees": found["agrees"] if found else None,
                "note": found["note"] if found else skipped.get(row.slug, ""),
                "source_url": item.source_url,
                "source_title": item.source_title,
                "as_of": item.as_of,
            }
        )
    return out


def measured_vs_predicted_for_build(snap: Snapshot, *, slug: str) -> list[dict[str, Any]]:
    """Measurements on this build, or on exactly its accelerators (same kind, same count), each
    with the engine's prediction for the same inputs and the error."""
    build = build_rows(snap).by_slug.get(slug)
    if build is None:
        return []
    count = build.spec.accelerator_count
    rows = [
        r
        for r in measurement_rows(snap)
        if r.list_item.build == slug
        or (
            r.list_item.build is None
            and r.list_item.accelerator == build.accelerator_slug
            and r.list_item.accelerator_count == count
        )
    ]
    return _page_rows(snap, rows)


def build_device_class(snap: Snapshot, *, slug: str) -> str | None:
    """The device class of a catalog build's accelerator (None for an unknown build)."""
    build = build_rows(snap).by_slug.get(slug)
    if build is None:
        return None
    acc = accelerator_rows(snap)[build.accelerator_slug].list_item
    return device_class(memory_kind=acc.memory_kind, vendor=acc.vendor, memory_type=acc.memory_type)


def accuracy_notes_for_build(snap: Snapshot, *, slug: str) -> list[str]:
    """What the measurements say of the estimates that apply to this build: one sentence per
    metric and runtime measured on its groups (its accelerator's device class, or mixed cards;
    CPU offload too where its host RAM is stated)."""
    kind = build_device_class(snap, slug=slug)
    if kind is None:
        return []
    spec = build_rows(snap).by_slug[slug].spec
    kinds = [MIXED_CLASS if spec.is_mixed else kind]
    if spec.host is not None and spec.host.ram_gb and all(
        g.accelerator.memory_kind != "unified" for g in spec.accelerator_groups
    ):
        kinds.append(OFFLOAD_CLASS)
    notes = []
    for summary in accuracy_report(snap)["groups"]:
        if summary["device_class"] not in kinds or summary["metric"] == FIT_METRIC:
            continue
        note = group_note(
            snap,
            metric=summary["metric"],
            runtime=summary["runtime"],
            device_class=summary["device_class"],
        )
        if note is not None:
            notes.append(note)
    return notes


def accuracy_notes_for_estimate(
    snap: Snapshot,
    request: EstimateRequest,
    *,
    runtime: str | None = None,
    offloaded: bool = False,
) -> list[str]:
    """What the measurements say of an estimate's figures: one sentence per metric measured
    for the runtime the answer ran (`runtime`, else the request's) on its device class, which
    is "CPU offload" for an answer with weights in host RAM and "mixed cards" for a build of
    several card kinds, the groups the accuracy report puts such rows in (groups.py)."""
    if isinstance(request.build, str):
        build = find_build(snap, request.build, field="build").spec
    else:
        build = inline_build_spec(snap, request.build)
    if offloaded:
        kind = OFFLOAD_CLASS
    elif build.is_mixed:
        kind = MIXED_CLASS
    else:
        kind = accelerator_class(build.accelerator)
    # The runtime the engine ran: an offloading answer may have switched to llama.cpp.
    runtime = runtime or resolve_runtime(build, workload_spec(request.workload))
    notes = []
    for metric in SPEED_METRICS:
        note = group_note(snap, metric=metric, runtime=runtime, device_class=kind)
        if note is not None:
            notes.append(note)
    return notes


def measured_vs_predicted_for_model(snap: Snapshot, *, slug: str) -> list[dict[str, Any]]:
    """Measurements of this model, each with the engine's prediction and the error."""
    return _page_rows(snap, [r for r in measurement_rows(snap) if r.list_item.model == slug])


def group_note(snap: Snapshot, *, metric: str, runtime: str, device_class: str) -> str | None:
    """ "decode tokens/s estimates for llama.cpp on Apple unified: median error 8 % over 14
    measurements", or None when no measurement is in that group."""
    for summary in accuracy_report(snap)["groups"]:
        if (summary["metric"], summary["runtime"], summary["device_class"]) != (
            metric,
            runtime,
            device_class,
        ):
            continue
        median = summary["engine"]["median_error"]
        if median is None:
            return None
        return (
            f"{METRIC_LABELS[metric]} estimates for {runtime} on {device_class}: median error "
            f"{median:.0%} over {summary['rows']} measurements"
        )
    return None
