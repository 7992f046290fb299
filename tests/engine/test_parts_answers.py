"""Issue 14: what a build of parts answers in words: verdicts, the automatic runtime, findings."""

from __future__ import annotations

from app.engine import AcceleratorGroup, BuildSpec, IntraNodeLink, Workload, estimate

from .test_parts import DDR5_DUAL, GPT_OSS, RTX3090, RTX4090

# gpt-oss-120b (MXFP4, ~64 GB) on 72 GB of mixed GeForce cards: vLLM's pipeline of whole
# layers does not fit them, llama.cpp's split by free memory does.
DESKTOP = BuildSpec.of_groups(
    "4090 + 2x 3090",
    (AcceleratorGroup(RTX4090, 1), AcceleratorGroup(RTX3090, 2)),
    intra_node_link=IntraNodeLink("pcie", 25.0),
    host=DDR5_DUAL,
)
MXFP4 = Workload(precision="mxfp4")


def test_a_build_of_parts_that_does_not_fit_says_no_in_its_verdict():
    result = estimate(DESKTOP, GPT_OSS, Workload(precision="mxfp4", runtime="vllm"))
    assert not result.fits and result.throughput is None
    assert result.verdict.startswith("No — 1× RTX 4090 + 2× RTX 3090 (72 GB in all)")


def test_a_desktop_of_mixed_cards_gets_llama_cpp_when_the_serving_runtime_does_not_fit():
    result = estimate(DESKTOP, GPT_OSS, MXFP4)
    assert result.fits and result.runtime == "llama.cpp"
    assert result.throughput is not None and result.throughput.decode_tokens_per_s > 0
    assert any("Runtime llama.cpp chosen automatically" in f.message for f in result.findings)
    assert not any("datacenter build" in f.message for f in result.findings)


def test_mxfp4_on_llama_cpp_is_not_called_a_missing_fp4_rate_or_a_foreign_format():
    result = estimate(DESKTOP, GPT_OSS, Workload(precision="mxfp4", runtime="llama.cpp"))
    messages = " ".join(f.message for f in result.findings)
    assert "FP4 tensor rate" not in messages and "closest GGUF format" not in messages
    assert "-MXFP4.gguf" in result.plan.launch_command
