"""Prefill rows of the catalog as engine inputs: context depth, kernel backend, CPU-only runs."""

from sqlalchemy.orm import Session

from app.caching import snapshot
from app.engine import estimate
from app.services.accuracy import measurement_cases
from app.services.catalog import import_document

from .test_measurements import measurement


def _prefill(slug: str, **changes: object) -> dict[str, object]:
    return measurement(
        slug,
        metric="prefill_tokens_per_s",
        prompt_tokens=2048,
        output_tokens=0,
        value=5000.0,
        **changes,
    )


def test_prefill_rows_carry_their_depth_and_backend_and_cpu_runs_are_not_predicted(
    session: Session,
) -> None:
    rows = [
        _prefill("t-pp"),
        _prefill("t-pp-d8192", context_depth_tokens=8192),
        _prefill("t-pp-vulkan", backend="vulkan"),
        _prefill("t-pp-cpu", backend="cpu"),
    ]
    assert import_document(session, {"measurements": rows}, actor="t").ok
    cases = measurement_cases(snapshot(session))
    by_slug = {c.slug: c for c in cases.cases}
    assert by_slug["t-pp"].workload.prefill_depth_tokens == 0
    deep = by_slug["t-pp-d8192"]
    assert deep.workload.prefill_depth_tokens == 8192
    assert deep.workload.context_tokens == 8192 + 2048
    assert by_slug["t-pp-vulkan"].workload.backend == "vulkan"
    assert by_slug["t-pp"].workload.backend is None
    assert "CPU backend" in {s.slug: s.reason for s in cases.skipped}["t-pp-cpu"]
    # The same prompt after 8,192 cached tokens attends to them too: a slower prefill.
    fresh = by_slug["t-pp"]
    speeds = [
        estimate(c.build, c.model, c.workload).throughput.prefill_tokens_per_s
        for c in (fresh, deep)
    ]
    assert speeds[1] < speeds[0]


def test_a_rocm_prefill_stated_without_hipblaslt_is_not_predicted(session: Session) -> None:
    note = "hipblaslt column blank: rocBLAS without hipBLASLt (hipblaslt=off)."
    rows = [
        _prefill("t-pp-rocblas", backend="rocm", notes=note),
        _prefill("t-pp-hblt", backend="rocm", notes="hipblaslt=on"),
        measurement("t-tg-rocblas", backend="rocm", notes=note),  # decode runs GEMVs: kept
    ]
    assert import_document(session, {"measurements": rows}, actor="t").ok
    cases = measurement_cases(snapshot(session))
    skipped = {s.slug: s.reason for s in cases.skipped}
    assert "hipBLASLt" in skipped["t-pp-rocblas"]
    assert {c.slug for c in cases.cases} >= {"t-pp-hblt", "t-tg-rocblas"}


def test_a_first_timed_call_after_a_smaller_warm_up_is_not_predicted(session: Session) -> None:
    # llama-batched-bench warms up on 16 tokens: its first 512-token prompt is not steady state.
    rows = [
        _prefill("t-pp-first", notes="PP=512 B=1, the table's first call: first_timed_call=on."),
        _prefill("t-pp-later", notes="PP=512 B=2."),
    ]
    assert import_document(session, {"measurements": rows}, actor="t").ok
    cases = measurement_cases(snapshot(session))
    assert "first timed call" in {s.slug: s.reason for s in cases.skipped}["t-pp-first"]
    assert "t-pp-later" in {c.slug for c in cases.cases}


def test_a_stated_n_ubatch_reaches_the_prefill_workload(session: Session) -> None:
    rows = [
        _prefill("t-pp-ub", notes="llama-bench -ngl 99, n_ubatch 2048, fa 1, test 'pp2048'."),
        _prefill("t-pp-default"),
    ]
    assert import_document(session, {"measurements": rows}, actor="t").ok
    cases = {c.slug: c for c in measurement_cases(snapshot(session)).cases}
    assert cases["t-pp-ub"].workload.prefill_token_budget == 2048
    assert cases["t-pp-default"].workload.prefill_token_budget is None


def test_a_llama_bench_micro_batch_row_decodes_tokens_of_one_sequence(session: Session) -> None:
    rows = [
        measurement("t-ub2", batch=2, notes="pp512@d32768 micro-batch 2, aggregate"),
        measurement("t-b2", batch=2, notes="two parallel sequences"),
    ]
    assert import_document(session, {"measurements": rows}, actor="t").ok
    cases = {c.slug: c for c in measurement_cases(snapshot(session)).cases}
    assert cases["t-ub2"].workload.decode_sequences == 1
    assert cases["t-b2"].workload.decode_sequences is None
