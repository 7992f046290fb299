"""A build of parts in words: the placement, the launch flags, findings, verdict, no-fit answer."""

from __future__ import annotations

from dataclasses import replace

from .launch import launch_command, model_ref_for
from .parts_split import DEFAULT_RAM_BANDWIDTH_GBS
from .prep import GB, GIB
from .prepared import Prepared
from .results import CardShare, Estimate, Finding, MemoryBreakdown, Placement
from .specs import BuildSpec, ModelSpec, Workload

# What a serving runtime's command for the parts plan is made from: the first card kind's
# build and workload, and the model's reference (launch.model_ref_for).
LaunchInputs = tuple[BuildSpec, Workload, str]


def placement_of(
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
    stated_split: bool = False,
) -> Placement:
    """Where the weights live, in words and as the runtime's flags."""
    layers = model.num_hidden_layers
    parts = []
    used = [s for s in shares if s.layers]
    if len(used) > 1:
        how = "as the tensor split states" if stated_split else "by memory"
        parts.append(f"layers split {how}: " + _layers_per_card(used))
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


def pipeline_command(
    p: Prepared, build: BuildSpec, workload: Workload, model_ref: str, split: list[int]
) -> str:
    """A serving runtime's command for the parts plan (launch.py): tensor parallel 1, a pipeline
    stage per card holding layers with the split's layer counts, one replica, and otherwise the
    first card kind's inputs (its usable share of memory, KV format, context and batch)."""
    counts = tuple(c for c in split if c)
    runtime = p.runtime.name
    return launch_command(
        runtime=runtime,
        model_ref=model_ref_for(model_ref, runtime, workload.precision),
        build=build,
        workload=workload,
        tp=1,
        pp=len(counts),
        replicas=1,
        expert_parallel=False,
        memory_utilization=p.usable_per_accel / (build.accelerator.memory_gb * GIB),
        kv_precision=p.kv_precision,
        layer_partition=counts,
    )


def launch_with_flags(
    command: str, placement: Placement, p: Prepared, split: list[int], inputs: LaunchInputs
) -> str:
    """The runtime's command with the placement's split and offload flags in place of its
    defaults; a serving runtime's command is made for the parts plan (pipeline_command) from
    `inputs`, the first card kind's (build, workload, model reference)."""
    if p.runtime.split != "layers":
        return pipeline_command(p, *inputs, split)
    flags = placement.launch_flags
    if not flags:
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


def parts_findings(build: BuildSpec, p: Prepared, placement: Placement | None) -> list[Finding]:
    """Notes on mixed cards and offload."""
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


# Brand words a card's catalog name starts with that a "2× RTX 3090" label leaves out.
_LABEL_PREFIXES = ("NVIDIA ", "GeForce ", "AMD ")


def _layers_per_card(used: list[CardShare]) -> str:
    """ "12 on RTX 4090, 22 + 22 + 22 on 3× RTX 3090": runs of one card kind named once."""
    runs: list[tuple[str, list[int]]] = []
    for share in used:
        name = short_card_name(share.name)
        if runs and runs[-1][0] == name:
            runs[-1][1].append(share.layers)
        else:
            runs.append((name, [share.layers]))
    return ", ".join(
        f"{' + '.join(map(str, layers))} on {f'{len(layers)}× ' if len(layers) > 1 else ''}{name}"
        for name, layers in runs
    )


def short_card_name(name: str) -> str:
    """A card's name without its brand words: "NVIDIA GeForce RTX 3090" -> "RTX 3090"."""
    for prefix in _LABEL_PREFIXES:
        name = name.removeprefix(prefix)
    return name


def accelerators_label(spec: BuildSpec) -> str:
    """The cards of one node in words: "2× RTX 3090 + 1× RTX 4090" (same cards counted once)."""
    counts: dict[str, int] = {}
    for group in spec.accelerator_groups:
        name = short_card_name(group.accelerator.name)
        counts[name] = counts.get(name, 0) + group.count_per_node
    return " + ".join(f"{count}× {name}" for name, count in counts.items())


def parts_verdict(memory: MemoryBreakdown, placement: Placement) -> str:
    """The Yes answer of a build whose parts make the model fit."""
    if placement.offload == "none":
        return (
            f"Yes — split over the cards, {memory.spare_gb:,.0f} GB to spare "
            "(whole layers per card)"
        )
    return f"Yes, with offload — {placement.description}"


def parts_no_fit(
    base: Estimate,
    build: BuildSpec,
    p: Prepared,
    caps: list[float],
    layers: int,
    allowed: bool,
    *,
    ram_bytes: float | None = None,
    offload_off: bool = False,
) -> Estimate:
    """The base answer with the reason the parts do not help (a runtime that keeps every
    weight on the cards is explained by estimate.py, which knows the llama.cpp answer)."""
    extra = [f for f in parts_findings(build, p, None) if "identical cards" in f.message]
    if ram_bytes is not None:
        ram = build.host.ram_gb if build.host else None
        extra.append(
            Finding(
                "blocker",
                f"Offload would need {ram_bytes / GB:,.0f} GB of host RAM"
                + (f"; the host has {ram:,.0f} GB" if ram else "; the host's RAM is not stated"),
            )
        )
    elif offload_off and build.host is not None and build.host.ram_gb:
        extra.append(Finding("info", "Offload to host RAM is off (workload offload=none)"))
    memory = replace(base.memory, available_total_gb=sum(caps) / GB)
    if not base.fits:
        # Mixed cards: the base's No names N cards of the first kind, not this build's cards.
        verdict = no_fit_verdict(build, memory, ram_bytes) if build.is_mixed else base.verdict
        return replace(
            base,
            fits=False,
            verdict=verdict,
            throughput=None,
            findings=base.findings + tuple(extra),
            memory=memory,
        )
    # The first card kind alone would hold it (the base's Yes), these cards do not: the
    # base's verdict, per-token cost and capacity searches are not this build's.
    return replace(
        base,
        fits=False,
        verdict=no_fit_verdict(build, memory, ram_bytes),
        throughput=None,
        findings=tuple(f for f in base.findings if f.severity != "info") + tuple(extra),
        memory=memory,
        cost=replace(
            base.cost, joules_per_token=None, usd_per_million_tokens=None, billed_tokens_per_s=None
        ),
        max_context_tokens_that_fit=None,
        max_batch_that_fits=None,
    )


def no_fit_verdict(build: BuildSpec, memory: MemoryBreakdown, ram_bytes: float | None) -> str:
    """The No answer of a build of parts that the first card kind alone would hold (its
    estimate assumed identical cards and no whole-layer rounding)."""
    cards = f"{accelerators_label(build)} ({build.total_memory_gb:,.0f} GB in all)"
    if ram_bytes is not None:
        return f"No — {cards}; offload would need {ram_bytes / GB:,.0f} GB of host RAM"
    if memory.total_gb > memory.available_total_gb:
        return f"No — {cards}; needs {memory.total_gb:,.0f} GB"
    return (
        f"No — {cards}; needs {memory.total_gb:,.0f} GB of {memory.available_total_gb:,.0f} GB "
        "usable, but whole layers per card leave some card short of room for its share"
    )
