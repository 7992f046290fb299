"""Where a build of parts puts the weights: layers over mixed cards, and the host-RAM constants."""

from __future__ import annotations

from dataclasses import replace

from .mmvq import mmvq_pass_s, mmvq_s_per_byte
from .model_shape import distinct_experts
from .prep import efficiency, matmul_peak
from .prepared import Prepared
from .results import Throughput
from .specs import PCIE_GBS_PER_LANE, AcceleratorSpec, BuildSpec, ModelSpec, Workload

# Achieved share of peak DRAM bandwidth when the CPU runs the offloaded matmuls (llama.cpp CPU
# backend, memory-bound decode). An estimate, checked against the offload rows of the
# measurement dataset (docs/engine.md).
CPU_BANDWIDTH_EFFICIENCY = 0.55
# RAM the OS and the runtime keep for themselves (page cache of other files, process, KV of
# CPU layers is counted separately). An estimate.
HOST_RESERVED_GIB = 4.0
# llama.cpp's automatic placement (`--fit`, on by default since PR #16653) leaves this much of
# each card free when it has to offload (`--fit-target`, "target margin per device", default
# 1024 MiB, common/arg.cpp). A placement given by hand (-ngl / --n-cpu-moe) has no margin.
FIT_TARGET_GIB = 1.0
# llama.cpp ggml-cuda offloads an operation on host-resident weights to the GPU from this
# batch size on (ggml_backend_cuda_device_offload_op, min_batch_size = 32).
OFFLOAD_MIN_BATCH = 32
# Host RAM bandwidth when only the RAM size is stated: dual-channel DDR4-3200 (2 x 3200 MT/s x
# 8 B), the slowest common desktop platform, so an unstated host is not flattered.
DEFAULT_RAM_BANDWIDTH_GBS = 51.2
# Card-to-host link when the slot is not stated: PCIe 4.0 x16 at its line rate after coding
# (16 x 1.969 GB/s), the same kind of figure a stated slot gives (AcceleratorGroup.pcie_gbs), so
# both are derated once by LINK_EFFICIENCY in parts.py. LINK_DEFAULT_GBS["pcie"] (25 GB/s) is an
# already-achieved figure; derating it again counted the link's losses twice.
DEFAULT_PCIE_GBS = PCIE_GBS_PER_LANE[4] * 16


def cards_of(build: BuildSpec) -> list[tuple[AcceleratorSpec, float]]:
    """Every card of one node with its host link in GB/s."""
    out = []
    for group in build.accelerator_groups:
        link = group.pcie_gbs or DEFAULT_PCIE_GBS
        out.extend([(group.accelerator, link)] * group.count_per_node)
    return out


def split_layers(sizes: list[float], caps: list[float]) -> list[int] | None:
    """Whole layers (in order) per card, in proportion to the cards' capacities (llama.cpp's
    --tensor-split by free memory); None when some card cannot hold its share."""
    total_cap = sum(caps)
    if total_cap <= 0:
        return None
    total = sum(sizes)
    counts, start, acc, target = [], 0, 0.0, 0.0
    for cap in caps:
        target += total * cap / total_cap
        end = start
        while end < len(sizes) and acc + sizes[end] <= target + 1e-6:
            acc += sizes[end]
            end += 1
        counts.append(end - start)
        start = end
    counts[-1] += len(sizes) - start  # rounding leftovers go to the last card
    return counts if _each_holds(sizes, caps, counts) else None


def split_by_ratio(
    sizes: list[float], caps: list[float], ratios: tuple[float, ...], units: int
) -> list[int] | None:
    """Whole layers (in order) per card as llama.cpp's `--tensor-split` assigns them: of the
    `units` GPU units (the GPU layers, plus the output layer when it is on the GPU), unit u goes
    to the first card whose cumulative share exceeds u / units (llama-model.cpp, `upper_bound`
    over the normalised splits); None when some card cannot hold its layers."""
    total = sum(ratios)
    if total <= 0 or len(ratios) != len(caps):
        return None
    bounds, running = [], 0.0
    for ratio in ratios:
        running += ratio
        bounds.append(running / total)
    counts = [0] * len(caps)
    for unit in range(len(sizes)):
        frac = unit / max(units, 1)
        card = next((i for i, b in enumerate(bounds) if b > frac), len(caps) - 1)
        counts[card] += 1
    return counts if _each_holds(sizes, caps, counts) else None


def _each_holds(sizes: list[float], caps: list[float], counts: list[int]) -> bool:
    """True when every card holds the consecutive layers `counts` gives it."""
    begin = 0
    for count, cap in zip(counts, caps, strict=True):
        if sum(sizes[begin : begin + count]) > cap:
            return False
        begin += count
    return True


def placement_candidates(
    workload: Workload, layers: int, moe_layers: int, allowed: bool
) -> tuple[list[tuple[int, int]], bool]:
    """(MoE layers with experts in RAM, whole layers on the CPU) to try in order, and whether
    the output layer stays on the CPU. A placement given by hand is the only candidate; llama.cpp
    puts the output layer on the GPU only when -ngl exceeds the layer count (llama-model.cpp,
    `act_gpu_layers = min(n_gpu_layers, n_layer + 1)`)."""
    if not allowed:
        return [(0, 0)], False
    gpu, cpu_moe = workload.gpu_layers, workload.cpu_moe_layers
    if gpu is not None or cpu_moe is not None:
        cpu_layers = layers - min(max(gpu, 0), layers) if gpu is not None else 0
        expert_cpu = min(max(cpu_moe or 0, 0), moe_layers)
        return [(expert_cpu, cpu_layers)], gpu is not None and gpu <= layers
    candidates = [(n, 0) for n in range(moe_layers + 1)]
    candidates += [(moe_layers, c) for c in range(1, layers + 1)]
    return candidates, False


def moe_layer_indices(model: ModelSpec) -> list[int]:
    """Indices of the layers that hold routed experts."""
    if not model.is_moe:
        return []
    start = model.first_k_dense_replace
    freq = max(model.moe_layer_freq, 1)
    return [i for i in range(start, model.num_hidden_layers) if (i - start) % freq == 0][
        : model.moe_layers
    ]


def split_compute(
    base_t: Throughput | None,
    cards: list[tuple[AcceleratorSpec, float]],
    split: list[int],
    p: Prepared,
    issue_s: list[float] | None = None,
) -> tuple[float, float]:
    """(decode compute seconds, prompt-time scale) of a split, from each card's share of the
    layers at its matmul rate relative to the first card kind's (prep.matmul_peak).

    Decode: on each card the base card's compute time scaled by that share, or the card's own
    MMVQ issue time for its layers (`card_issue_s`) where that is longer, summed over the cards
    (they run their layers one after another); 0 without a base. Prompt: the time on the split
    relative to the first card kind doing all of it."""
    total = sum(split)
    if total == 0:
        return (base_t.decode_compute_s if base_t else 0.0), 1.0
    # Both figures weigh each card by the same rate: the first card kind's over this card's.
    # Each sum keeps the order of operations it had as a function of its own: answers are
    # compared to the last bit (benchmarks/batch_answers.py).
    first = matmul_peak(p.runtime, cards[0][0], p.precision)
    rates = [first / matmul_peak(p.runtime, acc, p.precision) for acc, _ in cards]
    scale = sum(c / total * r for c, r in zip(split, rates, strict=True))
    if base_t is None:
        return 0.0, scale
    issue_s = issue_s or [0.0] * len(cards)
    compute = sum(
        max(base_t.decode_compute_s * r * count / total, issue)
        for r, count, issue in zip(rates, split, issue_s, strict=True)
    )
    return compute, scale


def card_issue_s(
    p: Prepared,
    build: BuildSpec,
    workload: Workload,
    cards: list[tuple[AcceleratorSpec, float]],
    weights: list[tuple[float, float]],
) -> list[float]:
    """Each card's MMVQ instruction-issue seconds for the (non-expert, all) weight bytes its
    layers read in one decode pass, at that card's own issue rate (mmvq.py, docs/engine.md 5
    and 14); 0 for a card the catalogue gives no issue rate."""
    out = []
    for (acc, _), (nonexpert, weight) in zip(cards, weights, strict=True):
        per_byte = mmvq_s_per_byte(
            p.runtime, replace(build, accelerator=acc), p.precision, workload
        )
        out.append(mmvq_pass_s(per_byte, workload.batch, nonexpert, weight))
    return out


def card_read_s(p: Prepared, build: BuildSpec, read_s: float, issue_s: float) -> float:
    """A card's weight-read seconds in a split, stretched by the fitted share of the shorter of
    its reads and its MMVQ issue time that does not hide under the longer (speed.DecodeModel,
    Efficiency.mmvq_overlap)."""
    return read_s + efficiency(p.runtime, build).mmvq_overlap * min(read_s, issue_s)


def prefill_offload_s(
    model: ModelSpec,
    prompt_tokens: int,
    ubatch: int,
    dense_bytes: float,
    expert_layers: int,
    expert_bytes: float,
    link_bytes_s: float,
    cpu_bytes_s: float,
) -> tuple[float, float]:
    """Seconds the RAM-resident weights add to a prompt: (PCIe copies, CPU reads).

    llama.cpp runs a prompt in micro-batches of `ubatch` tokens. From OFFLOAD_MIN_BATCH tokens
    on, ggml-cuda computes an operation on host-resident weights on the GPU and copies the
    weights over PCIe first; since llama.cpp PR #15346 only the experts the micro-batch routes
    to (E x (1 - (1 - k/E)^tokens) per MoE layer: uniform routing, as decode counts them). A
    shorter micro-batch stays on the CPU, which reads the same weights from RAM once.
    `dense_bytes` are the RAM-resident weights every token uses (whole CPU layers, the output
    layer); the token embeddings are looked up on the CPU and never copied."""
    experts, top_k = model.n_routed_experts, model.num_experts_per_tok

    def used(tokens: int) -> float:
        return dense_bytes + expert_layers * distinct_experts(experts, top_k, tokens) * expert_bytes

    full, rest = divmod(max(prompt_tokens, 0), max(ubatch, 1))
    pcie = cpu = 0.0
    for tokens, count in ((ubatch, full), (rest, 1 if rest else 0)):
        if count == 0:
            continue
        if tokens >= OFFLOAD_MIN_BATCH:
            pcie += count * used(tokens) / link_bytes_s
        else:
            cpu += count * used(tokens) / cpu_bytes_s
    return pcie, cpu


def ttft_guess(
    p: Prepared, model: ModelSpec, workload: Workload, cards: list[tuple[AcceleratorSpec, float]]
) -> float:
    """Prompt time when the base estimate had no throughput (it did not fit): FLOPs at the
    first card's matmul rate (prep.matmul_peak) and the runtime's prefill efficiency."""
    flops = 2.0 * model.params_active_matmul * workload.prompt_tokens
    return flops / (matmul_peak(p.runtime, cards[0][0], p.precision) * p.runtime.compute_efficiency)
