"""Error statistics per group: median and 90th percentile, engine beside the naive roofline."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .groups import DEVICE_CLASSES, FIT_METRIC, POOLED, SPEED_METRICS, Case, Group, RowResult


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..1) of a non-empty sequence."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


@dataclass(frozen=True)
class ErrorStats:
    """Median and 90th-percentile absolute relative error over some rows."""

    rows: int
    median: float | None
    p90: float | None

    @classmethod
    def of(cls, errors: Sequence[float]) -> "ErrorStats":
        """Stats of a list of errors (None when empty)."""
        if not errors:
            return cls(0, None, None)
        return cls(len(errors), percentile(errors, 0.5), percentile(errors, 0.9))

    def as_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "median_error": self.median, "p90_error": self.p90}


@dataclass(frozen=True)
class GroupSummary:
    """One line of the error table."""

    group: Group
    engine: ErrorStats
    roofline: ErrorStats
    fit_agreeing: int | None = None
    roofline_fit_agreeing: int | None = None

    @property
    def engine_better(self) -> bool | None:
        """True when the engine's median error is below the roofline's (fit: more verdicts
        agree); None when there is nothing to compare or both agree equally often."""
        if self.fit_agreeing is not None and self.roofline_fit_agreeing is not None:
            if self.fit_agreeing == self.roofline_fit_agreeing:
                return None
            return self.fit_agreeing > self.roofline_fit_agreeing
        if self.engine.median is None or self.roofline.median is None:
            return None
        return self.engine.median < self.roofline.median

    def as_dict(self) -> dict[str, Any]:
        return {
            "metric": self.group.metric,
            "runtime": self.group.runtime,
            "device_class": self.group.device_class,
            "label": self.group.label,
            "rows": self.engine.rows,
            "engine": self.engine.as_dict(),
            "naive_roofline": self.roofline.as_dict(),
            "fit_agreeing": self.fit_agreeing,
            "naive_roofline_fit_agreeing": self.roofline_fit_agreeing,
            "engine_better": self.engine_better,
        }


def _summary(group: Group, engine: list[RowResult], roofline: list[RowResult]) -> GroupSummary:
    if group.metric == FIT_METRIC:
        return GroupSummary(
            group,
            ErrorStats(len(engine), None, None),
            ErrorStats(len(roofline), None, None),
            fit_agreeing=sum(1 for r in engine if r.agrees),
            roofline_fit_agreeing=sum(1 for r in roofline if r.agrees),
        )
    return GroupSummary(
        group,
        ErrorStats.of([r.error for r in engine if r.error is not None]),
        ErrorStats.of([r.error for r in roofline if r.error is not None]),
    )


def _group_order(group: Group) -> tuple[int, str, int]:
    metrics = (*SPEED_METRICS, FIT_METRIC)
    return (metrics.index(group.metric), group.runtime, DEVICE_CLASSES.index(group.device_class))


def summarize(engine: Sequence[RowResult], roofline: Sequence[RowResult]) -> list[GroupSummary]:
    """Per metric x runtime x device class: the engine's errors beside the naive roofline's
    (both lists hold results for the same cases, in the same order)."""
    by_group: dict[Group, tuple[list[RowResult], list[RowResult]]] = {}
    for mine, naive in zip(engine, roofline, strict=True):
        pair = by_group.setdefault(mine.case.group, ([], []))
        pair[0].append(mine)
        pair[1].append(naive)
    return [_summary(g, *by_group[g]) for g in sorted(by_group, key=_group_order)]


def summarize_by_metric(
    engine: Sequence[RowResult], roofline: Sequence[RowResult]
) -> list[GroupSummary]:
    """The same table with runtime and device class pooled ("all")."""
    pooled = [
        (
            RowResult(_pooled(e.case), e.predicted, e.error, e.agrees, e.note),
            RowResult(_pooled(r.case), r.predicted, r.error, r.agrees, r.note),
        )
        for e, r in zip(engine, roofline, strict=True)
    ]
    by_metric: dict[str, tuple[list[RowResult], list[RowResult]]] = {}
    for e, r in pooled:
        pair = by_metric.setdefault(e.case.group.metric, ([], []))
        pair[0].append(e)
        pair[1].append(r)
    metrics = (*SPEED_METRICS, FIT_METRIC)
    return [_summary(Group(m, POOLED, POOLED), *by_metric[m]) for m in metrics if m in by_metric]


def _pooled(case: Case) -> Case:
    return Case(
        slug=case.slug,
        source_url=case.source_url,
        source_title=case.source_title,
        group=Group(case.group.metric, POOLED, POOLED),
        measured=case.measured,
        build=case.build,
        model=case.model,
        workload=case.workload,
        output_tokens=case.output_tokens,
        label=case.label,
    )
