"""Findings and the bottleneck in words (findings.py)."""

from __future__ import annotations

from app.engine import AcceleratorSpec, BuildSpec, Workload, estimate, model_spec_from_hf_config

from .shapes import H200_SXM, LLAMA_3_70B


def test_fixed_costs_are_named_overheads_when_they_dominate():
    tiny = model_spec_from_hf_config(
        {
            "model_type": "llama",
            "num_hidden_layers": 28,
            "hidden_size": 1024,
            "num_attention_heads": 16,
            "num_key_value_heads": 8,
            "intermediate_size": 3072,
            "vocab_size": 32000,
        },
        name="tiny",
    )
    w = Workload(precision="bf16", context_tokens=512)
    e = estimate(BuildSpec("1x H200", H200_SXM), tiny, w)
    assert e.throughput is not None and e.throughput.bottleneck == "overheads"
    assert not any("too small" in f.message for f in e.findings)


def test_llama_cpp_with_a_non_gguf_precision_says_which_gguf_format_is_closest():
    apple = AcceleratorSpec(
        "Apple M3 Ultra (80-core GPU, 512 GB)", 512, 819, 28, memory_kind="unified"
    )
    e = estimate(BuildSpec("Mac Studio", apple), LLAMA_3_70B, Workload(precision="fp8"))
    assert e.runtime == "llama.cpp"
    assert any("closest GGUF format is Q8_0" in f.message for f in e.findings)
    gguf = estimate(BuildSpec("Mac Studio", apple), LLAMA_3_70B, Workload(precision="q8_0"))
    assert not any("closest GGUF" in f.message for f in gguf.findings)
