"""A serving row's software generation, read from its stated version or its source's date."""

from sqlalchemy.orm import Session

from app.caching import snapshot
from app.engine.token_budget import release_numbers
from app.services.accuracy import measurement_cases
from app.services.catalog import import_document

from .test_measurements import measurement


def _vllm(slug: str, **changes: object) -> dict[str, object]:
    fields: dict[str, object] = {
        "hardware": {"accelerator": "h100-sxm", "count": 1},
        "runtime": "vllm",
        "precision": "bf16",
    }
    return measurement(slug, **{**fields, **changes})


def test_rows_before_todays_mla_kernels_are_marked_by_version_else_by_source_date(
    session: Session,
) -> None:
    rows = [
        _vllm("t-v074", runtime_version="0.7.4.dev181+gf35f8e22", as_of="2025-09-01"),
        _vllm("t-v011", runtime_version="0.11.0", as_of="2025-03-01"),
        _vllm("t-march", as_of="2025-03-18"),
        _vllm("t-july", as_of="2025-07-10"),
        _vllm("t-sglang-043", runtime="sglang", runtime_version="0.4.3.post2"),
        measurement("t-llama-cpp", as_of="2024-01-01"),
    ]
    assert import_document(session, {"measurements": rows}, actor="t").ok
    cases = measurement_cases(snapshot(session)).cases
    mine = {str(r["slug"]) for r in rows}
    early = {c.slug: c.workload.early_mla_kernels for c in cases if c.slug in mine}
    # A stated version decides (0.7.4 predates vLLM's first release after April 2025 whatever
    # the row's date); without one the source's date bounds the software.
    assert early == {
        "t-v074": True,
        "t-v011": False,
        "t-march": True,
        "t-july": False,
        "t-sglang-043": True,
        "t-llama-cpp": False,  # llama.cpp runs its own kernels
    }


def test_early_vllm_and_sglang_rows_decode_mla_with_triton_unless_the_note_names_another_backend(
    session: Session,
) -> None:
    rows = [
        _vllm("t-triton", runtime_version="0.7.3.dev138+g21f6ca217"),
        _vllm("t-flashmla", runtime_version="0.7.4.dev181+gf35f8e22",
              notes="nightly wheel, VLLM_ATTENTION_BACKEND=FLASHMLA"),
        _vllm("t-today", runtime_version="0.11.0"),
        _vllm("t-sglang-fi", runtime="sglang", runtime_version="0.4.3.post2",
              notes="launched with --enable-flashinfer-mla"),
        _vllm("t-trt", runtime="trt-llm", runtime_version="0.17.0"),
    ]
    assert import_document(session, {"measurements": rows}, actor="t").ok
    cases = measurement_cases(snapshot(session)).cases
    mine = {str(r["slug"]) for r in rows}
    triton = {c.slug: c.workload.triton_mla_decode for c in cases if c.slug in mine}
    assert triton == {
        "t-triton": True,
        "t-flashmla": False,
        "t-today": False,
        "t-sglang-fi": False,
        "t-trt": False,  # TensorRT-LLM's own MLA kernels
    }


def test_release_reads_the_leading_numbers_of_a_version() -> None:
    assert release_numbers("0.7.4.dev181+gf35f8e22") == (0, 7, 4)
    assert release_numbers("0.4.3.post2") == (0, 4, 3)
    assert release_numbers("1.2.0rc1") == (1, 2, 0)
    assert release_numbers("0.17.post1.dev") == (0, 17, 0)
    assert release_numbers("v0.5.7") == (0, 5, 7)
    assert release_numbers("main") is None
