"""Today's llama.cpp runs a pre-Ampere NVIDIA card's CUDA decode without CUDA graphs
(ggml-cuda: compute capability < GGML_CUDA_CC_AMPERE), so it pays the host kernel launches."""

from __future__ import annotations

import dataclasses

import pytest

from app.engine import AcceleratorSpec, BuildSpec, HostSpec, Workload, estimate
from app.engine.graph_capture import (
    ATTENTION_LAYER_KERNELS,
    DENSE_FFN_KERNELS,
    HOST_S_PER_KERNEL,
    OUTPUT_KERNELS,
    decode_kernels,
    pre_ampere_nvidia,
)
from app.engine.runtime import PRE_CUDA_GRAPH_S_PER_LAYER
from app.engine.specs import AcceleratorGroup

from .shapes import LLAMA_3_8B, LLAMA_3_70B, spec
from .test_linear_attention import QWEN3_NEXT

# Test cards: catalogue-like figures; only the names differ between a pair.
RTX_2080_TI = AcceleratorSpec(
    "NVIDIA GeForce RTX 2080 Ti", 11, 616, 53.8, int8_tops=215.2, vendor="NVIDIA"
)
SAME_SPECS_AMPERE_NAME = dataclasses.replace(RTX_2080_TI, name="NVIDIA GeForce RTX 3080 Ti")
RTX_3090 = AcceleratorSpec(
    "NVIDIA GeForce RTX 3090", 24, 936, 71, int8_tops=284, vendor="NVIDIA"
)
V100 = AcceleratorSpec("NVIDIA Tesla V100 SXM2 32GB", 32, 900, 125, vendor="NVIDIA",
                       memory_type="HBM2")
V100_RENAMED = dataclasses.replace(V100, name="NVIDIA A100-like test card")
TODAY = Workload(precision="q4_0", context_tokens=512, runtime="llama.cpp")


def _step(acc: AcceleratorSpec, work: Workload = TODAY, name: str = "b") -> float:
    result = estimate(BuildSpec(f"{name} {acc.name}", acc), LLAMA_3_8B, work)
    assert result.throughput is not None
    return 1.0 / result.throughput.decode_tokens_per_s


@pytest.mark.parametrize(
    "name",
    [
        "NVIDIA GeForce RTX 2080 Ti", "NVIDIA GeForce RTX 2060 SUPER", "NVIDIA GeForce GTX 1660 Ti",
        "NVIDIA GeForce GTX 1080 Ti", "NVIDIA Quadro RTX 8000", "NVIDIA TITAN RTX",
        "NVIDIA TITAN V",
        "NVIDIA Tesla T4", "NVIDIA T4", "NVIDIA Tesla V100 SXM2", "NVIDIA Tesla P40",
        "NVIDIA Tesla P100 PCIe", "NVIDIA Quadro P6000",
    ],
)
def test_pre_ampere_names(name: str) -> None:
    assert pre_ampere_nvidia(AcceleratorSpec(name, 16, 500, 30))


@pytest.mark.parametrize(
    "name",
    [
        "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 2050", "NVIDIA RTX 2000 Ada Generation",
        "NVIDIA RTX A6000", "NVIDIA A100 80GB SXM4", "NVIDIA H100 PCIe 80GB", "NVIDIA L40S",
        "NVIDIA GB10 Superchip (DGX Spark, 128 GB)", "AMD Radeon RX 7900 XTX", "Apple M4 Max",
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "NVIDIA GeForce RTX 4070 Ti",
    ],
)
def test_ampere_and_later_or_other_vendors_keep_graphs(name: str) -> None:
    assert not pre_ampere_nvidia(AcceleratorSpec(name, 16, 500, 30))


def test_llama_cpp_on_a_turing_card_pays_the_launch_cost_today() -> None:
    extra = PRE_CUDA_GRAPH_S_PER_LAYER * LLAMA_3_8B.num_hidden_layers
    # The same card under an Ampere name differs only by the launches.
    assert _step(RTX_2080_TI) - _step(SAME_SPECS_AMPERE_NAME) == pytest.approx(extra, rel=1e-6)
    # An old build's flag adds nothing more: the card already runs without graphs.
    old = dataclasses.replace(TODAY, cuda_graphs=False)
    assert _step(RTX_2080_TI, old) == pytest.approx(_step(RTX_2080_TI))
    # A named CUDA backend is the default one; Vulkan has no ggml-cuda graphs to lose.
    cuda = dataclasses.replace(TODAY, backend="cuda")
    assert _step(RTX_2080_TI, cuda) == pytest.approx(_step(RTX_2080_TI))
    vulkan = dataclasses.replace(TODAY, backend="vulkan")
    assert _step(RTX_2080_TI, vulkan) == pytest.approx(_step(SAME_SPECS_AMPERE_NAME, vulkan))


def test_an_ampere_card_keeps_graphs_unless_the_build_predates_them() -> None:
    extra = PRE_CUDA_GRAPH_S_PER_LAYER * LLAMA_3_8B.num_hidden_layers
    old = dataclasses.replace(TODAY, cuda_graphs=False)
    assert _step(RTX_3090, old) - _step(RTX_3090) == pytest.approx(extra, rel=1e-6)


def test_vllm_on_a_v100_is_unchanged() -> None:
    # vLLM captures its own graphs on any card; the ggml-cuda rule does not apply.
    vllm = dataclasses.replace(TODAY, runtime="vllm", precision="int4")
    assert _step(V100, vllm) == pytest.approx(_step(V100_RENAMED, vllm))


def test_a_mixed_build_led_by_a_pre_ampere_card_pays() -> None:
    # A mixed build's decode fixed time is its first group's (estimate's single-kind base).
    groups_old = (AcceleratorGroup(RTX_2080_TI, 1), AcceleratorGroup(RTX_3090, 1))
    groups_new = (AcceleratorGroup(SAME_SPECS_AMPERE_NAME, 1), AcceleratorGroup(RTX_3090, 1))

    def step(groups: tuple[AcceleratorGroup, ...], name: str) -> float:
        result = estimate(BuildSpec.of_groups(name, groups), LLAMA_3_8B, TODAY)
        assert result.throughput is not None
        return 1.0 / result.throughput.decode_tokens_per_s

    extra = PRE_CUDA_GRAPH_S_PER_LAYER * LLAMA_3_8B.num_hidden_layers
    assert step(groups_old, "mix a") - step(groups_new, "mix b") == pytest.approx(extra, rel=1e-3)


def test_the_estimate_states_the_missing_graphs() -> None:
    def says(acc: AcceleratorSpec) -> bool:
        result = estimate(BuildSpec(f"f {acc.name}", acc), LLAMA_3_8B, TODAY)
        return any("without CUDA graphs" in f.message for f in result.findings)

    assert says(RTX_2080_TI)
    assert not says(SAME_SPECS_AMPERE_NAME)


def test_an_offloaded_run_on_a_turing_card_pays_the_launch_cost_too() -> None:
    # Llama 3 70B Q4 does not fit an 11 GB card: most layers stay in RAM, and the step still
    # launches every layer's kernels from the host (no base estimate carries the cost here).
    host = HostSpec("test desktop", 8, 128, 80.0)
    extra = PRE_CUDA_GRAPH_S_PER_LAYER * LLAMA_3_70B.num_hidden_layers

    def step(acc: AcceleratorSpec) -> float:
        build = BuildSpec(f"offload {acc.name}", acc, host=host)
        result = estimate(build, LLAMA_3_70B, dataclasses.replace(TODAY, precision="q4_k_m"))
        assert result.throughput is not None and result.placement is not None
        assert result.placement.cpu_layers > 0
        return 1.0 / result.throughput.decode_tokens_per_s

    assert step(RTX_2080_TI) - step(SAME_SPECS_AMPERE_NAME) == pytest.approx(extra, rel=1e-6)


QUADRO_RTX_8000 = AcceleratorSpec(
    "NVIDIA Quadro RTX 8000", 48, 672, 32.6, int8_tops=261, vendor="NVIDIA"
)
QWEN3_NEXT_SPEC = spec(QWEN3_NEXT)


def test_a_dense_layer_launches_what_llama_cpp_builds_for_it() -> None:
    # Attention and MLP per layer, plus embedding, final norm and output projection.
    per_layer = ATTENTION_LAYER_KERNELS + DENSE_FFN_KERNELS
    expected = LLAMA_3_8B.num_hidden_layers * per_layer + OUTPUT_KERNELS
    assert decode_kernels(LLAMA_3_8B) == expected


def test_gated_deltanet_layers_launch_more_kernels_than_attention_layers() -> None:
    # The count follows the layer types: the same shape with every layer full attention
    # launches fewer kernels than with 36 of 48 layers Gated DeltaNet.
    all_full = spec({**QWEN3_NEXT, "full_attention_interval": 1})
    assert all_full.linear_attention_layers == 0
    hybrid = decode_kernels(QWEN3_NEXT_SPEC)
    assert hybrid > decode_kernels(all_full) + 36 * 20
    # More than twice a dense 32-layer model's per-layer count.
    assert hybrid / 48 > 2 * (ATTENTION_LAYER_KERNELS + DENSE_FFN_KERNELS)


def test_without_graphs_a_many_kernel_step_is_bound_by_the_host() -> None:
    # Qwen3-Next Q4_K_M on a Turing card reads ~2 GB a token (a few ms at 672 GB/s), but the
    # host must launch every kernel first: the step is the launch time.
    work = dataclasses.replace(TODAY, precision="q4_k_m")
    build = BuildSpec("host bound", QUADRO_RTX_8000, accelerators_per_node=2)
    result = estimate(build, QWEN3_NEXT_SPEC, work)
    assert result.throughput is not None
    step = 1.0 / result.throughput.decode_tokens_per_s
    assert step == pytest.approx(HOST_S_PER_KERNEL * decode_kernels(QWEN3_NEXT_SPEC), rel=1e-6)
    assert any("the host sets the pace" in f.message for f in result.findings)
    # With graphs (the same card under an Ampere name) the GPU sets the pace, far faster.
    ampere = dataclasses.replace(QUADRO_RTX_8000, name="NVIDIA RTX A8000 test card")
    fast = estimate(BuildSpec("graphs", ampere, accelerators_per_node=2), QWEN3_NEXT_SPEC, work)
    assert fast.throughput is not None
    assert fast.throughput.decode_tokens_per_s > 2 * result.throughput.decode_tokens_per_s


def test_the_host_floor_leaves_a_gpu_bound_step_alone() -> None:
    # Llama 3 8B on a Turing card: its ~900 launches take less than reading the weights.
    host_s = HOST_S_PER_KERNEL * decode_kernels(LLAMA_3_8B)
    assert _step(RTX_2080_TI) > host_s
    extra = PRE_CUDA_GRAPH_S_PER_LAYER * LLAMA_3_8B.num_hidden_layers
    assert _step(RTX_2080_TI) - _step(SAME_SPECS_AMPERE_NAME) == pytest.approx(extra, rel=1e-6)


def test_trtllm_pytorch_flow_without_graphs_takes_the_ablated_share_longer() -> None:
    # TensorRT-LLM's PyTorch flow before its CUDA-graph and overlap-scheduler defaults: each
    # decode step takes TRTLLM_EAGER_STEP_FACTOR times the graphed one, the extra counted as
    # fixed time (the GPU waits for the host), so the step's parts still add up.
    from app.engine.runtime import TRTLLM_EAGER_STEP_FACTOR
    from app.engine.specs import IntraNodeLink

    from .shapes import H100

    build = BuildSpec("8x H100", H100, 1, 8, IntraNodeLink("nvswitch", 450))
    graphed = Workload(precision="fp8", context_tokens=4000, batch=16, runtime="trt-llm")
    eager = dataclasses.replace(graphed, cuda_graphs=False)
    a = estimate(build, LLAMA_3_70B, graphed).throughput
    b = estimate(build, LLAMA_3_70B, eager).throughput
    assert a is not None and b is not None
    assert b.decode_step_s == pytest.approx(TRTLLM_EAGER_STEP_FACTOR * a.decode_step_s)
    assert b.decode_fixed_s - a.decode_fixed_s == pytest.approx(
        (TRTLLM_EAGER_STEP_FACTOR - 1.0) * a.decode_step_s
    )
    assert b.decode_memory_s == pytest.approx(a.decode_memory_s)
    # vLLM's setting is not modelled this way (factor 1): the flag changes nothing there.
    v = estimate(build, LLAMA_3_70B, dataclasses.replace(graphed, runtime="vllm")).throughput
    w = estimate(build, LLAMA_3_70B, dataclasses.replace(eager, runtime="vllm")).throughput
    assert v is not None and w is not None
    assert w.decode_step_s == pytest.approx(v.decode_step_s)
