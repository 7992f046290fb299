"""The verdict and the findings (blocker / caution / info) of one estimate."""

from __future__ import annotations

from .graph_capture import decode_kernels, host_issue_s_without_graphs, launch_s_without_graphs
from .precision import ggml_gemm_compute, gguf_file_type, is_gguf_type
from .prep import GB, is_apple, link_for, peak_flops, usable_fraction
from .prepared import Prepared
from .results import Finding, MemoryBreakdown, Throughput
from .specs import BuildSpec, ModelSpec, Workload


def _fmt(gb: float) -> str:
    return f"{gb:,.0f}" if gb >= 10 else f"{gb:,.1f}"


def estimate_verdict(
    fits: bool, build: BuildSpec, mem: MemoryBreakdown, tp: int, pp: int, need_accel: float
) -> str:
    """The one-line Yes / No answer with the figures that decide it."""
    n = build.accelerator_count
    size = _fmt(build.accelerator.memory_gb)
    total_raw = _fmt(mem.build_memory_gb)
    if fits:
        return (
            f"Yes — {_fmt(mem.available_total_gb)} GB usable of {total_raw} GB, needs "
            f"{_fmt(mem.total_gb)} GB, {_fmt(mem.spare_gb)} GB to spare"
        )
    if n > 1 and not build.memory_pooled:
        where = f"{n} isolated {size} GB cards ({total_raw} GB in all)"
    elif n > 1:
        where = f"{n} × {size} GB {build.accelerator.name} ({total_raw} GB in all)"
    else:
        where = f"{size} GB on one {build.accelerator.name}"
    if mem.total_gb > mem.available_total_gb:
        return f"No — {where}; needs {_fmt(mem.total_gb)} GB"
    split = f"{pp} stages" if pp > 1 else "one stage"
    if tp > 1:
        split += f" × tensor parallel {tp}"
    return (
        f"No — {where}; split over {split} the fullest accelerator needs "
        f"{_fmt(need_accel / GB)} GB of {_fmt(mem.available_per_accelerator_gb)} GB usable"
    )


def estimate_findings(
    p: Prepared,
    fits: bool,
    model: ModelSpec,
    build: BuildSpec,
    workload: Workload,
    tp: int,
    pp: int,
    mem: MemoryBreakdown,
    tput: Throughput | None,
    max_ctx: int | None,
    mem_replicas: int = 1,
) -> tuple[Finding, ...]:
    """Blockers, cautions and notes about one estimate."""
    out: list[Finding] = []
    if not fits:
        out.append(
            Finding(
                "blocker",
                f"Does not fit: needs {_fmt(mem.total_gb)} GB, "
                f"{_fmt(mem.available_total_gb)} GB usable",
            )
        )
    if (
        build.nodes > 1
        and build.inter_node_link.kind == "none"
        and tp * pp > build.accelerators_per_node
    ):
        out.append(Finding("blocker", "The split spans nodes but the build has no inter-node link"))
    # llama.cpp runs an MXFP4 GGUF at its block-kernel rate, not a tensor FP4 rate.
    compute = ggml_gemm_compute(p.precision, None) if p.runtime.ggml_layout else p.precision.compute
    _, used = peak_flops(build, compute)
    if compute in ("fp8", "fp4", "int8") and used != compute:
        out.append(
            Finding(
                "caution",
                f"{build.accelerator.name} has no {compute.upper()} tensor rate: "
                f"weights are stored at {p.precision.name} but compute runs at "
                f"{used.upper()}",
            )
        )
    if p.precision.family == "gguf" and p.runtime.name not in ("llama.cpp", "ollama"):
        out.append(
            Finding(
                "caution",
                "GGUF formats are native to llama.cpp; other runtimes support them partially",
            )
        )
    elif (
        p.mode == "inference"
        and not is_gguf_type(p.precision)  # MXFP4 is one (gpt-oss files)
        and p.runtime.name in ("llama.cpp", "ollama")
        and p.precision.bits_per_weight < 16
    ):
        out.append(
            Finding(
                "caution",
                f"{p.runtime.name} runs GGUF files: {p.precision.name} weights are estimated "
                f"as given; the closest GGUF format is {gguf_file_type(p.precision)}",
            )
        )
    if (
        tp > 1
        and build.intra_node_link.kind in ("pcie", "none")
        and tp <= build.accelerators_per_node
    ):
        kind = link_for(build, tp)[2]
        out.append(
            Finding(
                "caution",
                f"Tensor parallel {tp} over {kind}: two all-reduces per layer cross a slow link",
            )
        )
    if tp > 1 and not model.kv_lora_rank and model.num_key_value_heads < tp:
        out.append(
            Finding(
                "info",
                f"{model.num_key_value_heads} KV heads over tensor parallel "
                f"{tp}: KV heads are replicated",
            )
        )
    if tp > 1 and model.kv_lora_rank:
        out.append(Finding("info", "MLA latent cache is replicated on every tensor-parallel rank"))
    if pp > 1 and workload.batch < pp and p.mode == "inference":
        out.append(
            Finding(
                "info",
                f"Pipeline of {pp} stages with batch {workload.batch}: stages "
                "run one after another, so a single stream is no faster "
                "than one accelerator",
            )
        )
    if fits and p.mode == "inference":
        idle = build.accelerator_count - tp * pp * min(workload.batch, mem_replicas)
        if idle > 0:
            out.append(
                Finding(
                    "info",
                    f"{idle} accelerator(s) hold no sequence at batch {workload.batch}: they "
                    "add no tokens/s but still draw power and cost money",
                )
            )
    cap = model.max_position_embeddings
    if cap and workload.context_tokens > cap:
        out.append(
            Finding(
                "caution",
                f"context_tokens {workload.context_tokens:,} exceeds the model's {cap:,} positions",
            )
        )
    if fits and mem.available_per_accelerator_gb > 0:
        headroom = 1.0 - mem.per_accelerator_gb / mem.available_per_accelerator_gb
        if headroom < 0.05:
            out.append(
                Finding("caution", "Less than 5 % memory headroom on the fullest accelerator")
            )
    if build.accelerator.memory_kind == "unified" and workload.memory_utilization is None:
        share = usable_fraction(build, workload, p.runtime)
        how = (
            "macOS default wired limit; raise it with sysctl iogpu.wired_limit_mb and set "
            "memory_utilization"
            if is_apple(build)
            else "the platform's GPU allocation; set memory_utilization to override"
        )
        out.append(
            Finding("info", f"Unified memory: {share:.0%} of RAM assumed usable by the GPU ({how})")
        )
    if tput is not None:
        fixed_share = tput.decode_fixed_s / tput.decode_step_s
        if fixed_share > 0.3:
            out.append(
                Finding(
                    "info",
                    f"Fixed per-layer and per-step costs (kernel launches, MoE routing, "
                    f"scheduling) are {fixed_share:.0%} of each decode step",
                )
            )
        launches = launch_s_without_graphs(p.runtime, build, model, workload)
        if launches > 0:
            # The one place that decides it (graph_capture.launch_s_without_graphs), in words.
            why = "a build from before CUDA graphs" if not workload.cuda_graphs else (
                "ggml-cuda uses CUDA graphs only from compute capability 8.0 (Ampere)"
            )
            host = host_issue_s_without_graphs(p.runtime, build, model, workload)
            if host >= tput.decode_step_s * (1 - 1e-9):
                cost = (
                    f"launching its {decode_kernels(model):,} kernels takes {host * 1e3:.1f} ms "
                    f"per token, longer than the GPU's work, so the host sets the pace (estimate)"
                )
            else:
                cost = f"{launches * 1e3:.2f} ms per token (estimate)"
            out.append(
                Finding(
                    "info",
                    f"llama.cpp decodes without CUDA graphs here ({why}): the host launches "
                    f"every kernel, {cost}",
                )
            )
        if tput.compute_bound_batch is not None:
            out.append(
                Finding(
                    "info",
                    f"Decode turns compute-bound from about "
                    f"{tput.compute_bound_batch:,} concurrent sequences",
                )
            )
    if fits and max_ctx is not None and p.mode == "inference" and max_ctx < workload.context_tokens:
        out.append(Finding("caution", f"Only {max_ctx:,} tokens of context fit at this batch"))
    return tuple(out)
