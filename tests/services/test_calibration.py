"""benchmarks/calibrate.py: the fit recovers known constants, cross-validation never fits on the
held-out source, and the engine reads the constants the script writes."""

import importlib.util
import json
import statistics
import sys
import types
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from app.engine import (
    AcceleratorSpec,
    BuildSpec,
    Workload,
    calibrated,
    estimate,
    model_spec_from_hf_config,
    runtime,
)
from app.engine.runtime import RUNTIMES, Efficiency
from app.services.accuracy import Case, Group

ROOT = Path(__file__).resolve().parents[2]
CARD = AcceleratorSpec("card", 48, 1000.0, 150.0, vendor="NVIDIA", memory_type="GDDR6")
KEY = ("llama.cpp", "discrete GDDR")


@pytest.fixture(scope="module")
def calibrate() -> Iterator[types.ModuleType]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(
        "tierline_calibrate", ROOT / "benchmarks" / "calibrate.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]
    sys.path.remove(str(ROOT / "benchmarks"))


def _model(layers: int, hidden: int) -> object:
    return model_spec_from_hf_config(
        {
            "model_type": "llama",
            "num_hidden_layers": layers,
            "hidden_size": hidden,
            "num_attention_heads": hidden // 128,
            "num_key_value_heads": 8,
            "intermediate_size": hidden * 3,
            "vocab_size": 32000,
        },
        name=f"m{layers}x{hidden}",
    )


def _cases(metric: str, source_count: int = 3, per_source: int = 4) -> list[Case]:
    """Rows over several model sizes and contexts (so bandwidth and launch costs separate)."""
    shapes = [(16, 2048), (32, 4096), (48, 5120), (80, 8192)]
    batch = 8 if metric == "itl_ms" else 1
    out = []
    for s in range(source_count):
        for i in range(per_source):
            layers, hidden = shapes[i % len(shapes)]
            context = 512 * (1 + s)
            out.append(
                Case(
                    slug=f"{metric}-{s}-{i}",
                    source_url=f"https://example.com/{s}",
                    source_title=None,
                    group=Group(metric, "llama.cpp", "discrete GDDR"),
                    measured=1.0,  # replaced by the known constants' figure below
                    build=BuildSpec("card", CARD),
                    model=_model(layers, hidden),  # type: ignore[arg-type]
                    workload=Workload(
                        precision="q4_0",
                        runtime="llama.cpp",
                        batch=batch,
                        context_tokens=context + 512,
                        prompt_tokens=512,
                    ),
                    output_tokens=128,
                    label=f"m{layers} on card",
                )
            )
    return out


def _measured_with(
    calibrate: types.ModuleType, cases: list[Case], known: dict[str, float]
) -> list[Case]:
    return [replace(c, measured=calibrate.predict_with(c, KEY, known)) for c in cases]


def test_fit_recovers_known_constants_from_synthetic_rows(calibrate: types.ModuleType) -> None:
    grids = calibrate.GRIDS
    known = {
        "bandwidth": grids["bandwidth"][8],
        "fixed_s_per_layer": grids["fixed_s_per_layer"][4],
        "prefill_compute": grids["prefill_compute"][25],
        "decode_compute": grids["decode_compute"][6],
    }
    cases = _measured_with(
        calibrate,
        _cases("decode_tokens_per_s") + _cases("prefill_tokens_per_s") + _cases("itl_ms"),
        known,
    )
    result = calibrate.fit_cases(cases, calibrate.Tables(cases), range(len(cases)))
    # No row has an MMVQ issue term: every overlap value fits alike and the hand-set 0 stays.
    known["mmvq_overlap"] = 0.0
    assert result.values[KEY] == pytest.approx(known)
    # The runtime's other device classes share the pooled values: one number per constant.
    assert result.numbers == 10
    assert result.values[("llama.cpp", "HBM datacenter")] == pytest.approx(known)


def test_too_few_rows_leave_the_hand_set_constants(calibrate: types.ModuleType) -> None:
    cases = _measured_with(
        calibrate, _cases("decode_tokens_per_s", source_count=1, per_source=3), {"bandwidth": 0.5}
    )
    result = calibrate.fit_cases(cases, calibrate.Tables(cases), range(len(cases)))
    assert result.values == {} and result.numbers == 0


def test_cross_validation_never_fits_on_the_held_out_source(
    calibrate: types.ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = _measured_with(
        calibrate, _cases("decode_tokens_per_s", source_count=4), {"bandwidth": 0.6}
    )
    # One source disagrees wildly: if its rows leaked into its own fold, its error would vanish.
    odd = "https://example.com/3"
    cases = [
        replace(c, measured=float(c.measured) * 3) if c.source_url == odd else c for c in cases
    ]
    trained_on: list[set[str]] = []
    real_fit = calibrate.fit_cases

    def spy(all_cases, tables, indices):  # type: ignore[no-untyped-def]
        trained_on.append({all_cases[i].source_url for i in indices})
        return real_fit(all_cases, tables, indices)

    monkeypatch.setattr(calibrate, "fit_cases", spy)
    engine, naive = calibrate.cross_validated(cases)
    sources = {c.source_url for c in cases}
    assert len(trained_on) == len(sources)
    assert sorted(next(iter(sources - t)) for t in trained_on) == sorted(sources)
    assert all(len(sources - t) == 1 for t in trained_on)
    held_out_errors = [r.error for r in engine if r.case.source_url == odd]
    assert min(held_out_errors) > 0.5  # predicted from the other sources' 0.6, measured 3x
    assert len(naive) == len(engine) == len(cases)


def test_held_out_rows_carry_each_rows_held_out_figure(calibrate: types.ModuleType) -> None:
    cases = _measured_with(
        calibrate, _cases("decode_tokens_per_s", source_count=4), {"bandwidth": 0.6}
    )
    engine, _ = calibrate.cross_validated(cases)
    rows = calibrate.held_out_rows(engine)
    assert [r["slug"] for r in rows] == [c.slug for c in cases]
    for row, result in zip(rows, engine, strict=True):
        assert row["predicted"] == result.predicted and row["error"] == result.error
        assert row["source"] == result.case.source and row["metric"] == "decode_tokens_per_s"
    json.dumps(rows)  # --rows-json writes them as they are


def test_engine_reads_the_written_constants(calibrate: types.ModuleType) -> None:
    bandwidth = calibrate.GRIDS["bandwidth"][5]
    cases = _measured_with(calibrate, _cases("decode_tokens_per_s"), {"bandwidth": bandwidth})
    result = calibrate.fit_cases(cases, calibrate.Tables(cases), range(len(cases)))
    text = calibrate.module_text(result, cases, "synthetic rows", calibrate.dt.date(2026, 12, 1))
    written: dict[str, object] = {}
    exec(compile(text, "calibrated.py", "exec"), written)
    assert written["FITTED_AT"] == "2026-12-01"
    assert written["FITTED_NUMBERS"] == result.numbers
    table = {key: Efficiency(*values) for key, values in written["EFFICIENCY"].items()}  # type: ignore[attr-defined]
    assert table[KEY].bandwidth == pytest.approx(bandwidth)
    model = _model(32, 4096)
    workload = Workload(precision="q4_0", runtime="ollama", context_tokens=1024)
    with calibrate.constants({}):
        hand_set = estimate(BuildSpec("card", CARD), model, workload).throughput  # type: ignore[arg-type]
    with calibrate.constants(table):
        fitted = estimate(BuildSpec("card", CARD), model, workload).throughput  # type: ignore[arg-type]
    assert hand_set is not None and fitted is not None
    # ollama runs llama.cpp's kernels, so it takes llama.cpp's fitted bandwidth share.
    assert fitted.decode_memory_s == pytest.approx(
        hand_set.decode_memory_s
        * runtime.hand_set_efficiency(RUNTIMES["ollama"], KEY[1]).bandwidth
        / bandwidth
    )


def test_the_engine_uses_the_generated_module() -> None:
    for key, values in calibrated.EFFICIENCY.items():
        name, kind, *backend = key  # a third part: a non-native kernel backend's prefill
        found = runtime.efficiency(RUNTIMES[name], kind, *backend)
        assert found == Efficiency(*values)
    # A pair without a fit falls back to the runtime's profile.
    assert runtime.efficiency(RUNTIMES["pytorch"], "HBM datacenter") == runtime.hand_set_efficiency(
        RUNTIMES["pytorch"], "HBM datacenter"
    )


def test_two_sources_leave_the_hand_set_constants(calibrate: types.ModuleType) -> None:
    # Enough rows (12), but two sources: a median of two is set by either one alone.
    cases = _measured_with(
        calibrate, _cases("decode_tokens_per_s", source_count=2, per_source=6), {"bandwidth": 0.5}
    )
    result = calibrate.fit_cases(cases, calibrate.Tables(cases), range(len(cases)))
    assert result.values == {} and result.numbers == 0


def test_three_sources_outvote_one_odd_source(calibrate: types.ModuleType) -> None:
    known = {"bandwidth": calibrate.GRIDS["bandwidth"][8]}
    cases = _measured_with(calibrate, _cases("decode_tokens_per_s", source_count=3), known)
    odd = cases[0].source_url
    # The odd source measures 3x slower: a mean would move toward it, the median does not.
    cases = [
        replace(c, measured=float(c.measured) / 3) if c.source_url == odd else c for c in cases
    ]
    result = calibrate.fit_cases(cases, calibrate.Tables(cases), range(len(cases)))
    assert result.values[KEY]["bandwidth"] == pytest.approx(known["bandwidth"])


def test_foreign_backend_decode_rows_fit_their_own_key_not_the_class(
    calibrate: types.ModuleType,
) -> None:
    # Four sources of Vulkan rows 3x slower than three sources of native ones: the class
    # keeps the native rows' bandwidth share (the Vulkan sources would outvote them) and the
    # (runtime, class, vulkan) key gets its own, lower one.
    known = {"bandwidth": calibrate.GRIDS["bandwidth"][20]}
    native = _measured_with(calibrate, _cases("decode_tokens_per_s", source_count=3), known)
    slower = _measured_with(calibrate, _cases("decode_tokens_per_s", source_count=4), known)
    vulkan = [
        replace(
            c,
            slug=f"vk-{c.slug}",
            source_url=f"{c.source_url}/vulkan",
            measured=float(c.measured) / 3,
            workload=replace(c.workload, backend="vulkan"),
        )
        for c in slower
    ]
    cases = native + vulkan
    result = calibrate.fit_cases(cases, calibrate.Tables(cases), range(len(cases)))
    assert result.values[KEY]["bandwidth"] == pytest.approx(known["bandwidth"])
    assert result.values[(*KEY, "vulkan")]["bandwidth"] < known["bandwidth"] / 2


def test_decode_is_also_reported_by_software_generation(calibrate: types.ModuleType) -> None:
    from app.services.accuracy import RowResult

    cases = _cases("decode_tokens_per_s", source_count=2, per_source=2)
    old = [replace(c, workload=replace(c.workload, cuda_graphs=False)) for c in cases[:2]]
    rows = [*old, *cases[2:]]
    engine = [RowResult(c, 1.5, 0.5) for c in old] + [RowResult(c, 1.1, 0.1) for c in cases[2:]]
    naive = [RowResult(c, 3.0, 2.0) for c in rows]
    lines = {g["label"]: g for g in calibrate.by_software_generation(engine, naive)}
    before = lines["decode tokens/s, llama.cpp CUDA builds before CUDA graphs"]
    today = lines["decode tokens/s, without them (today's software)"]
    assert (before["rows"], today["rows"]) == (2, 2)
    assert before["engine"]["median_error"] == pytest.approx(0.5)
    assert today["engine"]["median_error"] == pytest.approx(0.1)


def test_constants_set_on_a_source_come_from_the_other_sources_in_its_own_fold(
    calibrate: types.ModuleType,
) -> None:
    from app.engine import mmvq, prep

    assert {(m, name) for m, name, _, _ in calibrate.ANCHORED} == {
        (mmvq, "MMVQ_ISSUE_EFFICIENCY"),
        (prep, "MLA_KERNEL_SHARE"),
    }
    readings = mmvq.MMVQ_ISSUE_EFFICIENCY_READINGS
    assert len(readings) >= 3
    assert statistics.median(readings.values()) == mmvq.MMVQ_ISSUE_EFFICIENCY

    def current() -> tuple[float, float]:
        return mmvq.MMVQ_ISSUE_EFFICIENCY, prep.MLA_KERNEL_SHARE

    before = current()
    held_out = "github.com/ggml-org/llama.cpp/pull/4766"
    others = [value for source, value in readings.items() if source != held_out]
    with calibrate.without_constants_set_on(held_out) as hit:
        assert hit
        # The median of the other sources' readings; another constant's value stays.
        assert current() == (statistics.median(others), before[1])
        assert current()[0] != before[0]
    assert current() == before
    # A constant read off one source only is neutral in that source's fold.
    with calibrate.without_constants_set_on(
        "github.com/tenstorrent/tt-inference-server/issues/356"
    ) as hit:
        assert hit
        assert current() == (before[0], 1.0)
    assert current() == before
    with calibrate.without_constants_set_on("github.com/ggml-org/llama.cpp/pull/47660") as hit:
        assert not hit
        assert current() == before


def test_value_without_a_source_is_the_median_of_the_others(calibrate: types.ModuleType) -> None:
    readings = {"a": 0.2, "b": 0.3, "c": 0.5}
    assert calibrate.value_without(readings, "a", 9.0) == pytest.approx(0.4)
    assert calibrate.value_without(readings, "c", 9.0) == pytest.approx(0.25)
    assert calibrate.value_without(readings, "z", 9.0) == pytest.approx(0.3)
    assert calibrate.value_without({"a": 0.2}, "a", 9.0) == 9.0

def test_an_overlap_value_is_only_evaluated_where_an_issue_term_exists(
    calibrate: types.ModuleType,
) -> None:
    unit = calibrate.UNITS[0]
    assert "mmvq_overlap" in unit
    values = tuple(0.25 if p == "mmvq_overlap" else 0.5 for p in unit)
    reduced = calibrate.neutral_overlap(unit, values)
    assert reduced[unit.index("mmvq_overlap")] == 0.0
    kept = [v for p, v in zip(unit, reduced, strict=True) if p != "mmvq_overlap"]
    assert kept == [0.5] * (len(unit) - 1)
    # Synthetic rows on an H100-like card: no issue rate, so every overlap reads the same.
    (case, *_) = _cases("decode_tokens_per_s")
    assert not calibrate.issue_bound(case)
