"""Measurements: the catalog list (filters, sort, pages), CSV rows and the detail record.

Contract (callers: the JSON API, the HTML pages and the accuracy service):
- `measurement_rows(snap) -> tuple[MeasurementRow, ...]`: every measurement, by slug, with its
  validated record (`record`, a `MeasurementRead`), cached per catalog version.
- `list_measurements(session, *, query: MeasurementQuery) -> ListResult[MeasurementListItem]`:
  one page; `matching_measurements(...)` every match, unpaged (CSV).
- `get_measurement(session, *, slug) -> MeasurementRead`, raising NotFound.
- `measurements_for(snap, *, build=None, model=None)`: the rows that concern a build or model.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.caching import Snapshot, snapshot
from app.models import Measurement
from app.pagination import ListResult
from app.schemas.measurement import (
    MeasurementIn,
    MeasurementListItem,
    MeasurementQuery,
    MeasurementRead,
)
from app.services.accelerators import accelerator_rows
from app.services.listing import contains, find_row, list_memo, page_rows, sorted_rows
from app.services.records import measurement_document


@dataclass(frozen=True)
class MeasurementRow:
    """One measurement, ready to filter, sort, serialise and predict (read-only).

    `list_item` and `record` are the API's typed answers, validated once per catalog version;
    the filters, sort and other services read their attributes.
    """

    slug: str
    list_item: MeasurementListItem
    record: MeasurementRead
    search_text: str
    source_text: str


def hardware_label(record: MeasurementIn, accelerator_names: dict[str, str]) -> str:
    """What ran it, in words: "2x NVIDIA H100 SXM", "RTX 3090 + RTX 4090", a build slug."""
    hw = record.hardware
    if hw.groups:
        return " + ".join(
            f"{g.count}x {accelerator_names.get(g.accelerator, g.accelerator)}" for g in hw.groups
        )
    if hw.accelerator_spec is not None:
        name = hw.accelerator_spec.name
    elif hw.accelerator is not None:
        name = accelerator_names.get(hw.accelerator, hw.accelerator)
    else:
        return str(hw.build)
    return f"{hw.count}x {name}" if hw.count > 1 else name


def _row(measurement: Measurement, accelerator_names: dict[str, str]) -> MeasurementRow:
    read = measurement_document(measurement)
    read["version"] = measurement.version
    record = MeasurementRead.model_validate(read)
    item: dict[str, Any] = {
        "slug": measurement.slug,
        "name": measurement.name,
        "build": measurement.build_slug,
        "accelerator": measurement.accelerator_slug,
        "accelerator_name": hardware_label(record, accelerator_names),
        "accelerator_count": measurement.accelerator_count,
        "nodes": measurement.nodes,
        "model": measurement.model_slug,
        "runtime": measurement.runtime,
        "runtime_version": measurement.runtime_version,
        "backend": measurement.backend,
        "precision": measurement.precision,
        "batch": measurement.batch,
        "concurrency": measurement.concurrency,
        "prompt_tokens": measurement.prompt_tokens,
        "output_tokens": measurement.output_tokens,
        "context_depth_tokens": measurement.context_depth_tokens,
        "tensor_parallel": measurement.tensor_parallel,
        "metric": measurement.metric,
        "value": read["value"],
        "unit": measurement.unit,
        "source_url": measurement.source_url,
        "source_title": measurement.source_title,
        "as_of": read["as_of"],
        "read_from_chart": measurement.read_from_chart,
    }
    search = " ".join(
        str(v)
        for v in (
            measurement.slug,
            measurement.name,
            item["accelerator_name"],
            measurement.model_slug,
            measurement.runtime,
            measurement.precision,
            measurement.notes,
        )
    )
    source = f"{measurement.source_url} {measurement.source_title or ''}"
    return MeasurementRow(
        slug=measurement.slug,
        list_item=MeasurementListItem.model_validate(item),
        record=record,
        search_text=search.casefold(),
        source_text=source.casefold(),
    )


def measurement_rows(snap: Snapshot) -> tuple[MeasurementRow, ...]:
    """Every measurement by slug, loaded once per catalog version."""

    def load() -> tuple[MeasurementRow, ...]:
        names = {slug: row.list_item.name for slug, row in accelerator_rows(snap).items()}
        stmt = select(Measurement).order_by(Measurement.slug)
        return tuple(_row(m, names) for m in snap.session.scalars(stmt))

    return snap.memo("measurement_rows", load)


def _by_slug(snap: Snapshot) -> dict[str, MeasurementRow]:
    return snap.memo("measurement_by_slug", lambda: {r.slug: r for r in measurement_rows(snap)})


def find_measurement(snap: Snapshot, slug: str) -> MeasurementRow:
    """One measurement row by slug, or NotFound naming `slug`."""
    return find_row(_by_slug(snap), slug, noun="measurement")


# Sorted case-insensitively; an out_of_memory value (true/false) sorts as 1/0 among the numbers.
TEXT_FIELDS = ("name", "slug", "model", "runtime", "metric", "as_of")
SORT_VALUES: dict[str, Callable[[MeasurementRow], Any]] = {
    "value": lambda r: float(r.list_item.value)
}


def _keep(row: MeasurementRow, query: MeasurementQuery) -> bool:
    item = row.list_item
    return (
        (query.build is None or item.build == query.build)
        and (query.accelerator is None or _uses_accelerator(row, query.accelerator))
        and (query.model is None or item.model == query.model)
        and (query.runtime is None or item.runtime == query.runtime)
        and (query.metric is None or item.metric == query.metric)
        and contains(row.source_text, query.source)
        and contains(row.search_text, query.q)
    )


def _uses_accelerator(row: MeasurementRow, slug: str) -> bool:
    groups = row.record.hardware.groups or []
    return row.list_item.accelerator == slug or any(g.accelerator == slug for g in groups)


def _matching(snap: Snapshot, query: MeasurementQuery) -> list[MeasurementRow]:
    def compute() -> list[MeasurementRow]:
        rows = [r for r in measurement_rows(snap) if _keep(r, query)]
        return sorted_rows(rows, query.sort_key, text_fields=TEXT_FIELDS, values=SORT_VALUES)

    return list_memo(snap, "measurement_list", query, compute)


def list_measurements(
    session: Session, *, query: MeasurementQuery
) -> ListResult[MeasurementListItem]:
    """One page of measurements matching the query."""
    return page_rows(_matching(snapshot(session), query), query)


def matching_measurements(
    session: Session, *, query: MeasurementQuery
) -> list[MeasurementListItem]:
    """Every measurement matching the query's filters, sorted, without paging (CSV export)."""
    return [r.list_item for r in _matching(snapshot(session), query)]


def get_measurement(session: Session, *, slug: str) -> MeasurementRead:
    """The full measurement record, or NotFound."""
    return find_measurement(snapshot(session), slug).record


def measurements_for(
    snap: Snapshot, *, build: str | None = None, model: str | None = None
) -> list[MeasurementRow]:
    """The measurements that name a build (exactly) or a model."""
    return [
        r
        for r in measurement_rows(snap)
        if (build is None or r.list_item.build == build)
        and (model is None or r.list_item.model == model)
    ]
