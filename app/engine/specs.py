"""Input dataclasses: accelerator, links, build, workload, cost assumptions.

The model's shape, `ModelSpec`, lives in model_shape.py and is re-exported here, where every
other input is."""

from __future__ import annotations

from dataclasses import dataclass

from .model_shape import HashedOnce, ModelSpec, compared_values, init_values
from .slot_init import slot_init

__all__ = [
    "INTER_LINK_KINDS",
    "INTRA_LINK_KINDS",
    "PCIE_GBS_PER_LANE",
    "POOLED_LINKS",
    "AcceleratorGroup",
    "AcceleratorSpec",
    "BuildSpec",
    "CostAssumptions",
    "HostSpec",
    "InterNodeLink",
    "IntraNodeLink",
    "ModelSpec",
    "Workload",
    "ram_bandwidth_gbs",
]

POOLED_LINKS = frozenset({"nvlink", "nvswitch", "infinity_fabric", "unified"})
INTRA_LINK_KINDS = frozenset({"pcie", "nvlink", "nvswitch", "infinity_fabric", "unified", "none"})
INTER_LINK_KINDS = frozenset({"infiniband", "ethernet", "none"})


@dataclass(frozen=True, slots=True)
class AcceleratorSpec:
    """One GPU / SoC: memory, bandwidth and dense tensor rates."""

    name: str
    memory_gb: float
    memory_bandwidth_gbs: float
    fp16_tflops: float  # dense FP16/BF16 tensor rate (no 2:4 sparsity)
    memory_kind: str = "discrete"  # "discrete" | "unified"
    fp8_tflops: float | None = None
    int8_tops: float | None = None
    fp4_tflops: float | None = None
    tdp_w: float | None = None
    price_usd: float | None = None
    # Which fitted efficiency constants apply (runtime.device_class); unknown: discrete GDDR,
    # or CUDA/ROCm unified for a unified-memory device.
    vendor: str | None = None
    memory_type: str | None = None


@dataclass(frozen=True, slots=True)
class IntraNodeLink:
    """Accelerator-to-accelerator link inside a node (bandwidth per accelerator, per direction)."""

    kind: str  # "pcie" | "nvlink" | "nvswitch" | "infinity_fabric" | "unified" | "none"
    bandwidth_gbs: float | None
    latency_us: float | None = None


@dataclass(frozen=True, slots=True)
class InterNodeLink:
    """Node-to-node network (Gb/s per node, per direction)."""

    kind: str  # "infiniband" | "ethernet" | "none"
    bandwidth_gbps: float | None
    latency_us: float | None = None


@dataclass(frozen=True, slots=True)
class AcceleratorGroup:
    """One kind of accelerator in a build: count per node and the PCIe slot of each card."""

    accelerator: AcceleratorSpec
    count_per_node: int
    pcie_generation: int | None = None
    pcie_lanes: int | None = None

    @property
    def pcie_gbs(self) -> float | None:
        """Host link of one card, GB/s per direction (None when the slot is not given)."""
        if self.pcie_generation is None or self.pcie_lanes is None:
            return None
        return PCIE_GBS_PER_LANE[self.pcie_generation] * self.pcie_lanes


# Usable GB/s per lane per direction after line coding (PCI-SIG: 2.5/5 GT/s with 8b/10b,
# 8/16/32 GT/s with 128b/130b; 6.0/7.0 64/128 GT/s PAM4 with FLIT ~ 242/256).
PCIE_GBS_PER_LANE = {
    1: 0.25,
    2: 0.5,
    3: 0.985,
    4: 1.969,
    5: 3.938,
    6: 7.563,
    7: 15.125,
}


@dataclass(frozen=True, slots=True)
class HostSpec:
    """The CPU side of a node: RAM that weights may be offloaded to, and its bandwidth."""

    cpu: str | None = None
    cpu_cores: int | None = None
    ram_gb: float | None = None  # build total, like host_memory_gb (offload: one-node builds)
    ram_bandwidth_gbs: float | None = None  # per node: channels x MT/s x 8 bytes, or published


def ram_bandwidth_gbs(channels: int, speed_mts: float) -> float:
    """Peak DRAM bandwidth of `channels` 64-bit channels at `speed_mts` MT/s, in GB/s."""
    return channels * speed_mts * 8 / 1000


@dataclass(frozen=True, slots=True)
class BuildSpec:
    """A hardware build: nodes x accelerator groups, a host, links, power and price.

    `accelerator` / `accelerators_per_node` describe a single-kind build; a mixed build sets
    `groups` (see `of_groups`), and then `accelerator` is its first group's card."""

    name: str
    accelerator: AcceleratorSpec
    nodes: int = 1
    accelerators_per_node: int = 1
    intra_node_link: IntraNodeLink = IntraNodeLink("none", None)
    inter_node_link: InterNodeLink = InterNodeLink("none", None)
    # Accelerators sharing one NVLink/NVSwitch/IF pool; None = one node when the link is pooled.
    scale_up_domain_accelerators: int | None = None
    power_w: float | None = None
    price_usd: float | None = None
    groups: tuple[AcceleratorGroup, ...] = ()  # () = one group: accelerator x per node
    host: HostSpec | None = None

    @classmethod
    def of_groups(
        cls, name: str, groups: tuple[AcceleratorGroup, ...], **fields: object
    ) -> BuildSpec:
        """A build from its accelerator groups (the first group's card is `accelerator`)."""
        if not groups:
            raise ValueError("a build needs at least one accelerator group")
        return cls(
            name=name,
            accelerator=groups[0].accelerator,
            accelerators_per_node=sum(g.count_per_node for g in groups),
            groups=groups,
            **fields,  # type: ignore[arg-type]
        )

    @property
    def accelerator_groups(self) -> tuple[AcceleratorGroup, ...]:
        """The build's groups (one group for a single-kind build)."""
        if self.groups:
            return self.groups
        return (AcceleratorGroup(self.accelerator, self.accelerators_per_node),)

    @property
    def is_mixed(self) -> bool:
        """True when the cards of a node are not all the same accelerator."""
        groups = self.groups
        return len(groups) > 1 and any(g.accelerator != groups[0].accelerator for g in groups)

    @property
    def accelerator_count(self) -> int:
        """Accelerators in the whole build."""
        return self.nodes * self.accelerators_per_node

    @property
    def total_memory_gb(self) -> float:
        """Raw accelerator memory over the whole build (not necessarily pooled)."""
        if not self.groups:  # one card kind: no groups to build and sum (every estimate asks)
            return self.accelerator.memory_gb * self.accelerators_per_node * self.nodes
        per_node = sum(g.accelerator.memory_gb * g.count_per_node for g in self.groups)
        return per_node * self.nodes

    @property
    def slowest_pcie_gbs(self) -> float | None:
        """The narrowest host link of any card, GB/s per direction (None when none is given)."""
        if not self.groups:
            return None  # a single-kind build states no slots
        links = [g.pcie_gbs for g in self.groups if g.pcie_gbs is not None]
        return min(links) if links else None

    @property
    def memory_pooled(self) -> bool:
        """True when accelerators in a node share a fast scale-up fabric."""
        return self.intra_node_link.kind in POOLED_LINKS

    @property
    def pooled_domain_accelerators(self) -> int:
        """Accelerators in one scale-up domain (1 when the link is not pooled)."""
        if not self.memory_pooled:
            return 1
        if self.scale_up_domain_accelerators is not None:
            return min(self.scale_up_domain_accelerators, self.accelerator_count)
        return self.accelerators_per_node


@dataclass(frozen=True, slots=True)
class Workload(HashedOnce):
    """What to run: mode, number formats, context, batch, parallelism, runtime."""

    mode: str = "inference"  # inference | training | lora | qlora
    precision: str = "bf16"
    kv_cache_precision: str | None = None  # None = the precision's default (see PRECISIONS)
    context_tokens: int = 4096  # KV length per sequence (decode is evaluated at this length)
    prompt_tokens: int = 2048  # prompt length for prefill / time to first token
    batch: int = 1  # concurrent sequences (inference) / sequences per step per replica (training)
    parallelism: str = "auto"  # auto | tensor | pipeline
    # vllm | sglang | trt-llm | llama.cpp | ollama | mlx; None = from the inputs (see
    # prep.resolve_runtime: GGUF or Apple -> llama.cpp, else vLLM; training -> pytorch).
    runtime: str | None = None
    tensor_parallel: int | None = None  # explicit override of the plan
    pipeline_parallel: int | None = None
    memory_utilization: float | None = None  # usable share of each accelerator's memory
    # Training / fine-tuning.
    zero_stage: int = 0  # 0..3 (3 = FSDP full sharding)
    # None = the mode's standard recipe: on for LoRA/QLoRA, off for full training.
    activation_recomputation: bool | None = None
    # Training: drops the 5as/h attention-score term of Korthikanti et al.; llama.cpp inference:
    # off, each card holds the F32 K*Q scores of a micro-batch (memory.score_buffer_bytes).
    # On by default: llama.cpp's `-fa auto` since August 2025 (ggml-org/llama.cpp PR #15434).
    flash_attention: bool = True
    # llama.cpp on CUDA replays a decode step's kernels as one CUDA graph since May 2024
    # (ggml-org/llama.cpp PR #6766); False: a build from before, launching every kernel from
    # the host (runtime.PRE_CUDA_GRAPH_S_PER_LAYER). Set for published runs of that age.
    cuda_graphs: bool = True
    # vLLM / SGLang / TensorRT-LLM on a multi-head-latent-attention model (DeepSeek-V3/R1): True
    # for a build from before the MLA decode and block-FP8 kernels of spring 2025 became its
    # defaults (mla_kernels.MLA_KERNEL_SHARE); it pays the early-2025 fixed MLA and MoE kernel time.
    # Set for published runs of that age; today's software is the default.
    early_mla_kernels: bool = False
    # MLA decode attention ran the early-2025 Triton kernel (SGLang before FlashInfer MLA /
    # FlashMLA became its default, vLLM's TRITON_MLA, their ROCm builds): its time grows with
    # batch x context beyond the cache read (mla_kernels.EARLY_MLA_ATTENTION_SHARE). Set for
    # published runs of that software; False: today's FlashMLA-class kernels.
    triton_mla_decode: bool = False
    training_tokens: int = 0
    lora_rank: int = 16
    model_flops_utilization: float | None = None  # None = documented default per mode
    # "auto": weights that do not fit in VRAM may stay in host RAM where the runtime allows
    # (llama.cpp -ngl / --n-cpu-moe); "none": they may not.
    offload: str = "auto"
    # A placement given by hand instead of the engine's choice (llama.cpp `-ngl N`: the last N
    # layers on the GPU; `--n-cpu-moe N`: the routed experts of N MoE layers in RAM), as in a
    # published run; None = the fewest offloaded layers that fit (parts.py).
    gpu_layers: int | None = None
    cpu_moe_layers: int | None = None
    # llama.cpp `--tensor-split a,b,...`: the share of the GPU layers each card of a one-node
    # build takes, in card order (parts_split.split_by_ratio); None = by free memory.
    tensor_split: tuple[float, ...] | None = None
    # Tokens already in the KV cache when the prompt is prefilled (llama-bench `-d`): each
    # prompt token also attends to them. 0 (the API's case) is a fresh prompt; the accuracy
    # service sets it from a measurement's context depth.
    prefill_depth_tokens: int = 0
    # llama.cpp's GPU kernel backend (cuda / rocm / vulkan / metal / sycl): it decides the
    # prefill shares (prep.prefill_efficiency). None: the device's native one.
    backend: str | None = None
    # Tokens one scheduler step may process, prompt and decode together (vLLM's
    # max_num_batched_tokens, SGLang's chunked_prefill_size, TensorRT-LLM's max_num_tokens,
    # llama.cpp's physical batch `-ub` / n_ubatch): the size of a prefill pass (its weight reads,
    # fixed costs and tokens per expert), of the activation workspace the runtime reserves for
    # it, and the prompt chunk. None: the runtime profile's prefill_chunk_tokens
    # (token_budget.token_budget; 512 for llama.cpp).
    prefill_token_budget: int | None = None
    # Sequences whose KV caches one decode step's `batch` tokens read: None = `batch` (one token
    # of each sequence); 1 = the tokens are consecutive tokens of one sequence (llama-bench's
    # prompt run at `-ub N`, published as a decode rate), which read its cache once.
    decode_sequences: int | None = None
    # Whether a scheduler step fuses prompt chunks with the decode batch (None: the runtime
    # profile's `mixes_prefill`); False for a vLLM release that runs the model without chunked
    # prefill (token_budget.vllm_unchunked_budget), whose prefill steps run alone.
    mixed_prefill: bool | None = None

    # Hashed once (HashedOnce): the engine keys its memo of per-call quantities by the workload.
    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(compared_values(self)))

    __hash__ = HashedOnce.__hash__  # (a dataclass would otherwise hash every field per call)

    def __reduce__(self) -> tuple[type[Workload], tuple[object, ...]]:
        return (type(self), init_values(self))  # rebuilt through __init__, like ModelSpec

    @property
    def kv_share_per_token(self) -> float:
        """Share of one sequence's KV cache each of a step's tokens reads (1: its own)."""
        if self.decode_sequences is None:
            return 1.0
        return min(self.decode_sequences, self.batch) / max(self.batch, 1)


@dataclass(frozen=True, slots=True)
class CostAssumptions:
    """How hardware turns into money."""

    amortization_years: float = 3.0
    electricity_usd_per_kwh: float = 0.15
    pue: float = 1.3
    utilization: float = 1.0  # share of wall-clock hours the build is busy
    host_power_fraction: float = (
        0.25  # host CPU/RAM/fans on top of accelerator TDP when power_w unset
    )


# The request's inputs, built per estimate (failover copies the build): slot_init.py says why.
for _cls in (AcceleratorSpec, IntraNodeLink, InterNodeLink, AcceleratorGroup, HostSpec, BuildSpec,
             Workload, CostAssumptions):  # fmt: skip
    slot_init(_cls)
