"""Issue 14: what a build of parts answers in words: verdicts, the automatic runtime, findings."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.engine import (
    AcceleratorGroup,
    AcceleratorSpec,
    BuildSpec,
    Estimate,
    IntraNodeLink,
    Workload,
    estimate,
    model_spec_from_hf_config,
)

from .shapes import LLAMA_3_8B, MIXTRAL
from .test_parts import DDR5_DUAL, GPT_OSS, LLAMA_70B, ONE_4090, RTX3090, RTX4090

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


# The first card kind is the smallest: 12 GB alone (x3) does not hold Llama 3 70B, the 60 GB of
# the three cards do, without host RAM (seed_data/accelerators.yaml, rtx-3060-12gb).
RTX3060 = AcceleratorSpec("NVIDIA GeForce RTX 3060 (12 GB)", 12, 360, 25.6, tdp_w=170)
SMALL_FIRST = BuildSpec.of_groups(
    "3060 + 2x 3090",
    (AcceleratorGroup(RTX3060, 1), AcceleratorGroup(RTX3090, 2)),
    intra_node_link=IntraNodeLink("pcie", 25.0),
    host=DDR5_DUAL,
)
RAM_CLAIM = "keeps the rest in host RAM"


def _said(result: Estimate) -> str:
    return " ".join(f.message for f in result.findings)


def test_a_layer_split_that_holds_the_model_is_not_said_to_use_host_ram():
    result = estimate(SMALL_FIRST, LLAMA_70B, Workload(precision="q4_k_m"))
    assert result.fits and result.runtime == "llama.cpp"
    assert result.placement is not None and result.placement.offload == "none"
    assert RAM_CLAIM not in _said(result)


def test_host_ram_does_not_move_a_mixed_desktop_off_the_pipeline_that_holds_the_model():
    # vLLM's pipeline over the three cards holds the model at int4; the first card kind's own
    # estimate (three 3060s) does not, and that is no reason for llama.cpp.
    result = estimate(SMALL_FIRST, LLAMA_70B, Workload(precision="int4"))
    assert result.fits and result.runtime == "vllm" and not result.offloaded
    assert "chosen automatically" not in _said(result)


@pytest.mark.parametrize(
    ("build", "model", "workload"),
    [
        (SMALL_FIRST, LLAMA_70B, Workload(precision="int4")),
        (SMALL_FIRST, LLAMA_70B, Workload(precision="q4_k_m")),
        (SMALL_FIRST, LLAMA_70B, Workload(precision="int4", batch=8, prompt_tokens=1024)),
        (DESKTOP, GPT_OSS, Workload(precision="mxfp4")),
        (ONE_4090, LLAMA_3_8B, Workload(precision="bf16")),
    ],
    ids=["mixed-int4", "mixed-q4", "mixed-batch8", "mixed-split", "one-card"],
)
def test_adding_host_ram_to_a_build_that_fits_in_vram_changes_nothing(build, model, workload):
    without = estimate(replace(build, host=None), model, workload)
    assert without.fits  # the cards alone hold the model
    with_ram = estimate(replace(build, host=DDR5_DUAL), model, workload)
    assert with_ram.runtime == without.runtime
    assert with_ram.throughput == without.throughput
    assert with_ram.findings == without.findings


def test_one_card_that_llama_cpp_fills_without_ram_is_not_said_to_offload():
    # Mixtral at int4 on one 24 GB card: vLLM does not hold it, llama.cpp holds every layer.
    mixtral = model_spec_from_hf_config(MIXTRAL, name="Mixtral 8x7B")
    result = estimate(ONE_4090, mixtral, Workload(precision="int4"))
    assert result.fits and result.runtime == "llama.cpp" and not result.offloaded
    assert RAM_CLAIM not in _said(result)
    assert "llama.cpp holds every layer on it" in _said(result)


def test_offload_none_does_not_stop_a_layer_split_over_mixed_cards():
    # Nothing goes to RAM in llama.cpp's split, so offload=none leaves it to the desktop.
    build = replace(DESKTOP, host=None)
    result = estimate(build, GPT_OSS, Workload(precision="mxfp4", offload="none"))
    assert result.fits and result.runtime == "llama.cpp" and not result.offloaded
    assert "llama.cpp's layer split does" in _said(result)


@pytest.mark.parametrize("runtime", [None, "vllm", "llama.cpp"])
def test_mixed_cards_the_first_kind_cannot_hold_either_name_their_own_cards_in_the_no(runtime):
    # Three 3060s do not hold gpt-oss-120b at bf16 either: their No named "3 isolated 12 GB
    # cards", not the build.
    result = estimate(SMALL_FIRST, GPT_OSS, Workload(precision="bf16", runtime=runtime))
    assert not result.fits
    assert result.verdict.startswith("No — 1× RTX 3060 (12 GB) + 2× RTX 3090 (60 GB in all)")
