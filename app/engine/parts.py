"""Builds made of parts: mixed cards in one node, and weights kept in host RAM (offload).

`with_parts(...)` takes the estimate of the build's first card kind and re-derives fit, plan,
speed and cost where the parts matter (docs/engine.md, "Mixed cards and offload"):

- Mixed cards (layer split, as llama.cpp's `--tensor-split` by free memory): every card holds
  whole layers in proportion to its usable memory; a token's time is the sum of each card's
  share of the bytes read at that card's own bandwidth. vLLM-style tensor parallelism needs
  identical cards, so a tensor-parallel runtime pipelines across the cards instead.
- Offload (llama.cpp): MoE routed experts of N layers kept in RAM (`--n-cpu-moe N`), then whole
  layers on the CPU (`-ngl`), the fewest that make the rest fit. Decode adds the bytes read
  from RAM at the host's bandwidth; prefill copies the RAM-resident weights each micro-batch
  uses (its routed experts only) over PCIe to the GPU (llama.cpp offloads batches of >= 32
  tokens to the GPU; a shorter one is read by the CPU).
"""

from __future__ import annotations

from dataclasses import replace

from .cost import billed_tokens_per_s, cost_figures
from .graph_capture import host_floor, host_issue_s_without_graphs, launch_s_without_graphs
from .model_shape import distinct_experts
from .parts_split import (
    CPU_BANDWIDTH_EFFICIENCY,
    DEFAULT_RAM_BANDWIDTH_GBS,
    FIT_TARGET_GIB,
    HOST_RESERVED_GIB,
    card_issue_s,
    card_read_s,
    cards_of,
    moe_layer_indices,
    placement_candidates,
    prefill_offload_s,
    split_by_ratio,
    split_compute,
    split_layers,
    ttft_guess,
)
from .parts_text import launch_with_flags, parts_findings, parts_no_fit, parts_verdict, placement_of
from .prep import GB, GIB
from .prepared import Prepared
from .results import CardShare, Estimate, Throughput
from .runtime import LINK_EFFICIENCY, LINK_LATENCY_US, RUNTIMES
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload


def needs_parts(build: BuildSpec, workload: Workload, base: Estimate) -> bool:
    """True when mixed cards or offload change the answer for this build and workload."""
    # Cheapest tests first: this runs on every estimate.
    if build.nodes != 1 or workload.mode != "inference":
        return False
    # A stated --tensor-split matters where the runtime splits by layers (llama.cpp, Ollama).
    profile = RUNTIMES.get(base.runtime)
    stated = workload.tensor_split is not None and profile is not None and profile.split == "layers"
    mixed = build.is_mixed or stated
    forced = workload.gpu_layers is not None or workload.cpu_moe_layers is not None
    if not mixed and ((base.fits and not forced) or not _offload_allowed(build, workload)):
        return False
    # Unified memory: there is no separate VRAM to offload from.
    return all(g.accelerator.memory_kind != "unified" for g in build.accelerator_groups)


def _offload_allowed(build: BuildSpec, workload: Workload) -> bool:
    """Weights may stay in host RAM: a stated RAM size to fit them in, or a placement given by
    hand (-ngl / --n-cpu-moe, Ollama's num_gpu), which says itself what went to the CPU."""
    if workload.offload != "auto":
        return False
    host = build.host
    forced = workload.gpu_layers is not None or workload.cpu_moe_layers is not None
    return forced or (host is not None and bool(host.ram_gb))


def with_parts(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    costs: CostAssumptions,
    base: Estimate,
    p: Prepared,
    model_ref: str,
) -> Estimate:
    """The estimate re-derived for mixed cards and host-RAM offload (see the module text)."""
    layers = model.num_hidden_layers
    batch = workload.batch
    cards = cards_of(build)
    frac = workload.memory_utilization or p.runtime.usable_fraction_discrete
    per_card_fixed = p.runtime.overhead_gb * GB + base.memory.activations_gb * GB / max(
        1, base.plan.tensor_parallel * base.plan.pipeline_parallel
    )
    caps = [acc.memory_gb * GIB * frac - per_card_fixed for acc, _ in cards]
    kv_layer = p.kv_seq_bytes * batch / layers
    nonexpert_layer = p.nonexpert_body_bytes / layers
    experts_layer = model.n_routed_experts * p.expert_bytes
    moe_every = set(moe_layer_indices(model))
    head = p.head_bytes
    # llama.cpp keeps the input embedding in host RAM (memory.stages): only the output layer
    # goes with the last card.
    embed = 0.0 if p.runtime.ggml_layout else p.embed_bytes

    allowed = _offload_allowed(build, workload) and p.runtime.split == "layers"
    candidates, head_cpu = placement_candidates(workload, layers, len(moe_every), allowed)

    def gpu_sizes(expert_cpu: int, cpu_layers: int) -> list[float]:
        out = []
        cpu_moe = sorted(moe_every)[:expert_cpu]
        for index in range(cpu_layers, layers):
            size = nonexpert_layer + kv_layer
            if index in moe_every and index not in cpu_moe:
                size += experts_layer
            out.append(size)
        if out and not head_cpu:
            out[-1] += head + embed  # output layer with the last layer (llama.cpp puts it last)
        return out

    choice: tuple[int, int, list[int]] | None = None
    forced = workload.gpu_layers is not None or workload.cpu_moe_layers is not None
    # A stated --tensor-split with one share per card; else llama.cpp's split by free memory.
    ratios = workload.tensor_split if len(workload.tensor_split or ()) == len(cards) else None
    ratios = ratios if p.runtime.split == "layers" else None
    for expert_cpu, cpu_layers in candidates:
        sizes = gpu_sizes(expert_cpu, cpu_layers)
        offloads = expert_cpu > 0 or cpu_layers > 0
        margin = FIT_TARGET_GIB * GIB if offloads and not forced else 0.0
        room = [c - margin for c in caps]
        if not sizes:
            split: list[int] | None = [0] * len(cards)
        elif ratios is not None:
            split = split_by_ratio(sizes, room, ratios, len(sizes) + (0 if head_cpu else 1))
        else:
            split = split_layers(sizes, room)
        if split is not None:
            choice = (expert_cpu, cpu_layers, split)
            break
    host = build.host
    ram_usable = (host.ram_gb * GIB - HOST_RESERVED_GIB * GIB) if host and host.ram_gb else None
    if choice is None:
        return parts_no_fit(
            base, build, p, caps, layers, allowed, offload_off=workload.offload == "none"
        )
    expert_cpu, cpu_layers, split = choice
    cpu_moe = sorted(moe_every)[:expert_cpu]
    ram_bytes = expert_cpu * experts_layer + cpu_layers * (nonexpert_layer + kv_layer)
    ram_bytes += sum(
        experts_layer for i in range(cpu_layers) if i in moe_every and i not in cpu_moe
    )
    ram_bytes += (head + embed) if head_cpu else 0.0
    # RAM unknown: only a placement given by hand gets here, and it ran (or failed) as stated.
    if ram_bytes > 0 and ram_usable is not None and ram_bytes > ram_usable:
        return parts_no_fit(base, build, p, caps, layers, allowed, ram_bytes=ram_bytes)

    # Decode: each card reads its layers' active bytes at its own bandwidth; RAM-resident parts
    # are read by the CPU at the host's bandwidth.
    active_experts = distinct_experts(model.n_routed_experts, model.num_experts_per_tok, batch)
    active_expert_bytes = active_experts * p.expert_bytes
    eff = p.bandwidth_efficiency
    shares: list[CardShare] = []
    index = cpu_layers
    sizes = gpu_sizes(expert_cpu, cpu_layers)
    reads: list[float] = []
    weights: list[tuple[float, float]] = []  # each card's (non-expert, all) weight bytes
    for count in split:
        read = 0.0
        for layer in range(index, index + count):
            read += nonexpert_layer + kv_layer
            if layer in moe_every and layer not in cpu_moe:
                read += active_expert_bytes
        last = head if index + count == layers and not head_cpu else 0.0
        reads.append(read + last)
        weights.append((count * nonexpert_layer + last, read + last - count * kv_layer))
        index += count
    base_t = base.throughput
    if base_t is not None and sum(reads) > 0 and ram_bytes == 0:
        # Everything on the cards: the bytes the engine's own decode model reads (KV window
        # caps, embeddings ...), shared out over the cards as this split holds them.
        base_bytes = base_t.decode_memory_s * cards[0][0].memory_bandwidth_gbs * GB * eff
        reads = [r * base_bytes / sum(reads) for r in reads]
    issue = card_issue_s(p, build, workload, cards, weights)
    decode_gpu = 0.0
    index = cpu_layers
    for i, ((acc, _), count, cap, read) in enumerate(zip(cards, split, caps, reads, strict=True)):
        seconds = card_read_s(p, build, read / (acc.memory_bandwidth_gbs * GB * eff), issue[i])
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
    ram_read += head if head_cpu else 0.0
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
    # No base estimate (the model spills into RAM), or a base whose fixed time may hold its own
    # wait for the host's launches (graph_capture.host_floor): the base's per-step costs before that
    # wait (speed.py's _decode_coefficients), launches without CUDA graphs included.
    host_issue = host_issue_s_without_graphs(p.runtime, build, model, workload)
    fixed = base_t.decode_fixed_s if base_t and not host_issue else (
        p.fixed_pass_s + p.runtime.fixed_s_per_step
        + launch_s_without_graphs(p.runtime, build, model, workload)
    )
    compute, prompt_scale = split_compute(base_t, cards, split, p, issue)
    memory_s = decode_gpu + decode_ram
    step, fixed = host_floor(max(memory_s, compute) + comm + fixed, fixed, host_issue)
    # Prefill on the GPUs: the base prompt time scaled by each card's share of the layers and
    # its compute rate, plus the RAM-resident weights each micro-batch uses crossing PCIe (or
    # read by the CPU for a micro-batch too short to offload).
    expert_ram_layers = len(set(cpu_moe) | (moe_every & set(range(cpu_layers))))
    prefill_pcie, prefill_cpu = prefill_offload_s(
        model,
        workload.prompt_tokens,
        p.runtime.prefill_chunk_tokens,
        cpu_layers * nonexpert_layer + (head if head_cpu else 0.0),
        expert_ram_layers,
        p.expert_bytes,
        slowest_link * GB * LINK_EFFICIENCY,
        ram_bw * GB * CPU_BANDWIDTH_EFFICIENCY,
    )
    ttft_base = base_t.time_to_first_token_s if base_t else ttft_guess(p, model, workload, cards)
    ttft = ttft_base * prompt_scale + prefill_pcie + prefill_cpu
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
    placement = placement_of(
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
        stated_split=ratios is not None,
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
    findings.extend(parts_findings(build, p, placement))
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
        launch_command=launch_with_flags(
            base.plan.launch_command, placement, p, split, (build, workload, model_ref)
        ),
        replicas_active=1,
    )
    verdict = parts_verdict(memory, placement)
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
        max_batch_that_fits=None,  # both searches assume one card kind, nothing in RAM
        max_context_tokens_that_fit=None,
    )
