"""What a measurement's source states about its run that the schema does not record, read from
the row's note: build flags written `name=on|off` next to the quoted words, the software
generation its date implies, and the stated facts that make a figure unpredictable (the row is
then reported under "Not predicted" with the reason, never dropped; docs/engine.md section 9)."""

import re
from datetime import date
from types import MappingProxyType
from typing import TypedDict

from app.engine.token_budget import release_numbers
from app.schemas.measurement import MeasurementIn

# Runtimes with llama.cpp's kernels: there, tensor parallel over several cards means its row split.
LLAMA_CPP_RUNTIMES = ("llama.cpp", "ollama")
# llama.cpp replays a CUDA decode step as one graph since ggml-org/llama.cpp PR #6766 (commit
# bc4bba3, merged 2024-05-08). A run published before that date (`as_of`: the software cannot be
# newer than its source) ran a build that launched every kernel from the host. The flag is the
# date only: today's build on a pre-Ampere card also runs without graphs, and the engine decides
# that from the card (app/engine/graph_capture.py), for rows and product alike.
CUDA_GRAPHS_SINCE = date(2024, 5, 8)
PREFILL = ("prefill_tokens_per_s",)
SPEEDS = ("prefill_tokens_per_s", "decode_tokens_per_s")
FIT = ("out_of_memory",)

# (flag, the value a note states that makes the figure unpredictable, metrics, reason). Flags
# read elsewhere: flash_attention (llama.cpp's score buffer, memory.score_buffer_bytes; default
# on: `-fa auto`); cuda_graphs (off: a build whose CUDA decode ran without graphs although it
# postdates them, the reason stated in the note; default on).
UNPREDICTABLE = (
    # A ROCm build whose prompt GEMMs ran rocBLAS's own kernels (ROCBLAS_USE_HIPBLASLT unset;
    # lhl/strix-halo-testing: a third of the hipBLASLt rate): a library choice (§6).
    (
        "hipblaslt",
        False,
        PREFILL,
        "ROCm run without hipBLASLt is not modelled (stated in the notes)",
    ),
    # A prompt rate quoted without its prompt length (XiongjieDai's 2023 tables, a server log):
    # the rate moves with the length (launch-bound short prompts, attention-bound long ones).
    ("prompt_stated", False, PREFILL, "prefill figure without its prompt length"),
    # ggml_vulkan reports "matrix cores: none" (the driver exposes no cooperative matrices): the
    # prompt GEMMs run on the vector ALUs, at a rate the catalog's matrix fp16_tflops is not.
    (
        "matrix_cores",
        False,
        PREFILL,
        "Vulkan device without matrix cores is not modelled (stated in the notes)",
    ),
    # An out-of-memory its source reports as one release's regression: the same settings on the
    # same machine run on the release before (ollama #11744: 0.11.2 runs, 0.11.3 does not). The
    # engine sizes what a model needs, not one release's allocator bug; the run that fits stays
    # predicted.
    (
        "release_regression",
        True,
        FIT,
        "an out-of-memory reported as one release's regression (the release before runs it) "
        "is not modelled",
    ),
    # The first timed call of a benchmark whose warm-up was smaller: llama-batched-bench warms
    # up on 16 tokens, so its first 512-token prompt pays the one-off costs of that size (the
    # B=1 row of the DGX Spark tables takes longer than the B=2 row's twice as many tokens).
    (
        "first_timed_call",
        True,
        PREFILL,
        "a benchmark's first timed call after a smaller warm-up is not a steady-state rate",
    ),
    # A model larger than the card, run through the Windows driver's shared-memory fallback.
    (
        "sysmem_fallback",
        True,
        SPEEDS,
        "a model larger than the card run from shared system memory is not modelled",
    ),
)


def stated_flag(record: MeasurementIn, name: str, default: bool) -> bool:
    """A build flag as the row's note states it (`name=on|off`), else `default`."""
    found = re.search(rf"\b{name}=(on|off)\b", record.notes)
    return default if found is None else found.group(1) == "on"


def stated_tokens(record: MeasurementIn, name: str) -> int | None:
    """A runtime's token setting as the row's note states it (`name=N`, e.g. the launch
    command's `--max-model-len 32768` written `max_model_len=32768`), else None."""
    found = re.search(rf"\b{name}=(\d+)\b", record.notes)
    return None if found is None else int(found.group(1))


def stated_ubatch(record: MeasurementIn) -> int | None:
    """llama.cpp's physical batch as the row's note quotes its run (`n_ubatch 2048`), else None."""
    found = re.search(r"\bn_ubatch[ =](\d+)\b", record.notes)
    return None if found is None else int(found.group(1))


def one_sequence_micro_batch(record: MeasurementIn) -> bool:
    """A llama.cpp decode row read off llama-bench's prompt run at micro-batch N (the note's
    "micro-batch N"): each pass runs N consecutive tokens of its one sequence, which share that
    sequence's KV cache, not one token of each of N sequences."""
    return (
        record.metric == "decode_tokens_per_s"
        and record.runtime in LLAMA_CPP_RUNTIMES
        and re.search(r"\bmicro-batch \d+", record.notes) is not None
    )


def unpredictable(record: MeasurementIn) -> str | None:
    """Why the row's own note makes its figure unpredictable (None: it does not)."""
    for flag, value, metrics, reason in UNPREDICTABLE:
        if record.metric in metrics and stated_flag(record, flag, not value) == value:
            return reason
    return None


# vLLM, SGLang and TensorRT-LLM took up today's MLA decode and block-FP8 kernels in spring 2025
# (mla_kernels.MLA_KERNEL_SHARE; SGLang made FA3 MLA its Hopper default in PR #5210, 2025-04-09,
# released in v0.4.5). A run is from before when its stated version predates each runtime's first
# release after 2025-04-01, or, with no version, when its source does (`as_of`: the software
# cannot be newer than its source).
MLA_KERNELS_SINCE = date(2025, 4, 1)
FIRST_MLA_KERNEL_RELEASE = MappingProxyType(
    {"sglang": (0, 4, 5), "vllm": (0, 8, 3), "trt-llm": (0, 18, 0)}
)


def before_mla_kernels(record: MeasurementIn) -> bool:
    """A vLLM / SGLang / TensorRT-LLM run from before today's MLA kernels (docs/engine.md 5)."""
    first = FIRST_MLA_KERNEL_RELEASE.get(record.runtime)
    if first is None:
        return False
    stated = release_numbers(record.runtime_version) if record.runtime_version else None
    if stated is not None:
        return stated < first
    return record.as_of < MLA_KERNELS_SINCE


# vLLM and SGLang builds from before today's MLA kernels decoded MLA with the Triton kernel
# (vLLM's TRITON_MLA, SGLang's default; the ROCm builds of both) unless the run names another
# backend: vLLM's FlashMLA nightly (VLLM_ATTENTION_BACKEND=FLASHMLA, 2025-02-27), SGLang's
# --enable-flashinfer-mla (v0.4.3) or --enable-flashmla (v0.4.4).
TRITON_MLA_RUNTIMES = frozenset({"vllm", "sglang"})
OTHER_MLA_BACKEND = re.compile(
    r"ATTENTION_BACKEND=FLASHMLA|--enable-flashinfer-mla|--enable-flashmla", re.IGNORECASE
)


def triton_mla_decode(record: MeasurementIn) -> bool:
    """The run's MLA decode attention ran the early Triton kernel (docs/engine.md 5)."""
    return (
        record.runtime in TRITON_MLA_RUNTIMES
        and before_mla_kernels(record)
        and OTHER_MLA_BACKEND.search(record.notes) is None
    )


class MlaKernelFlags(TypedDict):
    early_mla_kernels: bool
    triton_mla_decode: bool


def mla_kernel_flags(record: MeasurementIn) -> MlaKernelFlags:
    """The Workload's MLA kernel fields for the run: early_mla_kernels, triton_mla_decode."""
    return {
        "early_mla_kernels": before_mla_kernels(record),
        "triton_mla_decode": triton_mla_decode(record),
    }


# ggml-cuda's kernels, compiled by nvcc (the CUDA backend) or by hipcc (ROCm: ggml-hip builds the
# same ggml-cuda sources): before CUDA_GRAPHS_SINCE neither build captured a decode step as a graph.
GGML_CUDA_BACKENDS = ("cuda", "rocm")


def before_cuda_graphs(record: MeasurementIn) -> bool:
    """A llama.cpp run on ggml-cuda's kernels (CUDA or its HIP build, ROCm) whose source predates
    CUDA graphs (docs/engine.md section 5): no build of them had graphs yet."""
    return (
        record.runtime in LLAMA_CPP_RUNTIMES
        and record.backend in GGML_CUDA_BACKENDS
        and record.as_of < CUDA_GRAPHS_SINCE
    )
