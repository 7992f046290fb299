"""Serving rows as engine inputs: the token budget a run's note or its vLLM release sets, and
the plan of a run that states data-parallel attention."""

import pytest
from sqlalchemy.orm import Session

from app.caching import snapshot
from app.services.accuracy import engine_predictor, measurement_cases
from app.services.catalog import import_document

from .test_measurements import measurement


def _ttft(slug: str, **changes: object) -> dict[str, object]:
    row = {
        "hardware": {"accelerator": "h200-sxm", "count": 8, "intra_node_link": "nvswitch"},
        "model": "deepseek-r1",
        "runtime": "vllm",
        "precision": "fp8",
        "batch": None,
        "concurrency": 32,
        "prompt_tokens": 3200,
        "output_tokens": 800,
        "tensor_parallel": 8,
        "metric": "ttft_s",
        "value": 7.65,
        "unit": "s",
    }
    row.update(changes)
    return measurement(slug, **row)


def test_serving_rows_carry_the_token_budget_their_note_or_release_sets(
    session: Session,
) -> None:
    rows = [
        _ttft("t-today", runtime_version="0.11.0"),
        _ttft("t-unchunked", runtime_version="0.7.4.dev181+gf35f8e22"),
        _ttft("t-32k", runtime_version="0.7.3", notes="Launched with max_model_len=32768."),
        _ttft("t-stated", runtime_version="0.11.0", notes="token_budget=16384 stated."),
        _ttft("t-sglang", runtime="sglang", runtime_version="0.4.3.post2"),
    ]
    assert import_document(session, {"measurements": rows}, actor="t").ok
    by_slug = {c.slug: c for c in measurement_cases(snapshot(session)).cases}
    assert by_slug["t-today"].workload.prefill_token_budget is None
    # DeepSeek-R1's own length, 163,840 tokens (vLLM's default max_model_len).
    assert by_slug["t-unchunked"].workload.prefill_token_budget == 163840
    assert by_slug["t-32k"].workload.prefill_token_budget == 32768
    assert by_slug["t-stated"].workload.prefill_token_budget == 16384
    assert by_slug["t-sglang"].workload.prefill_token_budget is None
    # Without chunked prefill its prefill steps run alone; the others keep the runtime's default.
    assert by_slug["t-unchunked"].workload.mixed_prefill is False
    assert by_slug["t-32k"].workload.mixed_prefill is False
    assert by_slug["t-stated"].workload.mixed_prefill is None


def test_a_run_stating_dp_attention_holds_each_requests_cache_on_one_rank(session: Session) -> None:
    # 128 requests of 3,200 + 6,400 tokens: tensor parallel replicates DeepSeek's MLA cache on
    # all 8 GPUs and queues half of them; data-parallel attention holds them all.
    long = {"runtime": "sglang", "concurrency": 128, "output_tokens": 6400, "value": 31.9}
    rows = [
        _ttft("t-tp", **long),
        _ttft("t-dpa", notes="--enable-dp-attention: dp_attention=on", **long),
    ]
    assert import_document(session, {"measurements": rows}, actor="t").ok
    by_slug = {c.slug: c for c in measurement_cases(snapshot(session)).cases}
    assert not by_slug["t-tp"].data_parallel_attention
    assert by_slug["t-dpa"].data_parallel_attention
    tp, dpa = engine_predictor(by_slug["t-tp"]), engine_predictor(by_slug["t-dpa"])
    assert isinstance(tp, float) and isinstance(dpa, float)
    assert dpa < tp / 3


def test_a_steady_loop_s_first_wave_of_requests_queues_as_a_burst(session: Session) -> None:
    # bench_serving --max-concurrency 32 --request-rate inf: the first 32 requests start
    # together. Of 320, a tenth queue behind each other's prefill; of 32, all of them.
    steady = {"arrival": "steady", "prompt_tokens": 1024, "output_tokens": 1024}
    rows = [
        _ttft("t-unknown", **steady),
        _ttft("t-tenth", requests=320, **steady),
        _ttft("t-all", requests=32, **steady),
        _ttft("t-burst", arrival="burst", prompt_tokens=1024, output_tokens=1024),
    ]
    assert import_document(session, {"measurements": rows}, actor="t").ok
    by_slug = {c.slug: c for c in measurement_cases(snapshot(session)).cases}
    unknown, tenth, every, burst = (
        engine_predictor(by_slug[s]) for s in ("t-unknown", "t-tenth", "t-all", "t-burst")
    )
    assert isinstance(unknown, float) and isinstance(tenth, float) and isinstance(every, float)
    assert isinstance(burst, float)
    assert unknown < tenth < every
    assert every == pytest.approx(burst)
