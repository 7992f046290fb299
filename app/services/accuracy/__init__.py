"""How close the engine comes to published measurements, beside a naive roofline.

Contract (callers: the /accuracy page and its JSON twin, build and model pages, benchmarks):
- `measurement_cases(snap) -> Cases`: every catalog measurement resolved into engine inputs
  (BuildSpec, ModelSpec, Workload, built with the helpers of app.services.estimates), or skipped
  with the reason (mixed GPUs, CPU offload, a runtime or precision the engine does not model).
- `evaluate(cases, predictor) -> list[RowResult]`: a predictor's figure and error for each case.
  A predictor is any `Callable[[Case], Predicted]`; `engine_predictor` runs `app.engine.estimate`,
  `roofline_predictor` the naive roofline. A calibration can fit constants on the cases whose
  source (`Case.source`, `canonical_source`: one document whatever its locale or commit)
  differs from one source and evaluate on that source (leave-one-source-out).
- `summarize(engine, roofline) -> list[GroupSummary]`: per metric x runtime x device class,
  rows, median and p90 absolute relative error for both; fit facts as agreement counts.
- `accuracy_report(snap) -> dict`: the page's whole content, cached by a digest of the
  measurements and the records they name (`report_inputs_digest`), not by catalog version.
- `measured_vs_predicted_for_build/model(snap, slug=...)` and `group_note(snap, ...)`: what
  build and model pages and estimates show.

Error of a figure: |predicted - measured| / measured. A speed the engine cannot give because it
says the model does not fit counts as a 100 % miss (the run was measured, so it did fit).

Modules: `groups` (metrics, groups and the records passed around), `inputs` (a measurement's
engine inputs), `predictors` (engine, roofline, evaluation, cross-validation), `metrics` (error
statistics per group), `report` (the cached page content), `pages` (build, model and estimate
pages' rows and notes).
"""

from app.engine.runtime import device_class

from .groups import (
    DEVICE_CLASSES,
    FIT_METRIC,
    METRIC_LABELS,
    MIXED_CLASS,
    OFFLOAD_CLASS,
    POOLED,
    SERVING_METRICS,
    SPEED_METRICS,
    Case,
    Cases,
    Group,
    Predicted,
    RowResult,
    Skipped,
    canonical_source,
)
from .inputs import measurement_cases
from .metrics import ErrorStats, GroupSummary, percentile, summarize, summarize_by_metric
from .pages import (
    accuracy_notes_for_build,
    accuracy_notes_for_estimate,
    build_device_class,
    group_note,
    measured_vs_predicted_for_build,
    measured_vs_predicted_for_model,
)
from .predictors import (
    Predictor,
    cross_validate_by_source,
    engine_predictor,
    estimate_for,
    evaluate,
    figure_of,
    roofline_predictor,
    uncached_engine_predictor,
)
from .report import accuracy_report, report_inputs_digest

__all__ = [
    "DEVICE_CLASSES",
    "FIT_METRIC",
    "METRIC_LABELS",
    "MIXED_CLASS",
    "OFFLOAD_CLASS",
    "POOLED",
    "SERVING_METRICS",
    "SPEED_METRICS",
    "Case",
    "Cases",
    "ErrorStats",
    "Group",
    "GroupSummary",
    "Predicted",
    "Predictor",
    "RowResult",
    "Skipped",
    "accuracy_notes_for_build",
    "accuracy_notes_for_estimate",
    "accuracy_report",
    "build_device_class",
    "canonical_source",
    "cross_validate_by_source",
    "device_class",
    "engine_predictor",
    "estimate_for",
    "evaluate",
    "figure_of",
    "group_note",
    "measured_vs_predicted_for_build",
    "measured_vs_predicted_for_model",
    "measurement_cases",
    "percentile",
    "report_inputs_digest",
    "roofline_predictor",
    "summarize",
    "summarize_by_metric",
    "uncached_engine_predictor",
]
