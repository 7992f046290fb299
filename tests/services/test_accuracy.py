"""The accuracy machinery: engine inputs from measurements, predictors, errors and groups."""

from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest
from sqlalchemy.orm import Session

from app.caching import snapshot
from app.engine import AcceleratorSpec, BuildSpec, Workload, model_spec_from_hf_config
from app.services.accuracy import (
    Case,
    Group,
    accuracy_notes_for_build,
    accuracy_notes_for_estimate,
    accuracy_report,
    canonical_source,
    cross_validate_by_source,
    device_class,
    engine_predictor,
    estimate_for,
    evaluate,
    measurement_cases,
    roofline_predictor,
    summarize,
)
from app.services.catalog import import_document
from app.services.estimates import parse_estimate_request

from ..engine.shapes import GPT_OSS_120B
from .test_measurements import measurement

LLAMA_CONFIG = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
}


def _case(
    metric: str = "decode_tokens_per_s", measured: float | bool = 100.0, **kw: object
) -> Case:
    card = AcceleratorSpec("card", 24, 1000.0, 100.0)
    build = BuildSpec("2x card", card, accelerators_per_node=2)
    model = model_spec_from_hf_config(
        LLAMA_CONFIG,
        name="m",
        params_total_published=8_000_000_000,
        params_active_published=8_000_000_000,
    )
    workload = Workload(precision="fp16", runtime="llama.cpp", prompt_tokens=1000, **kw)  # type: ignore[arg-type]
    return Case(
        slug="c",
        source_url="https://example.com/a",
        source_title=None,
        group=Group(metric, "llama.cpp", "discrete GDDR"),
        measured=measured,
        build=build,
        model=model,
        workload=workload,
        output_tokens=100,
        label="m on card",
    )


@pytest.mark.parametrize(
    ("memory_kind", "vendor", "memory_type", "expected"),
    [
        ("discrete", "NVIDIA", "GDDR6X", "discrete GDDR"),
        ("discrete", "NVIDIA", "HBM3e", "HBM datacenter"),
        ("hbm", "AMD", None, "HBM datacenter"),
        ("gddr", "AMD", None, "discrete GDDR"),
        ("unified", "Apple", "LPDDR5", "Apple unified"),
        ("unified", "NVIDIA", "LPDDR5X", "CUDA/ROCm unified"),
    ],
)
def test_device_class(
    memory_kind: str, vendor: str, memory_type: str | None, expected: str
) -> None:
    assert device_class(memory_kind=memory_kind, vendor=vendor, memory_type=memory_type) == expected


def test_roofline_decode_is_bandwidth_over_active_weight_bytes() -> None:
    # 2 cards x 1000 GB/s over 8e9 weights x 2 bytes = 125 tokens/s, x batch 4.
    assert roofline_predictor(_case()) == pytest.approx(125.0)
    assert roofline_predictor(_case(batch=4)) == pytest.approx(500.0)


def test_roofline_counts_experts_at_their_own_bits() -> None:
    # mxfp4-f16: a dense model is all 16-bit; a MoE model's active experts are read at 4.25 bits.
    moe = model_spec_from_hf_config(GPT_OSS_120B, name="gpt-oss-120b")

    def decode(precision: str, model: str = "dense") -> float:
        case = _case()
        case = replace(case, workload=replace(case.workload, precision=precision))
        if model == "moe":
            case = replace(case, model=moe)
        return float(roofline_predictor(case))

    assert decode("mxfp4-f16") == pytest.approx(decode("fp16"))
    assert decode("fp16", "moe") < decode("mxfp4-f16", "moe") < decode("mxfp4", "moe")


def test_roofline_prefill_is_dense_flops_over_twice_the_active_params() -> None:
    # 2 cards x 100 TFLOPS / (2 x 8e9) = 12,500 tokens/s.
    assert roofline_predictor(_case("prefill_tokens_per_s")) == pytest.approx(12_500.0)


def test_roofline_fit_compares_weights_with_total_memory() -> None:
    # 16 GB of FP16 weights in 48 GB: no out-of-memory.
    assert roofline_predictor(_case("out_of_memory", measured=False)) is False


def test_a_serving_run_beyond_the_kv_cache_is_predicted_with_a_queue() -> None:
    crowded = _case("e2e_latency_s", measured=10.0, batch=4096, context_tokens=8192)
    assert not estimate_for(crowded.build, crowded.model, crowded.workload).fits
    queued = engine_predictor(crowded)
    assert isinstance(queued, float) and queued > 0
    # Twice the requests in flight: about twice the time in the system (the batch that fits
    # is re-read at each size, so not exactly).
    twice = engine_predictor(replace(crowded, workload=replace(crowded.workload, batch=8192)))
    assert isinstance(twice, float) and 1.8 * queued < twice < 2.2 * queued


def test_evaluate_takes_any_predictor_and_reports_relative_error() -> None:
    cases = [_case(measured=100.0), _case(measured=200.0)]
    results = evaluate(cases, lambda case: 1.1 * float(case.measured))
    assert [r.error for r in results] == [pytest.approx(0.1), pytest.approx(0.1)]
    missing = evaluate(cases[:1], lambda case: None)
    assert missing[0].error == 1.0 and missing[0].note


def test_summaries_set_the_engine_beside_the_roofline_per_group() -> None:
    cases = [_case(measured=m) for m in (100.0, 100.0, 100.0)] + [
        _case("out_of_memory", measured=True)
    ]
    close = evaluate(cases, lambda c: True if isinstance(c.measured, bool) else 105.0)
    far = evaluate(cases, lambda c: False if isinstance(c.measured, bool) else 200.0)
    table = {s.group.metric: s for s in summarize(close, far)}
    decode = table["decode_tokens_per_s"]
    assert decode.engine.rows == 3 and decode.engine.median == pytest.approx(0.05)
    assert decode.roofline.median == pytest.approx(1.0) and decode.engine_better
    fit = table["out_of_memory"]
    assert (fit.fit_agreeing, fit.roofline_fit_agreeing, fit.engine_better) == (1, 0, True)


def test_engine_predictor_runs_the_engine_for_the_case() -> None:
    decode = engine_predictor(_case())
    assert isinstance(decode, float) and 0 < decode < roofline_predictor(_case())


def test_catalog_measurements_become_cases_or_say_why_not(session: Session) -> None:
    mixed = measurement(
        "t-mixed",
        hardware={
            "count": 2,
            "groups": [
                {"accelerator": "rtx-3090", "count": 1},
                {"accelerator": "rtx-4090", "count": 1},
            ],
        },
    )
    assert import_document(session, {"measurements": [measurement(), mixed]}, actor="t").ok
    cases = measurement_cases(snapshot(session))
    assert "t-decode" in {c.slug for c in cases.cases}
    # Mixed cards are evaluated since issue 14, in their own report group.
    by_slug = {c.slug: c for c in cases.cases}
    assert by_slug["t-mixed"].group.device_class == "mixed cards"
    assert by_slug["t-mixed"].build.is_mixed


def test_offload_rows_carry_their_published_placement_and_group(session: Session) -> None:
    host = {"cpu": "Core i9-10900X", "ram_gb": 62, "ram_bandwidth_gbs": 93.9}
    offloaded = measurement(
        "t-ncmoe",
        hardware={"accelerator": "rtx-4090", "count": 1, "host": host},
        offload={"ngl": 99, "n_cpu_moe": 20},
    )
    by_ot = measurement(
        "t-ot",
        hardware={"accelerator": "rtx-4090", "count": 1, "host": host},
        offload={"ngl": 37, "ot_expert_layers_on_cpu": 31, "ot": "blk.5-35 exps=CPU"},
    )
    assert import_document(session, {"measurements": [offloaded, by_ot]}, actor="t").ok
    by_slug = {c.slug: c for c in measurement_cases(snapshot(session)).cases}
    work = by_slug["t-ncmoe"].workload
    assert (work.gpu_layers, work.cpu_moe_layers) == (99, 20)
    by_rule = by_slug["t-ot"].workload
    assert (by_rule.gpu_layers, by_rule.cpu_moe_layers) == (37, 31)
    assert by_slug["t-ncmoe"].group.device_class == "CPU offload"


def test_llama_cpp_row_split_speeds_are_skipped_and_its_fit_facts_kept(session: Session) -> None:
    two_cards = {"accelerator": "rtx-3090", "count": 2}
    row_split = measurement("t-row-split", hardware=two_cards, tensor_parallel=2)
    fit_fact = measurement(
        "t-row-split-fit",
        hardware=two_cards,
        tensor_parallel=2,
        metric="out_of_memory",
        value=False,
        unit="bool",
    )
    documents = {"measurements": [row_split, fit_fact]}
    assert import_document(session, documents, actor="t").ok
    cases = measurement_cases(snapshot(session))
    skipped = {s.slug: s.reason for s in cases.skipped}
    assert "row split" in skipped["t-row-split"]
    fit = next(c for c in cases.cases if c.slug == "t-row-split-fit")
    assert fit.workload.tensor_parallel is None  # weights per card are the same in both modes


def test_expert_parallel_runs_are_not_predicted_as_tensor_parallel(session: Session) -> None:
    # TensorRT-LLM's MoE recipe (--tp 2 --ep N, enable_attention_dp): its --tp is not a
    # tensor-parallel all-reduce plan, so the row is not evaluated as one.
    two_cards = {"accelerator": "rtx-3090", "count": 2}
    ep = measurement("t-ep", hardware=two_cards, runtime="vllm", tensor_parallel=2,
                     expert_parallel=True)
    tp = measurement("t-tp", hardware=two_cards, runtime="vllm", tensor_parallel=2)
    assert import_document(session, {"measurements": [ep, tp]}, actor="t").ok
    cases = measurement_cases(snapshot(session))
    assert "expert parallel" in {s.slug: s.reason for s in cases.skipped}["t-ep"]
    assert "t-tp" in {c.slug for c in cases.cases}


def test_runs_on_the_cpu_are_not_predicted(session: Session) -> None:
    # A cell labelled "(CPU)": the model did not fit the GPU and ran on the CPU cores.
    on_cpu = measurement("t-cpu", backend="cpu")
    on_gpu = measurement("t-gpu", backend="cuda")
    assert import_document(session, {"measurements": [on_cpu, on_gpu]}, actor="t").ok
    cases = measurement_cases(snapshot(session))
    assert "CPU backend is not modelled" in {s.slug: s.reason for s in cases.skipped}["t-cpu"]
    assert "t-gpu" in {c.slug for c in cases.cases}



def test_an_oom_reported_as_a_release_regression_is_not_predicted(session: Session) -> None:
    # ollama #11744: the same settings run on 0.11.2 and run out of memory on 0.11.3.
    fact = {"metric": "out_of_memory", "unit": "bool", "output_tokens": 0}
    regression = measurement(
        "t-oom-0113", value=True, notes="release_regression=on", runtime="ollama", **fact
    )
    runs = measurement("t-fits-0112", value=False, runtime="ollama", **fact)
    speed = measurement("t-tg", notes="release_regression=on")  # a speed is not an OOM fact
    rows = [regression, runs, speed]
    assert import_document(session, {"measurements": rows}, actor="t").ok
    cases = measurement_cases(snapshot(session))
    assert "regression" in {s.slug: s.reason for s in cases.skipped}["t-oom-0113"]
    assert {c.slug for c in cases.cases} >= {"t-fits-0112", "t-tg"}

def test_the_report_follows_an_import(session: Session) -> None:
    before = accuracy_report(snapshot(session))
    session.commit()
    far_off = measurement("t-far", value=1.0)  # a 1 tokens/s decode: a huge miss
    assert import_document(session, {"measurements": [far_off]}, actor="t").ok
    after = accuracy_report(snapshot(session))
    assert after["measurements"] == before["measurements"] + 1
    assert after["worst_misses"][0]["slug"] == "t-far"


def test_build_notes_quote_the_groups_of_its_device_class(session: Session) -> None:
    # One RTX 4090 with its host RAM stated: discrete GDDR, and CPU offload for what spills.
    snap = snapshot(session)
    notes = accuracy_notes_for_build(snap, slug="1x-rtx-4090-desktop")
    groups = [
        g
        for g in accuracy_report(snap)["groups"]
        if g["device_class"] in ("discrete GDDR", "CPU offload") and g["metric"] != "out_of_memory"
    ]
    assert len(notes) == len(groups) > 0
    assert all(
        "discrete GDDR: median error" in note or "CPU offload: median error" in note
        for note in notes
    )
    assert any("CPU offload: median error" in note for note in notes)
    assert accuracy_notes_for_build(snap, slug="no-such-build") == []


def test_estimate_notes_quote_the_offload_and_mixed_groups_the_answer_falls_in(
    session: Session,
) -> None:
    snap = snapshot(session)
    host = {"ram_gb": 128, "ram_channels": 2, "ram_speed_mts": 5200}
    offload = parse_estimate_request(
        {
            "build": {"name": "4090", "accelerators": [{"accelerator": "rtx-4090", "count": 1}],
                      "host": host},
            "model": "gpt-oss-120b",
            "workload": {"precision": "mxfp4"},
        }
    )
    # The request leaves the runtime open; the answer ran llama.cpp with experts in RAM.
    notes = accuracy_notes_for_estimate(snap, offload, runtime="llama.cpp", offloaded=True)
    assert notes and all("llama.cpp on CPU offload" in note for note in notes)
    mixed = parse_estimate_request(
        {
            "build": {"name": "3090 + 4090", "host": host, "accelerators": [
                {"accelerator": "rtx-3090", "count": 1}, {"accelerator": "rtx-4090", "count": 1}]},
            "model": "llama-3-3-70b",
            "workload": {"precision": "q4_k_m", "runtime": "llama.cpp"},
        }
    )
    notes = accuracy_notes_for_estimate(snap, mixed, runtime="llama.cpp")
    assert notes and all("llama.cpp on mixed cards" in note for note in notes)


def test_leave_one_source_out_never_fits_on_the_held_out_source() -> None:
    def at(source: str, measured: float) -> Case:
        return replace(_case(measured=measured), source_url=source, slug=f"{source}-{measured}")

    cases = [
        at("https://a.example", 100.0),
        at("https://a.example", 100.0),
        at("https://b.example", 300.0),
    ]

    def fit(training: Sequence[Case]) -> Callable[[Case], float]:
        mean = sum(float(c.measured) for c in training) / len(training)
        return lambda case: mean

    results = cross_validate_by_source(cases, fit)
    assert [r.case.slug for r in results] == [c.slug for c in cases]
    # Source a is predicted from b alone (300), b from a alone (100).
    assert [r.predicted for r in results] == [300.0, 300.0, 100.0]
    assert results[2].error == pytest.approx(2 / 3)


def test_a_note_and_the_source_date_set_flash_attention_and_cuda_graphs(session: Session) -> None:
    # A 2024 llama-bench run whose note says it had no flash attention, and whose source
    # predates llama.cpp's CUDA graphs (2024-05-08); a 2025 run with no such note.
    old = measurement(
        "t-old", backend="cuda", as_of="2024-01-10", notes="flash_attention=off, no -fa given."
    )
    new = measurement("t-new", backend="cuda", as_of="2025-08-01")
    metal = measurement("t-metal", backend="metal", as_of="2024-01-10")
    # ROCm runs ggml-cuda's kernels built by hipcc: no build of them had graphs before the date.
    rocm = measurement("t-rocm", backend="rocm", as_of="2024-03-04")
    rocm_new = measurement("t-rocm-new", backend="rocm", as_of="2025-08-01")
    rows = [old, new, metal, rocm, rocm_new]
    assert import_document(session, {"measurements": rows}, actor="t").ok
    cases = {c.slug: c for c in measurement_cases(snapshot(session)).cases}
    assert not cases["t-old"].workload.flash_attention
    assert not cases["t-old"].workload.cuda_graphs
    assert cases["t-new"].workload.flash_attention and cases["t-new"].workload.cuda_graphs
    assert cases["t-metal"].workload.cuda_graphs  # CUDA graphs are a ggml-cuda matter
    assert not cases["t-rocm"].workload.cuda_graphs
    assert cases["t-rocm-new"].workload.cuda_graphs


def test_a_note_can_state_that_a_graph_era_build_ran_without_cuda_graphs(session: Session) -> None:
    # A 2026 run whose note says ggml-cuda refused to capture its graph (Qwen3-Next's unfused
    # delta rule): the engine then prices every kernel's launch from the host.
    refused = measurement(
        "t-refused", backend="cuda", as_of="2026-02-05", notes="cuda_graphs=off: state ADD."
    )
    assert import_document(session, {"measurements": [refused]}, actor="t").ok
    (case,) = [c for c in measurement_cases(snapshot(session)).cases if c.slug == "t-refused"]
    assert not case.workload.cuda_graphs


AMD_PAGE = "https://www.amd.com/{}/developer/resources/rocm-hub/dev-ai/performance-results.html"
BLOB = "https://github.com/NVIDIA/TensorRT-LLM/blob/{}/docs/source/performance/perf-overview.md"


def test_one_document_is_one_source_whatever_its_locale_or_commit() -> None:
    locales = {canonical_source(AMD_PAGE.format(tag)) for tag in ("en", "fr", "ja", "zh-cn")}
    assert len(locales) == 1
    commits = {
        canonical_source(BLOB.format("00f37686aa854010d68bcbd0f4ab000221541ca6")),
        canonical_source(BLOB.format("main")),
        canonical_source(
            "https://raw.githubusercontent.com/NVIDIA/TensorRT-LLM/"
            "0123456789abcdef0123456789abcdef01234567/docs/source/performance/perf-overview.md"
        ),
    }
    assert len(commits) == 1
    # Different documents stay apart: another file, another page, another repository whose
    # owner happens to look like a language code, another query.
    assert canonical_source(BLOB.format("main")) != canonical_source(
        BLOB.format("main").replace("perf-overview", "perf-analysis")
    )
    assert canonical_source(AMD_PAGE.format("en")) != canonical_source(
        "https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html"
    )
    assert canonical_source("https://github.com/ab/x/issues/1") != canonical_source(
        "https://github.com/cd/x/issues/1"
    )
    assert canonical_source("https://e.example/p?id=1") != canonical_source(
        "https://e.example/p?id=2"
    )


def test_leave_one_source_out_holds_out_every_locale_of_a_page_together() -> None:
    def at(source: str, measured: float) -> Case:
        return replace(_case(measured=measured), source_url=source, slug=f"{source}-{measured}")

    cases = [
        at(AMD_PAGE.format("en"), 100.0),
        at(AMD_PAGE.format("ja"), 100.0),
        at("https://b.example/run", 300.0),
    ]
    held_out_with: list[set[str]] = []

    def fit(training: Sequence[Case]) -> Callable[[Case], float]:
        held_out_with.append({c.source_url for c in training})
        mean = sum(float(c.measured) for c in training) / len(training)
        return lambda case: mean

    results = cross_validate_by_source(cases, fit)
    # Two folds (the AMD page, b), not three: the ja copy never trains the en rows' fold.
    assert len(held_out_with) == 2
    assert [r.predicted for r in results] == [300.0, 300.0, 100.0]
    # The rows keep their own addresses.
    assert [r.case.source_url for r in results] == [c.source_url for c in cases]


def test_a_capped_run_must_hold_its_requests_at_their_whole_length() -> None:
    # Quoted at the mean KV length (1,000 + 4,000 of 8,000 answer tokens): the largest batch
    # that fits there does not fit once every request of the wave reaches 9,000 tokens.
    probe = _case("e2e_latency_s", measured=10.0, context_tokens=5000)
    top = estimate_for(probe.build, probe.model, probe.workload).max_batch_that_fits
    assert top is not None and top > 2
    uncapped = replace(probe, workload=replace(probe.workload, batch=top), output_tokens=8000)
    whole = replace(uncapped.workload, context_tokens=9000)
    assert not estimate_for(uncapped.build, uncapped.model, whole).fits
    capped = replace(uncapped, concurrency=top)
    waited, alone = engine_predictor(capped), engine_predictor(uncapped)
    assert isinstance(waited, float) and isinstance(alone, float)
    assert waited > 1.2 * alone  # the requests beyond what fits wait for slots
