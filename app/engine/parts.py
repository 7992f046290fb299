"""Builds made of parts: mixed cards in one node, and weights kept in host RAM (offload).

`with_parts(...)` takes the estimate of the build's first card kind and re-derives fit, plan,
speed and cost where the parts matter (docs/engine.md, "Mixed cards and offload"):

- Mixed cards (layer split, as llama.cpp's `--tensor-split` by free memory): every card holds
  whole layers in proportion to its usable memory; a token's time is the sum of each card's
  share of the bytes read at that card's own bandwidth. vLLM-style tensor parallelism needs
  identical cards, so a tensor-parallel runtime pipelines across the cards instead.
- Offload (llama.cpp): MoE routed experts of N layers kept in RAM (`--n-cpu-moe N`), then whole
  layers on the CPU (`-ngl`), the fewest that make the rest fit. Decode adds the bytes read
  from RAM at the host's bandwidth; prefill streams the RAM-resident weights over PCIe to the
  GPU once per micro-batch (llama.cpp offloads batches of >= 32 tokens to the GPU).
"""

from __future__ import annotations

from dataclasses import replace

from .cost import billed_tokens_per_s, cost_figures
from .prep import GB, GIB
from .prepared import Prepared
from .results import CardShare, Estimate, Finding, MemoryBreakdown, Placement, Throughput
from .runtime import LINK_DEFAULT_GBS, LINK_EFFICIENCY, LINK_LATENCY_US
from .specs import AcceleratorSpec, BuildSpec, CostAssumptions, ModelSpec, Workload
from .speed import distinct_experts

# Achieved share of peak DRAM bandwidth when the CPU runs the offloaded matmuls (llama.cpp CPU
# backend, memory-bound decode). An estimate, checked against the offload rows of the
# measurement dataset (docs/engine.md).
CPU_BANDWIDTH_EFFICIENCY = 0.55
# RAM the OS and the runtime keep for themselves (page cache of other files, process, KV of
# CPU layers is counted separately). An estimate.
HOST_RESERVED_GIB = 4.0
# llama.cpp ggml-cuda offloads an operation on host-resident weights to the GPU from this
# batch size on (ggml_backend_cuda_device_offload_op, min_batch_size = 32).
OFFLOAD_MIN_BATCH = 32
# Host RAM bandwidth when only the RAM size is stated: dual-channel DDR4-3200 (2 x 3200 MT/s x
# 8 B), the slowest common desktop platform, so an unstated host is not flattered.
DEFAULT_RAM_BANDWIDTH_GBS = 51.2
# Card-to-host link when the slot is not stated: PCIe 4.0 x16 achieved (runtime.py).
DEFAULT_PCIE_GBS = LINK_DEFAULT_GBS["pcie"]


def _cards(build: BuildSpec) -> list[tuple[AcceleratorSpec, float]]:
    """Every card of one node with its host link in GB/s."""
    out = []
    for group in build.accelerator_groups:
        link = group.pcie_gbs or DEFAULT_PCIE_GBS
        out.extend([(group.accelerator, link)] * group.count_per_node)
    return out


def _split_layers(sizes: list[float], caps: list[float]) -> list[int] | None:
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
    begin = 0
    for count, cap in zip(counts, caps, strict=True):
        if sum(sizes[begin : begin + count]) > cap:
            return None
        begin += count
    return counts


def needs_parts(build: BuildSpec, workload: Workload, base: Estimate) -> bool:
    """True when mixed cards or offload change the answer for this build and workload."""
    # Cheapest tests first: this runs on every estimate.
    if build.nodes != 1 or workload.mode != "inference":
        return False
    mixed = build.is_mixed
    if not mixed and (base.fits or not _offload_allowed(build, workload)):
        return False
    # Unified memory: there is no separate VRAM to offload from.
    return all(g.accelerator.memory_kind != "unified" for g in build.accelerator_groups)


def _offload_allowed(build: BuildSpec, workload: Workload) -> bool:
    host = build.host
    return workload.offload == "auto" and host is not None and bool(host.ram_gb)


def with_parts(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    costs: CostAssumptions,
    base: Estimate,
    p: Prepared,
) -> Estimate:
    """The estimate re-derived for mixed cards and host-RAM offload (see the module text)."""
    layers = model.num_hidden_layers
    batch = workload.batch
    cards = _cards(build)
    frac = workload.memory_utilization or p.runtime.usable_fraction_discrete
    per_card_fixed = p.runtime.overhead_gb * GB + base.memory.activations_gb * GB / max(
        1, base.plan.tensor_parallel * base.plan.pipeline_parallel
    )
    caps = [acc.memory_gb * GIB * frac - per_card_fixed for acc, _ in cards]
    kv_layer = p.kv_seq_bytes * batch / layers
    nonexpert_layer = p.nonexpert_body_bytes / layers
    experts_layer = model.n_routed_experts * p.expert_bytes
    moe_every = set(_moe_layer_indices(model))
    head = p.head_bytes
    embed = p.embed_bytes

    def gpu_sizes(expert_cpu: int, cpu_layers: int) -> list[float]:
        out = []
        cpu_moe = sorted(moe_every)[:expert_cpu]
        for index in range(cpu_layers, layers):
            size = nonexpert_layer + kv_layer
            if index in moe_every and index not in cpu_moe:
                size += experts_layer
            out.append(size)
        if out:
            out[-1] += head + embed  # output layer with the last layer (llama.cpp puts it last)
        return out

    allowed = _offload_allowed(build, workload) and p.runtime.split == "layers"
    choice: tuple[int, int, list[int]] | None = None
    candidates = [(0, 0)]
    if allowed:
        candidates += [(n, 0) for n in range(1, len(moe_every) + 1)]
        candidates += [(len(moe_every), c) for c in range(1, layers + 1)]
    for expert_cpu, cpu_layers in candidates:
        sizes = gpu_sizes(expert_cpu, cpu_layers)
        split = _split_layers(sizes, caps) if sizes else [0] * len(cards)
        if split is not None:
            choice = (expert_cpu, cpu_layers, split)
            break
    host = build.host
    ram_usable = (host.ram_gb * GIB - HOST_RESERVED_GIB * GIB) if host and host.ram_gb else None
    if choice is None:
        return _no_fit(base, build, p, caps, layers, allowed)
    expert_cpu, cpu_layers, split = choice
    cpu_moe = sorted(moe_every)[:expert_cpu]
    ram_bytes = expert_cpu * experts_layer + cpu_layers * (nonexpert_layer + kv_layer)
    ram_bytes += sum(
        experts_layer for i in range(cpu_layers) if i in moe_every and i not in cpu_moe
    )
    if ram_bytes > 0 and (ram_usable is None or ram_bytes > ram_usable):
        return _no_fit(base, build, p, caps, layers, allowed, ram_bytes=ram_bytes)

    # Decode: each card reads its layers' active bytes at its own bandwidth; RAM-resident parts
    # are read by the CPU at the host's bandwidth.
    active_experts = distinct_experts(model.n_routed_experts, model.num_experts_per_tok, batch)
    active_expert_bytes = active_experts * p.expert_bytes
    eff = p.bandwidth_efficiency
    shares: list[CardShare] = []
    index = cpu_layers
    sizes = gpu_sizes(expert_cpu, cpu_layers)
    reads: list[float] = []
    for count in split:
        read = 0.0
        for layer in range(index, index + count):
            read += nonexpert_layer + kv_layer
            if layer in moe_every and layer not in cpu_moe:
                read += active_expert_bytes
        if index + count == layers:
            read += head
        reads.append(read)
        index += count
    base_t = base.throughput
    if base_t is not None and sum(reads) > 0:
        # Everything on the cards: the bytes the engine's own decode model reads (KV window
        # caps, embeddings ...), shared out over the cards as this split holds them.
        base_bytes = base_t.decode_memory_s * cards[0][0].memory_bandwidth_gbs * GB * eff
        reads = [r * base_bytes / sum(reads) for r in reads]
    decode_gpu = 0.0
    index = cpu_layers
    for (acc, _), count, cap, read in zip(cards, split, caps, reads, strict=True):
        seconds = read / (acc.memory_bandwidth_gbs * GB * eff)
        held = sum(sizes[index - cpu_layers : index - cpu_layers + count])
        shares.append(
            CardShare(
                acc.name, count, (held + per_card_fixed) / GB, (cap + per_card_fixed) / GB, seconds
            )
        )
        decode_gpu += seconds
        index += count
    ram_read = len(cpu_moe) * active_expert_bytes
    ram_read += sum(
        nonexpert_layer + kv_layer + (active_expert_bytes if i in moe_every else 0.0)
        for i in range(cpu_layers)
    ) - sum(active_expert_bytes for i in range(cpu_layers) if i in cpu_moe)
    stated_bw = host.ram_bandwidth_gbs if host and host.ram_bandwidth_gbs else None
    ram_bw = stated_bw or DEFAULT_RAM_BANDWIDTH_GBS
    decode_ram = ram_read / (ram_bw * GB * CPU_BANDWIDTH_EFFICIENCY) if ram_read else 0.0
    # Every hand-over between devices (card to card, GPU to CPU and back for an offloaded
    # layer) moves the hidden state and pays a PCIe synchronisation.
    slowest_link = min(link for _, link in cards)
    hidden_bytes = model.hidden_size * 2.0 * batch
    hop_s = LINK_LATENCY_US["pcie"] * 1e-6 + hidden_bytes / (slowest_link * GB * LINK_EFFICIENCY)
    card_hops = sum(1 for c in split if c) - 1
    # Card-to-card hand-overs as the engine prices them for this many cards (the first kind's
    # estimate has the same split shape); GPU -> CPU -> GPU for every offloaded layer.
    comm = base_t.decode_communication_s if base_t else max(card_hops, 0) * hop_s
    comm += (2 * len(cpu_moe) + (2 if cpu_layers else 0)) * hop_s
    fixed = base_t.decode_fixed_s if base_t else p.fixed_pass_s + p.runtime.fixed_s_per_step
    compute = _compute_s(base_t, cards, split)
    memory_s = decode_gpu + decode_ram
    step = max(memory_s, compute) + comm + fixed
    # Prefill on the GPUs: the base prompt time scaled by each card's share of the layers and
    # its compute rate, plus the RAM-resident weights crossing PCIe once per micro-batch.
    ubatch = p.runtime.prefill_chunk_tokens
    passes = (
        -(-workload.prompt_tokens // ubatch) if workload.prompt_tokens >= OFFLOAD_MIN_BATCH else 0
    )
    prefill_pcie = passes * ram_bytes / (slowest_link * GB * LINK_EFFICIENCY)
    ttft_base = base_t.time_to_first_token_s if base_t else _ttft_guess(p, model, workload, cards)
    ttft = ttft_base * _compute_scale(cards, split) + prefill_pcie
    per_seq = 1.0 / step
    bottleneck = "memory bandwidth" if memory_s >= compute else "compute"
    if decode_ram > decode_gpu:
        bottleneck = "host RAM bandwidth"
    tput = Throughput(
        decode_tokens_per_s=per_seq,
        aggregate_decode_tokens_per_s=per_seq * batch,
        prefill_tokens_per_s=workload.prompt_tokens / ttft if ttft > 0 else 0.0,
        time_to_first_token_s=ttft,
        bottleneck=bottleneck,
        decode_memory_s=memory_s,
        decode_compute_s=compute,
        decode_communication_s=comm,
        decode_fixed_s=fixed,
        decode_step_s=step,
        compute_bound_batch=base_t.compute_bound_batch if base_t else None,
        batch_per_replica=batch,
    )
    billed = billed_tokens_per_s(
        per_sequence=per_seq,
        batch=batch,
        batch_per_replica=batch,
        ttft_s=ttft,
        generated=max(1, workload.context_tokens - workload.prompt_tokens),
    )
    placement = _placement(
        build,
        model,
        shares,
        expert_cpu,
        cpu_layers,
        len(moe_every),
        ram_bytes,
        ram_usable,
        stated_bw,
        decode_ram,
        prefill_pcie,
        split,
        p,
    )
    gpu_need = sum(s.memory_needed_gb for s in shares)
    fullest = max(shares, key=lambda s: s.memory_needed_gb / s.memory_usable_gb)
    usable_total = sum(s.memory_usable_gb for s in shares)
    memory = replace(
        base.memory,
        per_accelerator_gb=fullest.memory_needed_gb,
        available_per_accelerator_gb=fullest.memory_usable_gb,
        available_total_gb=usable_total,
        spare_gb=usable_total - gpu_need,
        build_memory_gb=build.total_memory_gb * GIB / GB,
    )
    findings = list(base.findings if base.fits else [])
    findings = [f for f in findings if f.severity != "blocker"]
    findings.extend(_findings(build, p, placement))
    used = sum(1 for c in split if c)
    plan = replace(
        base.plan,
        tensor_parallel=1,
        pipeline_parallel=used,
        data_parallel=1,
        expert_parallel=1,
        accelerators_used=used,
        layers_per_stage=max(split) if split else 0,
        description=placement.description,
        launch_command=_launch(base.plan.launch_command, placement.launch_flags, p),
        replicas_active=1,
    )
    verdict = _verdict(memory, placement)
    return replace(
        base,
        fits=True,
        verdict=verdict,
        memory=memory,
        plan=plan,
        throughput=tput,
        cost=cost_figures(build, costs, billed),
        findings=tuple(findings),
        placement=placement,
        max_batch_that_fits=None,
    )


def _moe_layer_indices(model: ModelSpec) -> list[int]:
    """Indices of the layers that hold routed experts."""
    if not model.is_moe:
        return []
    start = model.first_k_dense_replace
    freq = max(model.moe_layer_freq, 1)
    return [i for i in range(start, model.num_hidden_layers) if (i - start) % freq == 0][
        : model.moe_layers
    ]


def _compute_s(
    base_t: Throughput | None, cards: list[tuple[AcceleratorSpec, float]], split: list[int]
) -> float:
    """Decode compute time: the base card's figure scaled by each card's share and rate."""
    if base_t is None:
        return 0.0
    return base_t.decode_compute_s * _compute_scale(cards, split)


def _compute_scale(cards: list[tuple[AcceleratorSpec, float]], split: list[int]) -> float:
    """Time on the split relative to the first card kind doing all of it."""
    total = sum(split)
    if total == 0:
        return 1.0
    ref = cards[0][0].fp16_tflops
    return sum(c / total * ref / acc.fp16_tflops for (acc, _), c in zip(cards, split, strict=True))


def _ttft_guess(
    p: Prepared, model: ModelSpec, workload: Workload, cards: list[tuple[AcceleratorSpec, float]]
) -> float:
    """Prompt time when the base estimate had no throughput (it did not fit): FLOPs at the
    first card's dense rate and the runtime's prefill efficiency."""
    flops = 2.0 * model.params_active_matmul * workload.prompt_tokens
    return flops / (cards[0][0].fp16_tflops * 1e12 * p.runtime.compute_efficiency)


def _placement(
    build: BuildSpec,
    model: ModelSpec,
    shares: list[CardShare],
    expert_cpu: int,
    cpu_layers: int,
    moe_layers: int,
    ram_bytes: float,
    ram_usable: float | None,
    ram_bw: float | None,
    decode_ram: float,
    prefill_pcie: float,
    split: list[int],
    p: Prepared,
) -> Placement:
    layers = model.num_hidden_layers
    parts = []
    used = [s for s in shares if s.layers]
    if len(used) > 1:
        parts.append(
            "layers split by memory: " + ", ".join(f"{s.layers} on {s.name}" for s in used)
        )
    if expert_cpu and cpu_layers == 0:
        parts.append(
            f"attention and shared weights on the GPU, {expert_cpu} of {moe_layers} expert "
            "layers in RAM"
        )
    elif expert_cpu or cpu_layers:
        parts.append(
            f"{layers - cpu_layers} of {layers} layers on the GPU, {cpu_layers} in RAM"
            + (
                f" (and the experts of {expert_cpu} of {moe_layers} MoE layers)"
                if expert_cpu
                else ""
            )
        )
    if not parts:
        parts.append(f"all {layers} layers on the GPU")
    offload = "none"
    if expert_cpu and cpu_layers:
        offload = "experts+layers"
    elif expert_cpu:
        offload = "experts"
    elif cpu_layers:
        offload = "layers"
    flags = []
    if p.runtime.split == "layers":
        flags.append(f"-ngl {layers - cpu_layers if cpu_layers else 99}")
        if expert_cpu:
            flags.append(f"--n-cpu-moe {expert_cpu}")
        if len(split) > 1:
            flags.append("--tensor-split " + ",".join(str(c) for c in split))
    return Placement(
        description="; ".join(parts),
        cards=tuple(shares),
        offload=offload,
        gpu_layers=layers - cpu_layers,
        cpu_layers=cpu_layers,
        expert_layers_in_ram=expert_cpu,
        moe_layers=moe_layers,
        ram_needed_gb=ram_bytes / GB,
        ram_usable_gb=None if ram_usable is None else ram_usable / GB,
        ram_bandwidth_gbs=ram_bw,
        decode_ram_s=decode_ram,
        prefill_pcie_s=prefill_pcie,
        launch_flags=" ".join(flags),
    )


def _launch(command: str, flags: str, p: Prepared) -> str:
    """The runtime's command with the split and offload flags in place of its defaults."""
    if p.runtime.split != "layers" or not flags:
        return command
    words = command.split(" ")
    out: list[str] = []
    skip = 0
    for word in words:
        if skip:
            skip -= 1
            continue
        if word in ("-ngl", "--tensor-split", "--n-cpu-moe"):
            skip = 1
            continue
        out.append(word)
    head = out[:3] if len(out) >= 3 else out  # "llama-server -m <file>"
    return " ".join(head + flags.split(" ") + out[len(head) :])


def _findings(build: BuildSpec, p: Prepared, placement: Placement | None) -> list[Finding]:
    out = []
    if build.is_mixed and p.runtime.split != "layers":
        out.append(
            Finding(
                "caution",
                f"{p.runtime.name} tensor parallelism needs identical cards; these "
                f"{len(build.accelerator_groups)} card kinds run as a pipeline of whole layers "
                "instead (each card's share at its own bandwidth)",
            )
        )
    elif build.is_mixed:
        out.append(
            Finding(
                "info",
                "Mixed cards: llama.cpp splits whole layers in proportion to each card's free "
                "memory (--tensor-split); a token takes the sum of every card's share at its "
                "own bandwidth, so the slowest card sets much of the pace",
            )
        )
    if placement is not None and placement.offload != "none":
        out.append(
            Finding(
                "info",
                f"Offloaded: {placement.description}. {placement.ram_needed_gb:,.0f} GB of "
                "weights sit in host RAM and are read by the CPU at "
                f"{placement.ram_bandwidth_gbs or DEFAULT_RAM_BANDWIDTH_GBS:,.0f} GB/s peak each "
                "token; prefill "
                "streams them over PCIe to the GPU (estimate)",
            )
        )
        if placement.ram_bandwidth_gbs is None:
            out.append(
                Finding(
                    "caution",
                    "The host's RAM bandwidth is not stated: the offloaded part is read at "
                    f"{DEFAULT_RAM_BANDWIDTH_GBS:g} GB/s (dual-channel DDR4-3200), an assumption. "
                    "Give host.ram_bandwidth_gbs (or channels and speed)",
                )
            )
    return out


def _verdict(memory: MemoryBreakdown, placement: Placement) -> str:
    if placement.offload == "none":
        return (
            f"Yes — split over the cards, {memory.spare_gb:,.0f} GB to spare "
            "(whole layers per card)"
        )
    return f"Yes, with offload — {placement.description}"


def _no_fit(
    base: Estimate,
    build: BuildSpec,
    p: Prepared,
    caps: list[float],
    layers: int,
    allowed: bool,
    *,
    ram_bytes: float | None = None,
) -> Estimate:
    """The base answer with the reason the parts do not help."""
    extra = [f for f in _findings(build, p, None) if "identical cards" in f.message]
    if ram_bytes is not None:
        ram = build.host.ram_gb if build.host else None
        extra.append(
            Finding(
                "blocker",
                f"Offload would need {ram_bytes / GB:,.0f} GB of host RAM"
                + (f"; the host has {ram:,.0f} GB" if ram else "; the host's RAM is not stated"),
            )
        )
    elif not allowed and build.host is not None and build.host.ram_gb:
        extra.append(
            Finding(
                "info",
                "Offload to host RAM is off (workload offload=none) or the runtime keeps every "
                "weight in accelerator memory",
            )
        )
    return replace(
        base,
        fits=False,
        throughput=None,
        findings=base.findings + tuple(extra),
        memory=replace(base.memory, available_total_gb=sum(caps) / GB),
    )
