"""Issue 12: llama.cpp's CUDA batch-1 quantized mat-vec (MMVQ) issues a format-dependent number
of instructions per weight; on low-bit K-quants that issue time, not the weight bytes, sets the
decode step where the card issues few instructions per byte of bandwidth (Tesla P40, RTX 3090)."""

from __future__ import annotations

import pytest

from app.engine import RUNTIMES, AcceleratorSpec, BuildSpec, Workload, estimate
from app.engine.efficiency import Efficiency
from app.engine.mmvq import (
    MMVQ_ISSUE_EFFICIENCY,
    MMVQ_MAX_BATCH,
    cuda_issue_rate,
    mmvq_ops_per_byte,
    mmvq_s_per_byte,
)
from app.engine.precision import PRECISIONS
from app.engine.prepared import prepare
from app.engine.speed import DecodeModel

from .shapes import H100, LLAMA_3_8B, M2_ULTRA, P40

RTX3090 = AcceleratorSpec("NVIDIA GeForce RTX 3090", 24, 936.2, 71, vendor="NVIDIA")
RTX4090 = AcceleratorSpec("NVIDIA GeForce RTX 4090", 24, 1008, 165.2, vendor="NVIDIA")
RX7900 = AcceleratorSpec("AMD Radeon RX 7900 XTX", 24, 960, 122.8, vendor="AMD")
LLAMA = RUNTIMES["llama.cpp"]


def _decode(acc: AcceleratorSpec, precision: str, **kw: object):
    w = Workload(precision=precision, runtime="llama.cpp", context_tokens=128, **kw)
    return estimate(BuildSpec("one", acc), LLAMA_3_8B, w).throughput


def test_low_bit_k_quants_cost_the_most_operations_per_byte():
    per_byte = {n: mmvq_ops_per_byte(PRECISIONS[n])[0] for n in PRECISIONS}
    assert per_byte["q3_k_s"] > per_byte["q2_k"] > per_byte["q6_k"] > per_byte["q4_k_m"]
    assert per_byte["q4_k_m"] > per_byte["q4_0"] > per_byte["q8_0"] > 0
    # Q2_K: 82 operations per 16 weights, 84 bytes per 256 weights.
    assert per_byte["q2_k"] == pytest.approx(82 / 16 * 256 / 84)
    # 16-bit weights run ggml's float mat-vec, not MMVQ; gpt-oss "F16" only for its experts.
    assert per_byte["fp16"] == per_byte["bf16"] == per_byte["int4"] == 0
    assert mmvq_ops_per_byte(PRECISIONS["mxfp4-f16"])[0] == 0
    assert mmvq_ops_per_byte(PRECISIONS["mxfp4-f16"])[1] > 0


def test_issue_rate_comes_from_the_dp4a_or_geforce_fp16_figure_only():
    assert cuda_issue_rate(P40) == pytest.approx(47e12 / 8)  # 30 SMs x 1.53 GHz x 128
    assert cuda_issue_rate(RTX3090) == pytest.approx(71e12 / 4)  # 82 SMs x 1.695 GHz x 128
    # Datacenter, Apple and AMD figures are no fixed multiple of SMs x clock: no term.
    for acc in (H100, M2_ULTRA, RX7900):
        assert cuda_issue_rate(acc) is None


def test_the_issue_term_applies_to_llama_cpp_cuda_only():
    build = BuildSpec("p40", P40)
    q2k = PRECISIONS["q2_k"]
    cuda = mmvq_s_per_byte(LLAMA, build, q2k, Workload(precision="q2_k", runtime="llama.cpp"))
    per_op = 1.0 / (47e12 / 8 * MMVQ_ISSUE_EFFICIENCY)
    assert cuda == (pytest.approx(mmvq_ops_per_byte(q2k)[0] * per_op),) * 2
    vulkan = Workload(precision="q2_k", runtime="llama.cpp", backend="vulkan")
    assert mmvq_s_per_byte(LLAMA, build, q2k, vulkan) == (0.0, 0.0)
    vllm = Workload(precision="q2_k", runtime="vllm")
    assert mmvq_s_per_byte(RUNTIMES["vllm"], build, q2k, vllm) == (0.0, 0.0)


def test_q2_k_decodes_slower_than_q4_0_on_a_p40_but_faster_on_an_rtx_4090():
    p40_q2k, p40_q40 = _decode(P40, "q2_k"), _decode(P40, "q4_0")
    assert p40_q2k.decode_compute_s > p40_q2k.decode_memory_s
    assert p40_q2k.bottleneck == "compute"
    assert p40_q2k.decode_tokens_per_s < p40_q40.decode_tokens_per_s
    assert p40_q40.decode_memory_s > p40_q40.decode_compute_s  # Q4_0 stays memory-bound
    # 2.4x the issue slots per byte of bandwidth: issue and bytes nearly balance, so Q2_K's
    # fewer bytes make it the faster format again.
    fast_q2k, fast_q40 = _decode(RTX4090, "q2_k"), _decode(RTX4090, "q4_0")
    fast_ratio = fast_q2k.decode_compute_s / fast_q2k.decode_memory_s
    assert p40_q2k.decode_compute_s / p40_q2k.decode_memory_s > 2.0 * fast_ratio
    assert fast_q2k.decode_tokens_per_s > fast_q40.decode_tokens_per_s


def test_beyond_mmvq_batch_sizes_the_issue_term_is_gone():
    w = Workload(precision="q3_k_s", runtime="llama.cpp", context_tokens=128)
    build = BuildSpec("p40", P40)
    dm = DecodeModel(prepare(build, LLAMA_3_8B, w), LLAMA_3_8B, build, w, 1, 1)
    _, mmvq_comp, _, _ = dm.parts(MMVQ_MAX_BATCH)
    _, mmq_comp, _, _ = dm.parts(MMVQ_MAX_BATCH + 1)
    flops_only = (MMVQ_MAX_BATCH + 1) * dm.flops_per_token / dm.flops
    assert mmq_comp == pytest.approx(flops_only)
    assert mmvq_comp > mmq_comp  # MMVQ's issue time exceeds the FLOPs of one more column


def test_the_issue_share_is_the_median_of_its_sources_readings():
    # Each source's reading is the median of the values its rows need; the constant is the
    # median over sources, so no single source sets it (calibrate.ANCHORED folds use the others).
    from statistics import median

    from app.engine.mmvq import MMVQ_ISSUE_EFFICIENCY_READINGS

    readings = MMVQ_ISSUE_EFFICIENCY_READINGS
    assert len(readings) >= 3
    assert median(readings.values()) == MMVQ_ISSUE_EFFICIENCY
    assert min(readings.values()) < MMVQ_ISSUE_EFFICIENCY < max(readings.values())
    assert all(0.0 < value < 1.0 for value in readings.values())

def test_volta_and_turing_workstation_cards_issue_at_an_eighth_of_their_tensor_rate():
    # Full-rate FP16 tensor cores: 1,024 FLOP per SM per clock against 128 issue lanes.
    rtx8000 = AcceleratorSpec("NVIDIA Quadro RTX 8000", 48, 672, 130.5, vendor="NVIDIA")
    v100 = AcceleratorSpec("NVIDIA Tesla V100 SXM2 32GB", 32, 900, 125, vendor="NVIDIA")
    assert cuda_issue_rate(rtx8000) == pytest.approx(72 * 1.77e9 * 128, rel=1e-3)
    assert cuda_issue_rate(v100) == pytest.approx(125e12 / 8)
    # Ampere workstation parts share digits and words with Turing names but not the rule.
    a6000 = AcceleratorSpec("NVIDIA RTX A6000", 48, 768, 154.8, vendor="NVIDIA")
    assert cuda_issue_rate(a6000) is None


def test_weight_reads_stretch_by_the_overlap_share_of_the_shorter_stream(calibration):
    # Q4_0 on a P40: reads (14.6 ms) longer than the issue (7 ms); a share of the issue time
    # does not hide under them (Efficiency.mmvq_overlap).
    work = Workload(precision="q4_0", runtime="llama.cpp", context_tokens=128)
    build = BuildSpec("p40", P40)
    key = ("llama.cpp", "discrete GDDR")

    def parts(overlap: float) -> tuple[float, float, float, float]:
        calibration({key: Efficiency(0.8, 0.3, 0.12, 1e-5, mmvq_overlap=overlap)})
        p = prepare(build, LLAMA_3_8B, work)
        return DecodeModel(p, LLAMA_3_8B, build, work, 1, 1).parts(1)

    mem0, comp0, _, _ = parts(0.0)
    mem, comp, _, _ = parts(0.25)
    assert comp0 < mem0 and comp == comp0
    assert mem == pytest.approx(mem0 + 0.25 * comp0)
