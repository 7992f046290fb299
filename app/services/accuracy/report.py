"""The /accuracy report: every row's prediction beside the roofline's, tables, worst misses.

The report takes about a second to build and depends only on the measurements and the catalog
records they name (builds, accelerators, model profiles), not on the rest of the catalog. It is
cached by a digest of exactly those records, so an admin edit elsewhere (a build nobody
measured, a price) keeps it, while an edit of a measurement or of a record one names rebuilds it.
The digest reads the measurement table's raw rows: validating every measurement document again
after each unrelated edit would cost most of what the cache saves.
"""

import hashlib
import json
from typing import Any

from sqlalchemy import select

from app.caching import Snapshot, ValueCache
from app.models import METRIC_UNITS, Measurement
from app.services.accelerators import accelerator_rows
from app.services.build_rows import build_rows
from app.services.measurements import measurement_rows
from app.services.model_profiles import model_profile_rows

from .groups import METRIC_LABELS, RowResult, canonical_source
from .inputs import measurement_cases
from .metrics import summarize, summarize_by_metric
from .predictors import engine_predictor, evaluate, roofline_predictor

WORST_MISSES = 15
# Report bodies by the digest of their inputs: the current one and a few recent ones (another
# worker's database, a catalog edited back and forth).
REPORTS = ValueCache(max_entries=4)


def _row_out(mine: RowResult, naive: RowResult) -> dict[str, Any]:
    case = mine.case
    return {
        "slug": case.slug,
        "label": case.label,
        "metric": case.group.metric,
        "metric_label": METRIC_LABELS[case.group.metric],
        "unit": METRIC_UNITS[case.group.metric],
        "runtime": case.group.runtime,
        "device_class": case.group.device_class,
        "measured": case.measured,
        "predicted": mine.predicted,
        "error": mine.error,
        "agrees": mine.agrees,
        "naive_roofline_predicted": naive.predicted,
        "naive_roofline_error": naive.error,
        "note": mine.note,
        "source_url": case.source_url,
        "source_title": case.source_title,
    }


def _feed(digest: "hashlib.blake2b", kind: str, document: dict[str, Any] | None) -> None:
    digest.update(kind.encode())
    digest.update(json.dumps(document, sort_keys=True, default=str).encode())


def report_inputs_digest(snap: Snapshot) -> str:
    """A digest of every record the report depends on: each measurement row, and the builds,
    accelerators (a build's too) and model profiles the measurements name."""

    def compute() -> str:
        digest = hashlib.blake2b(digest_size=16)
        builds, accelerators = build_rows(snap).by_slug, accelerator_rows(snap)
        models = model_profile_rows(snap)
        build_slugs: set[str] = set()
        accelerator_slugs: set[str] = set()
        model_slugs: set[str] = set()
        table = Measurement.__table__
        for row in snap.session.execute(select(table).order_by(table.c.id)):
            digest.update(repr(tuple(row)).encode())
            model_slugs.add(row.model_slug)
            if row.build_slug is not None:
                build_slugs.add(row.build_slug)
            if row.accelerator_slug is not None:
                accelerator_slugs.add(row.accelerator_slug)
            groups = (row.hardware or {}).get("groups") or ()
            accelerator_slugs.update(str(g.get("accelerator")) for g in groups)
        for slug in sorted(build_slugs):
            build = builds.get(slug)
            _feed(digest, f"build {slug}", None if build is None else build.record.model_dump())
            if build is not None:
                accelerator_slugs.update(build.accelerator_slugs)
        for slug in sorted(accelerator_slugs):
            accelerator = accelerators.get(slug)
            document = None if accelerator is None else accelerator.record.model_dump()
            _feed(digest, f"accelerator {slug}", document)
        for slug in sorted(model_slugs):
            model = models.get(slug)
            _feed(digest, f"model {slug}", None if model is None else model.record.model_dump())
        return digest.hexdigest()

    return snap.memo("accuracy_inputs_digest", compute)


def _report_body(snap: Snapshot) -> dict[str, Any]:
    cases = measurement_cases(snap)
    engine = evaluate(cases.cases, engine_predictor)
    roofline = evaluate(cases.cases, roofline_predictor)
    rows = [_row_out(e, r) for e, r in zip(engine, roofline, strict=True)]
    misses = sorted(
        (r for r in rows if r["error"] is not None), key=lambda r: (-r["error"], r["slug"])
    )
    return {
        "measurements": len(cases.cases) + len(cases.skipped),
        "predicted": len(cases.cases),
        # Documents, not addresses: a page in four locales is one source.
        "sources": len({canonical_source(r.list_item.source_url) for r in measurement_rows(snap)}),
        "predicted_sources": len({c.source for c in cases.cases}),
        "groups": [s.as_dict() for s in summarize(engine, roofline)],
        "overall": [s.as_dict() for s in summarize_by_metric(engine, roofline)],
        "worst_misses": misses[:WORST_MISSES],
        "rows": rows,
        "skipped": [{"slug": s.slug, "reason": s.reason} for s in cases.skipped],
        "estimated": True,
    }


def accuracy_report(snap: Snapshot) -> dict[str, Any]:
    """The /accuracy content: tables by group and by metric, every row, the worst misses."""

    def compute() -> dict[str, Any]:
        body = REPORTS.get(report_inputs_digest(snap), lambda: _report_body(snap))
        return {"catalog_version": snap.version, **body}

    return snap.memo("accuracy_report", compute)
