"""The fixed kernel time of a mixture-of-experts layer per forward pass (moe_kernels)."""

from __future__ import annotations

import pytest

from app.engine import RUNTIMES, BuildSpec, Workload, estimate
from app.engine.moe_kernels import (
    MOE_FIXED_S_PER_LAYER_EARLY,
    MOE_FIXED_S_PER_LAYER_MXFP4,
    moe_fixed_s_per_layer,
)
from app.engine.params import model_spec_from_hf_config

from .shapes import DEEPSEEK_V3, GPT_OSS_120B, H200, MIXTRAL, spec

GPT_OSS = model_spec_from_hf_config(GPT_OSS_120B, name="gpt-oss-120b")


@pytest.mark.parametrize("runtime", ["vllm", "sglang", "trt-llm"])
def test_fused_moe_under_cuda_graphs_costs_tens_of_microseconds_not_hundreds(runtime):
    # vLLM's benchmark_moe.py times the whole fused-MoE op at batch 1 (graph replay) 11-25 µs
    # beyond its expert bytes on A100, H100 and RTX PRO 6000 (docs/engine.md 7); the router and
    # top-k add two short kernels. The hand-set 200 µs of before was 4-8x that.
    rt = RUNTIMES[runtime]
    cost = moe_fixed_s_per_layer(rt, spec(MIXTRAL), Workload(precision="bf16", runtime=runtime))
    assert 10e-6 <= cost <= 50e-6


def test_mxfp4_experts_and_mla_models_keep_their_own_figures():
    vllm = RUNTIMES["vllm"]
    # MXFP4 experts run Marlin / triton_kernels, not the fused-MoE kernel: gpt-oss's figure.
    mxfp4 = Workload(precision="mxfp4", runtime="vllm")
    assert moe_fixed_s_per_layer(vllm, GPT_OSS, mxfp4) == MOE_FIXED_S_PER_LAYER_MXFP4
    # An MLA model's early kernel time (which MLA_KERNEL_SHARE scales) is unchanged.
    fp8 = Workload(precision="fp8", runtime="sglang")
    deepseek = spec(DEEPSEEK_V3)
    assert moe_fixed_s_per_layer(RUNTIMES["sglang"], deepseek, fp8) == MOE_FIXED_S_PER_LAYER_EARLY
    # llama.cpp's own fused mul_mat_id figure is not the serving runtimes'.
    gguf = Workload(precision="mxfp4", runtime="llama.cpp")
    llama = RUNTIMES["llama.cpp"]
    assert moe_fixed_s_per_layer(llama, GPT_OSS, gguf) == llama.moe_fixed_s_per_layer


def test_single_stream_moe_decode_on_vllm_is_not_dominated_by_fixed_time():
    # Mixtral 8x7B BF16 on one H200 at batch 1: 32 MoE layers x 200 µs alone was 6.4 ms of a
    # step whose weight reads take ~5 ms; with the fused-MoE figure the fixed part is a few ms.
    t = estimate(
        BuildSpec("1x H200", H200), spec(MIXTRAL), Workload(precision="bf16", runtime="vllm")
    ).throughput
    assert t is not None
    assert t.decode_fixed_s < 4e-3
    assert t.decode_fixed_s < t.decode_memory_s
