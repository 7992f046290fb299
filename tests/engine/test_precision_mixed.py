"""Formats whose routed experts have their own bits (mxfp4-f16), and MLX's format."""

from __future__ import annotations

import pytest

from app.engine import (
    PRECISIONS,
    BuildSpec,
    IntraNodeLink,
    Workload,
    estimate,
    model_spec_from_hf_config,
)
from app.engine.prep import resolve_runtime
from app.engine.prepared import prepare

from .shapes import DESKTOP, GPT_OSS_120B, H200, LLAMA_3_8B, M2_ULTRA

GPT_OSS = model_spec_from_hf_config(GPT_OSS_120B, name="gpt-oss-120b")
MAC = BuildSpec("M2 Ultra", M2_ULTRA)
# Large enough for gpt-oss-120b in F16 (234 GB), so the three formats can be compared.
FOUR_H200 = BuildSpec("4x H200", H200, 1, 4, IntraNodeLink("nvlink", 900))
F16_GGUF = Workload(precision="mxfp4-f16", runtime="llama.cpp")


def test_mxfp4_f16_keeps_experts_at_mxfp4_and_the_rest_at_16_bits():
    mixed = prepare(MAC, GPT_OSS, F16_GGUF)
    mx = prepare(MAC, GPT_OSS, Workload(precision="mxfp4", runtime="llama.cpp"))
    f16 = prepare(MAC, GPT_OSS, Workload(precision="fp16", runtime="llama.cpp"))
    assert mixed.expert_bytes == pytest.approx(mx.expert_bytes)
    assert mixed.nonexpert_body_bytes == pytest.approx(f16.nonexpert_body_bytes)
    assert mixed.embed_bytes == pytest.approx(f16.embed_bytes)
    experts = mx.body_bytes - mx.nonexpert_body_bytes
    assert mixed.body_bytes == pytest.approx(f16.nonexpert_body_bytes + experts)


def test_mxfp4_f16_decodes_between_mxfp4_and_fp16():
    def decode(precision: str) -> float:
        work = Workload(precision=precision, runtime="llama.cpp")
        result = estimate(FOUR_H200, GPT_OSS, work)
        assert result.throughput is not None
        return result.throughput.decode_tokens_per_s

    assert decode("fp16") < decode("mxfp4-f16") < decode("mxfp4")


def test_a_dense_model_in_mxfp4_f16_is_a_16_bit_model():
    # No routed experts: every weight is one of the F16 tensors.
    mixed = prepare(DESKTOP, LLAMA_3_8B, F16_GGUF)
    f16 = prepare(DESKTOP, LLAMA_3_8B, Workload(precision="fp16", runtime="llama.cpp"))
    assert mixed.body_bytes == pytest.approx(f16.body_bytes)


def test_mlx_weights_default_to_the_mlx_runtime_and_gguf_to_llama_cpp():
    assert resolve_runtime(MAC, Workload(precision="int4-mlx")) == "mlx"
    assert resolve_runtime(MAC, Workload(precision="iq1_s")) == "llama.cpp"
    assert PRECISIONS["int4-mlx"].expert_bytes_per_weight == PRECISIONS["int4-mlx"].bytes_per_weight
