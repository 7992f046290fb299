"""Which NVIDIA cards today's llama.cpp runs without CUDA graphs: ggml-cuda captures a decode
step as one graph only on compute capability >= 8.0 (Ampere). ggml-org/llama.cpp
ggml/src/ggml-cuda/ggml-cuda.cu, ggml_cuda_graph_set_enabled: `if (ggml_cuda_info().devices
[...].cc < GGML_CUDA_CC_AMPERE) graph->disable_due_to_gpu_arch = true` (log line "disabling CUDA
graphs due to GPU architecture", e.g. ikawrakow/ik_llama.cpp issue #479 on a GTX 1660 Ti).
The catalogue records no compute capability, so the card's family is read from its name, the
way prep.unified_platform reads a unified platform (docs/engine.md section 5)."""

from __future__ import annotations

import re

from .runtime import PRE_CUDA_GRAPH_S_PER_LAYER, RuntimeProfile
from .specs import AcceleratorSpec, BuildSpec, ModelSpec, Workload

# Name patterns (matched on the lower-cased name) of NVIDIA cards below compute capability 8.0.
# Each names a product line whose every member is pre-Ampere:
#   Turing (7.5): GeForce RTX 2060/2070/2080 (+ Super/Ti; not the Ampere RTX 2050), GTX 1630-1660,
#     Quadro RTX 3000-8000, Tesla T4, MX450/MX550;
#   Volta (7.0): Tesla V100, Quadro GV100, TITAN V;
#   Pascal (6.x): GTX 1050-1080 Ti, Tesla P4/P40/P100, Quadro P-series / GP100;
#   older: GTX 9xx/7xx (Maxwell/Kepler), Tesla K/M-series;
#   every TITAN (Kepler TITAN to TITAN RTX: there is no Ampere or later TITAN).
# Not matched on purpose: "RTX 2000 Ada", "RTX A6000" (Ampere and later workstation cards whose
# names share digits with Turing ones). A pre-Ampere card no pattern names (e.g. the T400/T1000
# workstation Turing cards, not in the catalogue) keeps CUDA graphs: the rule errs to today's
# default.
PRE_AMPERE_PATTERN = re.compile(
    r"\brtx 20[6-8]0\b|\bgtx 1[06]\d0\b|\bgtx [79]\d0\b|\bquadro rtx\b|\bquadro (?:p\d|gp100|gv100)"
    r"|\bmx[45]50\b|\btitan\b|\b(?:tesla )?(?:t4|v100|p4|p40|p100|k\d{2}|m\d{2})\b"
)

_PRE_AMPERE_CACHE: dict[str, bool] = {}


def pre_ampere_nvidia(acc: AcceleratorSpec) -> bool:
    """True for an NVIDIA card below compute capability 8.0 (PRE_AMPERE_PATTERN), on which
    ggml-cuda disables CUDA graphs."""
    hit = _PRE_AMPERE_CACHE.get(acc.name)
    if hit is None:
        name = acc.name.lower()
        nvidia = (acc.vendor or "").casefold() == "nvidia" or "nvidia" in name
        hit = nvidia and PRE_AMPERE_PATTERN.search(name) is not None
        if len(_PRE_AMPERE_CACHE) >= 1024:
            _PRE_AMPERE_CACHE.clear()
        _PRE_AMPERE_CACHE[acc.name] = hit
    return hit


def cuda_without_graphs(build: BuildSpec, workload: Workload) -> bool:
    """True when today's ggml-cuda runs this build's decode without CUDA graphs: the CUDA
    backend (named, or the NVIDIA default when none is) on a pre-Ampere card. A mixed build
    counts if any card is one: ggml-cuda decides per device and a step waits for every split."""
    if workload.backend not in (None, "cuda"):
        return False
    # A single-kind build has no groups to walk (every decode model and finding asks).
    if build.groups and any(pre_ampere_nvidia(g.accelerator) for g in build.groups):
        return True
    return pre_ampere_nvidia(build.accelerator)


# Kernels one llama.cpp decode step (one token) launches per layer on ggml-cuda, counted from
# the graph builders: every graph op that is not a view/reshape/permute is one launch, and a
# matmul with a quantised weight is two (ggml-cuda first quantises the activation to q8_1,
# then runs the matrix-vector kernel). ggml-cuda's later op fusions (RMS norm + scale, the
# top-k MoE chain, add chains) are not counted: the per-launch host cost
# (HOST_S_PER_KERNEL below) is from a May 2024 build that fused none of them
# (docs/engine.md section 5).
# Attention part of a standard layer (llama-graph.cpp build_attn with its callers): input
# RMS norm + scale 2, Q/K/V projections 6, RoPE on Q and K 2, the two KV-cache copies 2,
# attention (K*Q, softmax, KQ*V, cont) 4, output projection 2, residual add 1.
ATTENTION_LAYER_KERNELS = 19
# Attention part of a Gated DeltaNet layer in decode (qwen3next.cpp build_layer_attn_linear
# with delta-net-base.cpp build_delta_net_autoregressive, early 2026): input norm 2; the
# fused q/k/v/z projection 2 and its split copies (z, q, k, v conts and two concats) 6; the
# beta/alpha projection 2 and gates (cont, sigmoid, cont, bias add, softplus, decay mul) 6;
# conv state (concat with the cached columns, copy back) 2, state read 1, ssm_conv 1, SiLU 1,
# L2 norms of q and k 2; the delta rule one token at a time (scale, exp, decay mul, transpose
# cont, S*k mul and row sum, sub, beta mul, repeat, outer-product mul, state add, S*q mul and
# row sum) 13; state write-back 1; gated RMS norm (norm, scale, SiLU, mul) 4; output
# projection 2; residual add 1.
LINEAR_ATTENTION_LAYER_KERNELS = 46
# The q/k head repeat (ggml_repeat_4d of q and k) when a layer has more value than key heads.
LINEAR_HEAD_REPEAT_KERNELS = 2
# Dense MLP (build_ffn): norm + scale 2, gate and up 4, SwiGLU 1, down 2, residual add 1.
DENSE_FFN_KERNELS = 10
# Mixture-of-experts MLP (build_moe_ffn) before the expert sum: norm + scale 2, router
# matmul (F32 weight) 1, softmax 1, top-k 1, weight gather 1, weight normalisation 2,
# grouped up/gate/down matmuls 6, SwiGLU 1, weighting mul 1, residual add 1; then one add
# per routed expert after the first (the k expert outputs are summed pairwise).
MOE_FFN_KERNELS = 17
# A shared expert beside the routed ones: up, gate, down 6, SwiGLU 1, add to the routed sum 1.
SHARED_EXPERT_KERNELS = 8
# Output: token-embedding gather 1, final norm + scale 2, output projection 2.
OUTPUT_KERNELS = 5

# Host seconds to issue one kernel of a llama.cpp CUDA decode step without CUDA graphs (ggml's
# per-node dispatch plus cudaLaunchKernel). Without graphs a step cannot end before the host
# has launched its last kernel, so a step with many short kernels is bound by this rate, not
# by the GPU. From ggml-org/llama.cpp PR #6766 (runtime.PRE_CUDA_GRAPH_S_PER_LAYER): on the
# H100 PCIe the graphs ran Llama 2 7B Q4_K_M in 6.10 ms a token, so the 6.97 ms without them
# (143.4 tokens/s) is the host's issue time for decode_kernels = 933 launches: 7.5 us each, an
# estimate (the RTX 4090 run, 7.23 ms, gives 7.75 us, an upper bound: its GPU needed 6.81 ms).
# docs/engine.md section 5.
HOST_S_PER_KERNEL = 7.5e-6


def decode_kernels(model: ModelSpec) -> int:
    """Kernels a llama.cpp decode step launches for one token, from the model's layer types
    (full or linear attention, dense or MoE MLP, shared experts): see the counts above."""
    linear = model.linear_attention_layers
    full = model.num_hidden_layers - linear
    linear_kernels = LINEAR_ATTENTION_LAYER_KERNELS
    if model.linear_num_value_heads > model.linear_num_key_heads:
        linear_kernels += LINEAR_HEAD_REPEAT_KERNELS
    moe = MOE_FFN_KERNELS + max(model.num_experts_per_tok - 1, 0)
    if model.n_shared_experts or model.shared_expert_intermediate_size:
        moe += SHARED_EXPERT_KERNELS
    return (
        full * ATTENTION_LAYER_KERNELS
        + linear * linear_kernels
        + model.moe_layers * moe
        + (model.num_hidden_layers - model.moe_layers) * DENSE_FFN_KERNELS
        + OUTPUT_KERNELS
    )


def runs_without_graphs(rt: RuntimeProfile, build: BuildSpec, workload: Workload) -> bool:
    """A llama.cpp-layout run whose CUDA decode launches every kernel from the host: a build
    from before CUDA graphs (`workload.cuda_graphs` False) or cuda_without_graphs today."""
    if not rt.ggml_layout:
        return False
    return not workload.cuda_graphs or cuda_without_graphs(build, workload)


def host_issue_s_without_graphs(
    rt: RuntimeProfile, build: BuildSpec, model: ModelSpec, workload: Workload
) -> float:
    """Least seconds of a decode step without CUDA graphs: the host launches each of the
    step's kernels (decode_kernels) at HOST_S_PER_KERNEL, and the step cannot end
    before the last is launched. 0 for a run with graphs."""
    if not runs_without_graphs(rt, build, workload):
        return 0.0
    return HOST_S_PER_KERNEL * decode_kernels(model)


def host_floor(
    step_s: float, fixed_s: float, host_issue_s: float, eager: float = 1.0
) -> tuple[float, float]:
    """(step, fixed) seconds once the host's launch time floors the step
    (host_issue_s_without_graphs), or once a step without graphs takes `eager` times the graphed
    one (RuntimeProfile.eager_step_factor, a runtime launching from Python): the GPU's wait for
    launches counts as fixed time, so the parts of a step still add up to it."""
    fixed_s += (eager - 1.0) * step_s
    step_s *= eager
    if host_issue_s <= step_s:
        return step_s, fixed_s
    return host_issue_s, fixed_s + host_issue_s - step_s


def launch_s_without_graphs(
    rt: RuntimeProfile, build: BuildSpec, model: ModelSpec, workload: Workload
) -> float:
    """Extra seconds per decode step of a llama.cpp-layout run without CUDA graphs, where the
    host launches each kernel of a token (runtime.PRE_CUDA_GRAPH_S_PER_LAYER): a build from
    before CUDA graphs (`workload.cuda_graphs` False) or a pre-Ampere card's CUDA backend today
    (cuda_without_graphs). 0 otherwise."""
    if not runs_without_graphs(rt, build, workload):
        return 0.0
    return PRE_CUDA_GRAPH_S_PER_LAYER * model.num_hidden_layers
