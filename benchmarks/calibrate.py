"""Fit the engine's efficiency constants to the catalog measurements, per runtime x device class.

Run from the repository root:  python benchmarks/calibrate.py [--seed-dir DIR] [--dry-run]
[--rows-json PATH]

Seeds a scratch catalog from seed_data/ (benchmarks/accuracy.py's path), resolves every
measurement into engine inputs (app/services/accuracy.py), fits three achieved-share constants
per runtime x device class, writes them to app/engine/calibrated.py (the engine reads that
module at import: stdlib only), and prints the leave-one-source-out errors next to the naive
roofline on the same rows. `--dry-run` prints without writing.

The fit (docs/engine.md, "Calibration by code"): each unit of constants is chosen on a grid to
minimise the summed |log(predicted / measured)| over the rows it governs, each source weighing
the same, running the real engine at every grid value (so fixed costs, KV reads and
communication stay in the model):
- bandwidth + fixed_s_per_layer + mmvq_overlap (one joint grid): single-stream decode (batch <=
  2) and batch-1 inter-token latency, end-to-end latency and serving throughput;
- prefill_compute: prefill tokens/s, and time to first token where the measurement records its
  benchmark's arrival process (the queue ahead of the prompt is then modelled, not guessed);
- decode_compute: batched decode and serving rows at batch > 1 (fitted last, at the bandwidth
  and prefill share chosen for their runtime x device class: every request's prompt is
  prefilled once per serving cycle).
A time to first token without a recorded arrival process is reported, never fitted.
A runtime x device class pair gets its own values only with >= MIN_ROWS rows from >=
MIN_SOURCES sources; the runtime's other device classes share one value fitted on all its rows
(with the same two thresholds); without enough rows the hand-set value of app/engine/runtime.py
stays. No per-GPU constant.

Why MIN_SOURCES is 3 (a property of the estimator, fixed before looking at any figure): the
loss is an absolute log error with every source weighing the same, so the fitted value is a
weighted median over sources. A median of two sources is not identified (anything between them
fits equally) and has a breakdown point of zero: one atypical source (an early preview branch,
an untuned configuration) moves it as far as it likes, e.g. to the grid's floor. Three is the
smallest count whose median one source cannot move outside the range of the other two. Sources
disagree for reasons the inputs do not record (software date, flags), so a source, not a row,
is the unit of evidence.

Pure Python on purpose: a grid over a few hundred rows needs no numpy, and the tests import the
fitting functions without a dev-only dependency.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import statistics
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType, ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from app.engine import mmvq, prep, runtime  # noqa: E402
from app.engine.plan import clear_prepared  # noqa: E402
from app.engine.prep import foreign_backend  # noqa: E402
from app.engine.runtime import DEVICE_CLASSES, RUNTIMES, Efficiency  # noqa: E402
from app.services.accuracy import (  # noqa: E402
    Case,
    GroupSummary,
    Predicted,
    RowResult,
    cross_validate_by_source,
    evaluate,
    roofline_predictor,
    summarize,
    summarize_by_metric,
    uncached_engine_predictor,
)

PARAMETERS = (
    "bandwidth",
    "prefill_compute",
    "decode_compute",
    "fixed_s_per_layer",
    "moe_prefill_compute",
    "prefill_host_s_per_layer",
    "mmvq_overlap",
)
# Constants fitted together (one grid over their product), in stages: a later stage's rows are
# tabulated at the values the earlier stage chose for their runtime x device class.
UNITS = (
    ("bandwidth", "fixed_s_per_layer", "mmvq_overlap"),
    ("prefill_compute",),
    ("decode_compute",),
    ("moe_prefill_compute",),
)
# Serving rows at batch > 1 depend on the prefill shares (every request's prompt is prefilled
# once per cycle), so batched decode is fitted after prefill, at the values chosen for its pair;
# the routed-expert share after the dense one (a mixture-of-experts prompt has both).
STAGES = ((UNITS[0],), (UNITS[1],), (UNITS[3],), (UNITS[2],))
MIN_ROWS = 10
TIE_TOLERANCE = 1e-9  # relative: losses this close are equal (float summation order)
MIN_SOURCES = 3  # the smallest count whose median one odd source cannot set (docstring)
OUTPUT = ROOT / "app" / "engine" / "calibrated.py"


def geometric(low: float, high: float, count: int) -> tuple[float, ...]:
    """`count` log-spaced values from low to high, rounded to 4 significant digits."""
    ratio = (high / low) ** (1.0 / (count - 1))
    return tuple(float(f"{low * ratio**i:.4g}") for i in range(count))


# Achieved bandwidth cannot exceed the peak; prefill may exceed the FP16/BF16 dense figure on
# GeForce (FP16 accumulation runs at twice the catalog's FP32-accumulate rate) and on int8 paths.
GRIDS: MappingProxyType[str, tuple[float, ...]] = MappingProxyType(
    {
        "bandwidth": geometric(0.3, 1.0, 25),
        "prefill_compute": geometric(0.02, 2.0, 41),
        # Batched decode runs skinny GEMMs: it cannot beat the share prefill's full tiles reach.
        "decode_compute": geometric(0.01, 0.6, 29),
        # Per-layer launch cost: from CUDA-graph replay (~2 us) to Metal command encoding.
        "fixed_s_per_layer": (0.0, 2e-6, 4e-6, 8e-6, 15e-6, 30e-6, 60e-6, 120e-6),
        "moe_prefill_compute": geometric(0.02, 2.0, 41),
        # Unhidden share of the shorter of MMVQ issue and weight reads: from perfect overlap
        # to half of it exposed (Efficiency.mmvq_overlap).
        "mmvq_overlap": (0.0, 0.125, 0.25, 0.375, 0.5),
    }
)

# (runtime whose constants apply, device class), or for the prefill shares of a runtime with
# several kernel backends (llama.cpp) (runtime, device class, backend).
Key = tuple[str, ...]
Unit = tuple[str, ...]


def candidates(unit: Unit) -> list[tuple[float, ...]]:
    """Every combination of the unit's grid values."""
    combos: list[tuple[float, ...]] = [()]
    for parameter in unit:
        combos = [c + (g,) for c in combos for g in GRIDS[parameter]]
    return combos


def unit_of(case: Case) -> Unit | None:
    """Which constants a measurement informs (None: it informs none)."""
    metric, batch = case.group.metric, case.workload.batch
    if metric == "decode_tokens_per_s":
        return UNITS[0] if batch <= 2 else UNITS[2]
    if metric == "prefill_tokens_per_s" or (metric == "ttft_s" and case.arrival is not None):
        # With the benchmark's arrival process recorded, a time to first token is the prefill
        # of the request's prompt behind a known queue (engine.serving_traffic.request_times). A
        # mixture-of-experts model's prefill pins the routed-expert share.
        return UNITS[3] if case.model.moe_layers else UNITS[1]
    if metric in ("itl_ms", "e2e_latency_s", "output_tokens_per_s_total"):
        return UNITS[0] if batch == 1 else UNITS[2]
    return None


PREFILL_UNITS = (UNITS[1], UNITS[3])
# Units a kernel backend other than the device's native one gets its own values for: the
# prefill shares, and single-stream decode's bandwidth share and launch cost (Vulkan's
# mat-vec shaders and command submission are not ROCm's or CUDA's kernels).
BACKEND_UNITS = (UNITS[0], *PREFILL_UNITS)


def backend_of(case: Case) -> str | None:
    """The kernel backend whose own prefill shares the engine uses for this case (None: the
    device class's, for the device's native backend or a runtime with one backend)."""
    return foreign_backend(RUNTIMES[case.group.runtime], case.build, case.workload)


def key_of(case: Case) -> Key:
    """The runtime x device class whose constants the engine uses for this case, with the
    kernel backend for a prefill or single-stream decode row of a runtime that has several."""
    name = case.group.runtime
    key = (runtime.CALIBRATION_ALIASES.get(name, name), case.group.device_class)
    backend = backend_of(case)
    if backend is not None and unit_of(case) in BACKEND_UNITS:
        return (*key, backend)
    return key


def log_error(predicted: Predicted, measured: float) -> float:
    """|log(predicted / measured)|; a run the engine calls impossible costs log(10)."""
    if predicted is None or isinstance(predicted, bool) or not predicted > 0:
        return math.log(10.0)
    return abs(math.log(predicted / measured))


@dataclass(frozen=True)
class GridRow:
    """One measurement's log error at every candidate of the constants it informs."""

    source: str
    key: Key
    unit: Unit
    losses: tuple[float, ...]


def choose(
    rows: Sequence[GridRow],
    options: Sequence[tuple[float, ...]],
    prior: tuple[float, ...] | None = None,
) -> tuple[float, ...]:
    """The candidate with the least loss over `rows`, each source weighing the same however
    many rows it publishes: one vendor's 200-row sweep must not outvote twenty community
    threads. Candidates the data cannot tell apart (two sources pulling opposite ways leave a
    flat stretch of equal loss) go to the one nearest `prior`, the hand-set value, not to the
    grid's edge; without a prior, the first."""
    per_source: dict[str, int] = {}
    for r in rows:
        per_source[r.source] = per_source.get(r.source, 0) + 1
    totals = [0.0] * len(options)
    for r in rows:
        weight = 1.0 / per_source[r.source]
        for i, loss in enumerate(r.losses):
            totals[i] += weight * loss
    best = min(totals)
    tied = [i for i, total in enumerate(totals) if total <= best + TIE_TOLERANCE * (1.0 + best)]
    if prior is None:
        return options[tied[0]]

    def distance(i: int) -> float:
        pairs = zip(options[i], prior, strict=True)
        return sum(abs(math.log(max(v, 1e-9) / max(p, 1e-9))) for v, p in pairs)

    return options[min(tied, key=distance)]


@dataclass
class Fit:
    """Fitted values per key and parameter, and how many distinct numbers that is."""

    values: dict[Key, dict[str, float]] = field(default_factory=dict)
    numbers: int = 0

    def fixed(self, key: Key) -> dict[str, float]:
        """The values chosen for a key; a backend key starts from its device class's."""
        merged = dict(self.values.get(key[:2], {})) if len(key) > 2 else {}
        merged.update(self.values.get(key, {}))
        return merged

    def assign(
        self, keys: Sequence[Key], unit: Unit, chosen: tuple[float, ...], new: bool = True
    ) -> None:
        """Give `keys` the chosen values; `new` False: a value already counted (the same rows
        fitted for another key)."""
        for key in keys:
            self.values.setdefault(key, {}).update(zip(unit, chosen, strict=True))
        if new:
            self.numbers += len(unit)


def supported(rows: Sequence[GridRow]) -> bool:
    """Enough rows, from enough sources, to pin a constant down."""
    return len(rows) >= MIN_ROWS and len({r.source for r in rows}) >= MIN_SOURCES


def fit_unit(rows: Sequence[GridRow], unit: Unit, keys: Sequence[Key], out: Fit) -> None:
    """Fit one unit: per runtime x device class where the rows suffice; the runtime's other
    device classes share one value fitted on all its rows; without enough rows, nothing (the
    hand-set values stay). A device class's value is fitted on all its rows, whatever their
    backend (it is what an estimate naming no backend gets), except for single-stream decode,
    where a class fitted on its own rows takes its native backend's alone; a backend other than the
    device's native one (Vulkan on a Radeon) also gets its own key (runtime, class,
    backend) where its rows suffice, else one value shared by that backend's keys on every
    class and fitted on all of them (the same kernels); else none, and the engine takes its
    device class's."""
    options = candidates(unit)
    mine = [r for r in rows if r.unit == unit]
    # Single-stream decode: a device class fitted on its own rows takes its native backend's
    # alone (a foreign backend's rows fit their own key): the class value is what a run on the
    # native kernels gets. The prefill shares keep the all-backend class value, and the pooled
    # value of the runtime's other classes stays fitted on all its rows (every backend).
    native = [r for r in mine if len(r.key) == 2] if unit == UNITS[0] else mine

    def prior(key: Key) -> tuple[float, ...]:
        base = hand_set(key)
        return tuple(
            base.routed_prefill_compute if p == "moe_prefill_compute" else getattr(base, p)
            for p in unit
        )

    fitted: dict[tuple[int, ...], tuple[float, ...]] = {}

    def fit(group: Sequence[Key], group_rows: Sequence[GridRow]) -> None:
        # The same rows give the same value: a backend measured on one class only is that
        # class's value again, not another number (device classes count as before).
        identity = tuple(sorted(map(id, group_rows)))
        known = fitted.get(identity) if len(group[0]) > 2 else None
        chosen = known or choose(group_rows, options, prior(group[0]))
        fitted[identity] = chosen
        out.assign(group, unit, chosen, new=known is None)

    for name in sorted({k[0] for k in keys}):
        rest = []
        for key in (k for k in keys if k[0] == name and len(k) == 2):
            key_rows = [r for r in native if r.key[:2] == key]
            if supported(key_rows):
                fit([key], key_rows)
            else:
                rest.append(key)
        pooled = [r for r in mine if r.key[0] == name]
        if rest and supported(pooled):
            fit(rest, pooled)
        by_backend: dict[str, list[Key]] = {}
        for key in (k for k in keys if k[0] == name and len(k) == 3):
            key_rows = [r for r in mine if r.key == key]
            if supported(key_rows):
                fit([key], key_rows)
            else:
                by_backend.setdefault(key[2], []).append(key)
        for backend, group in sorted(by_backend.items()):
            same_kernels = [r for r in mine if r.key[0] == name and r.key[2:] == (backend,)]
            if supported(same_kernels):
                fit(group, same_kernels)


def all_keys(cases: Sequence[Case]) -> list[Key]:
    """Every device class of every runtime the measurements cover; for a runtime with several
    kernel backends, every device class with every backend its measurements name (a class a
    backend was not measured on takes that backend's value fitted on the other classes)."""
    names = sorted({key_of(c)[0] for c in cases})
    backends = sorted({(k[0], k[2]) for k in map(key_of, cases) if len(k) > 2})
    return [(name, kind) for name in names for kind in DEVICE_CLASSES] + [
        (name, kind, backend) for name, backend in backends for kind in DEVICE_CLASSES
    ]


# ---- running the engine with candidate constants -----------------------------------------------


def hand_set(key: Key) -> Efficiency:
    """The runtime profile's values for a key (what the engine uses without a fit)."""
    return runtime.hand_set_efficiency(RUNTIMES[key[0]], key[1])


def efficiency_for(key: Key, chosen: dict[str, float]) -> Efficiency:
    """A key's Efficiency: chosen values where given, hand-set ones elsewhere."""
    base = hand_set(key)
    return Efficiency(*(chosen.get(p, getattr(base, p)) for p in PARAMETERS))


@contextmanager
def constants(table: dict[Key, Efficiency]) -> Iterator[None]:
    """Let the engine read `table` instead of the written calibration, inside this block."""
    saved = runtime.CALIBRATION
    runtime.CALIBRATION = MappingProxyType(dict(table))
    clear_prepared()  # prepared inputs carry the bandwidth share and launch cost
    try:
        yield
    finally:
        runtime.CALIBRATION = saved
        clear_prepared()


def predict_with(case: Case, key: Key, chosen: dict[str, float]) -> Predicted:
    """The engine's figure for `case` with `chosen` values for its key."""
    eff = efficiency_for(key, chosen)
    # A backend key's case reads its device class's entry too (bandwidth, launch cost).
    with constants({key[:2]: eff, key: eff}):
        return uncached_engine_predictor(case)


class Tables:
    """Grid losses per case, computed on demand and kept: a case's table depends only on the
    values fixed by earlier stages for its key, so most folds share them."""

    def __init__(self, cases: Sequence[Case]) -> None:
        self.cases = cases
        self._memo: dict[tuple[int, tuple[tuple[str, float], ...]], GridRow] = {}

    def row(self, index: int, fixed: dict[str, float]) -> GridRow:
        case = self.cases[index]
        unit = unit_of(case)
        assert unit is not None
        memo_key = (index, tuple(sorted(fixed.items())))
        found = self._memo.get(memo_key)
        if found is None:
            key = key_of(case)
            measured = float(case.measured)
            known: dict[tuple[float, ...], float] = {}

            def loss(c: tuple[float, ...]) -> float:
                # A case without an MMVQ issue term reads the same at every overlap value.
                reduced = c if issue_bound(case) else neutral_overlap(unit, c)
                if reduced not in known:
                    chosen = {**fixed, **dict(zip(unit, reduced, strict=True))}
                    known[reduced] = log_error(predict_with(case, key, chosen), measured)
                return known[reduced]

            losses = tuple(loss(c) for c in candidates(unit))
            found = GridRow(case.source, key, unit, losses)
            self._memo[memo_key] = found
        return found


def issue_bound(case: Case) -> bool:
    """Whether a case has an MMVQ issue term that mmvq_overlap can move (llama.cpp's CUDA
    mat-vec kernels on a card with an issue rate, at most MMVQ_MAX_BATCH sequences)."""
    cards = [g.accelerator for g in case.build.groups] if case.build.groups else []
    cards.append(case.build.accelerator)
    return (
        RUNTIMES[case.group.runtime].ggml_layout
        and case.workload.batch <= mmvq.MMVQ_MAX_BATCH
        and any(mmvq.cuda_issue_rate(acc) is not None for acc in cards)
    )


def neutral_overlap(unit: Unit, values: tuple[float, ...]) -> tuple[float, ...]:
    """`values` with the unit's mmvq_overlap at 0 (no other parameter changes)."""
    return tuple(0.0 if p == "mmvq_overlap" else v for p, v in zip(unit, values, strict=True))


def fit_cases(cases: Sequence[Case], tables: Tables, indices: Sequence[int]) -> Fit:
    """Every stage on the cases at `indices`, each at the values earlier stages chose."""
    used = [i for i in indices if unit_of(cases[i]) is not None]
    keys = all_keys(cases)
    result = Fit()
    for stage in STAGES:
        rows = [
            tables.row(i, result.fixed(key_of(cases[i])))
            for i in used
            if unit_of(cases[i]) in stage
        ]
        for unit in stage:
            fit_unit(rows, unit, keys, result)
    return result


def table_of(result: Fit) -> dict[Key, Efficiency]:
    """The engine's calibration table for a fit."""
    return {key: efficiency_for(key, result.fixed(key)) for key in result.values}


# ---- cross-validation and output ----------------------------------------------------------------


# Hand-set engine constants read off sources' rows rather than fitted here: (module that reads
# it, name, the value that switches its effect off, {source: the value read off its rows}); the
# engine runs with the median of the readings. When a source of them is held out, its fold runs
# with the median of the other sources' readings, or with the neutral value when it was the only
# one (fit and prediction alike), so its rows' errors are held out as well instead of repeating
# the rows the constant was set on.
ANCHORED: tuple[tuple[ModuleType, str, float, Mapping[str, float]], ...] = (
    (mmvq, "MMVQ_ISSUE_EFFICIENCY", math.inf, mmvq.MMVQ_ISSUE_EFFICIENCY_READINGS),
    (
        prep,
        "MLA_KERNEL_SHARE",
        1.0,
        {"github.com/tenstorrent/tt-inference-server/issues/356": prep.MLA_KERNEL_SHARE},
    ),
)


def value_without(readings: Mapping[str, float], source: str, neutral: float) -> float:
    """An anchored constant in the fold that holds `source` out: the median of the other
    sources' readings, `neutral` when no other source was read."""
    others = [value for anchor, value in readings.items() if anchor != source]
    return statistics.median(others) if others else neutral


@contextmanager
def without_constants_set_on(source: str) -> Iterator[bool]:
    """Inside this block the ANCHORED constants read off `source` take the value the other
    sources' readings give (their median; the neutral value when there are none); yields whether
    any did (nothing changes, and no memo is dropped, otherwise)."""
    chosen = [
        (m, name, value_without(readings, source, neutral))
        for m, name, neutral, readings in ANCHORED
        if source in readings
    ]
    saved = [(m, name, getattr(m, name)) for m, name, _ in chosen]
    for m, name, value in chosen:
        setattr(m, name, value)
    if chosen:
        clear_prepared()
    try:
        yield bool(chosen)
    finally:
        for m, name, value in saved:
            setattr(m, name, value)
        if chosen:
            clear_prepared()


def cross_validated(
    cases: Sequence[Case], tables: Tables | None = None
) -> tuple[list[RowResult], list[RowResult]]:
    """Leave-one-source-out engine results (constants refitted without each source; ANCHORED
    constants neutral in their own source's fold) and the naive roofline's results on the same
    cases."""
    tables = tables or Tables(cases)
    index = {id(c): i for i, c in enumerate(cases)}
    sources = {c.source for c in cases}

    def fit(training: Sequence[Case]) -> Callable[[Case], Predicted]:
        (held_out,) = sources - {c.source for c in training}
        indices = [index[id(c)] for c in training]
        with without_constants_set_on(held_out) as anchored:
            # The grid losses depend on the constants: an anchored fold computes its own.
            table = table_of(fit_cases(cases, Tables(cases) if anchored else tables, indices))

        def predictor(case: Case) -> Predicted:
            with constants(table):
                if not anchored:
                    return uncached_engine_predictor(case)
                with without_constants_set_on(held_out):
                    return uncached_engine_predictor(case)

        return predictor

    return cross_validate_by_source(cases, fit), evaluate(cases, roofline_predictor)


# Decode rows by software generation: the headline counts every row; these lines show the
# llama.cpp CUDA runs from before CUDA graphs (Workload.cuda_graphs False: their published
# source predates 2024-05-08, and the engine adds runtime.PRE_CUDA_GRAPH_S_PER_LAYER) apart from
# the rest, so neither generation hides the other.
GENERATIONS: tuple[tuple[str, Callable[[Case], bool]], ...] = (
    ("llama.cpp CUDA builds before CUDA graphs", lambda c: not c.workload.cuda_graphs),
    ("without them (today's software)", lambda c: c.workload.cuda_graphs),
)


def by_software_generation(
    engine: Sequence[RowResult], naive: Sequence[RowResult]
) -> list[dict]:
    """The pooled decode line for each software generation (GENERATIONS)."""
    out = []
    for name, keep in GENERATIONS:
        pairs = [
            (e, r)
            for e, r in zip(engine, naive, strict=True)
            if e.case.group.metric == "decode_tokens_per_s" and keep(e.case)
        ]
        if not pairs:
            continue
        (summary,) = summarize_by_metric([e for e, _ in pairs], [r for _, r in pairs])
        row = summary.as_dict()
        row["label"] = f"decode tokens/s, {name}"
        out.append(row)
    return out


def cross_validated_summary(
    cases: Sequence[Case], tables: Tables | None = None
) -> tuple[list[dict], list[dict]]:
    """The leave-one-source-out tables (by metric, then decode by software generation; by
    group) as the accuracy report's dicts."""
    return summaries(*cross_validated(cases, tables))


def summaries(
    engine: Sequence[RowResult], naive: Sequence[RowResult]
) -> tuple[list[dict], list[dict]]:
    """cross_validated_summary's tables from results already computed."""
    overall: list[GroupSummary] = summarize_by_metric(engine, naive)
    groups: list[GroupSummary] = summarize(engine, naive)
    rows = [s.as_dict() for s in overall]
    return rows + by_software_generation(engine, naive), [s.as_dict() for s in groups]


def held_out_rows(engine: Sequence[RowResult]) -> list[dict]:
    """One dict per predicted measurement with its held-out figure (`--rows-json`): what a
    round's residual analysis by source, runtime and batch reads."""
    out = []
    for result in engine:
        case, predicted = result.case, result.predicted
        if isinstance(case.measured, bool) or isinstance(predicted, bool):
            continue  # fit facts: agreement, not an error
        out.append({
            "slug": case.slug, "source": case.source, "metric": case.group.metric,
            "runtime": case.group.runtime, "device_class": case.group.device_class,
            "batch": case.workload.batch, "concurrency": case.concurrency,
            "arrival": case.arrival, "prompt_tokens": case.workload.prompt_tokens,
            "output_tokens": case.output_tokens, "measured": case.measured,
            "predicted": predicted, "error": result.error,
        })
    return out


def row_line(label: str, rows: int, sources: int) -> str:
    """One ROWS entry of the generated module, its label split over two string literals where
    the line would pass the 100 columns ruff allows."""
    line = f'    "{label}": ({rows}, {sources}),'
    if len(line) <= 100:
        return line
    head, tail = label.rsplit(" + ", 1)
    return f'    "{head}"\n    " + {tail}": ({rows}, {sources}),'


def module_text(result: Fit, cases: Sequence[Case], inputs: str, today: dt.date) -> str:
    """The generated app/engine/calibrated.py."""
    used = [c for c in cases if unit_of(c) is not None]
    rows: dict[str, int] = {}
    sources: dict[str, set[str]] = {}
    for case in used:
        label = f"{' / '.join(key_of(case))} / {' + '.join(unit_of(case) or ())}"
        rows[label] = rows.get(label, 0) + 1
        sources.setdefault(label, set()).add(case.source)
    lines = [
        '"""Generated by benchmarks/calibrate.py: do not edit by hand (re-run the script instead).',
        "",
        f"Fitted on {len(used)} measurements from {len({c.source for c in used})} sources",
        f"({inputs}); {result.numbers} fitted numbers.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f'FITTED_AT = "{today.isoformat()}"',
        f'INPUTS = "{inputs}"',
        f"FITTED_NUMBERS = {result.numbers}",
        "# (rows, sources) per runtime / device class / constants the fit used.",
        "ROWS: dict[str, tuple[int, int]] = {",
        *(row_line(label, n, len(sources[label])) for label, n in sorted(rows.items())),
        "}",
        "# (runtime, device class[, kernel backend]) -> (bandwidth, prefill_compute,",
        "# decode_compute, fixed_s_per_layer, moe_prefill_compute, prefill_host_s_per_layer,",
        "# mmvq_overlap);",
        "# a value not fitted for a pair is the runtime's hand-set one (moe_prefill_compute",
        "# None: as prefill_compute; prefill_host_s_per_layer is never fitted, 0: no launch",
        "# floor); a backend key's non-prefill values are its device class's.",
        "EFFICIENCY: dict[tuple[str, ...], tuple[float, float, float, float, float | None, "
        "float, float]] = {",
    ]
    for key, eff in sorted(table_of(result).items()):
        values = ", ".join(f"{getattr(eff, p)!r}" for p in PARAMETERS)
        quoted = ", ".join(f'"{part}"' for part in key)
        lines.append(f"    ({quoted}): ({values}),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    """Fit, write app/engine/calibrated.py, print the cross-validated table."""
    from accuracy import SeedError, print_table, seeded_snapshot

    from app.services.accuracy import measurement_cases

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed-dir", type=Path, default=ROOT / "seed_data")
    parser.add_argument("--dry-run", action="store_true", help="print, do not write")
    parser.add_argument(
        "--rows-json", type=Path, help="also write every held-out row's figure to this JSON file"
    )
    args = parser.parse_args()
    try:
        with seeded_snapshot(args.seed_dir) as snap:
            cases = list(measurement_cases(snap).cases)
    except SeedError as exc:
        print(exc, file=sys.stderr)
        return 1
    tables = Tables(cases)
    result = fit_cases(cases, tables, range(len(cases)))
    inputs = f"{args.seed_dir.name}/measurements.yaml, {len(cases)} predictable rows"
    text = module_text(result, cases, inputs, dt.datetime.now(dt.UTC).date())
    print(text)
    if not args.dry_run:
        OUTPUT.write_text(text)
        print(f"wrote {OUTPUT.relative_to(ROOT)}\n")
    engine, naive = cross_validated(cases, tables)
    overall, groups = summaries(engine, naive)
    if args.rows_json is not None:
        args.rows_json.write_text(json.dumps(held_out_rows(engine), indent=1))
    print_table("Leave-one-source-out, by metric", overall)
    print_table("Leave-one-source-out, by metric x runtime x device class", groups)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
