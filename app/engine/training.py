"""Training and fine-tuning throughput, time and cost."""

from __future__ import annotations

from .prep import link_for, peak_flops
from .prepared import Prepared
from .results import CostFigures, TrainingFigures
from .runtime import (
    FP8_TRAINING_SPEEDUP,
    LINK_EFFICIENCY,
    MFU_DEFAULT,
    MFU_LORA,
    MFU_QLORA,
    OVERLAPPED_SHARE_OF_BACKWARD,
)
from .specs import BuildSpec, ModelSpec, Workload


def training_figures(
    p: Prepared,
    model: ModelSpec,
    build: BuildSpec,
    workload: Workload,
    cost: CostFigures,
    tp: int = 1,
    pp: int = 1,
    dp: int = 1,
) -> TrainingFigures:
    """Tokens/s at a model-FLOPs utilisation, hours for training_tokens, and their cost.

    Data-parallel replicas exchange gradients every step (ring all-reduce of the bf16
    gradients; ZeRO-3 all-gathers the weights twice and reduce-scatters the gradients, 1.5x
    the volume). The runtime overlaps that traffic with the backward pass; only the part
    longer than the overlappable backward time adds to the step.
    """
    mode = workload.mode
    if workload.model_flops_utilization is not None:
        mfu = workload.model_flops_utilization
    else:
        mfu = {"training": MFU_DEFAULT, "lora": MFU_LORA}.get(mode, MFU_QLORA)
    peak, _ = peak_flops(build, "fp16")
    if mode == "training" and p.precision.compute == "fp8":
        # FP8 training (Transformer Engine / torchao float8) speeds steps up 1.3-1.5x over
        # bf16, not the tensor cores' 2x: attention, norms and casts stay in 16-bit.
        fp8_peak, used = peak_flops(build, "fp8")
        if used == "fp8":
            peak = min(fp8_peak, peak * FP8_TRAINING_SPEEDUP)
    s = workload.context_tokens
    # Causal attention per token, forward: attention_flops x s / 2 context tokens per layer.
    attn = model.attention_flops_per_context_token * model.num_hidden_layers * s / 2.0
    forward = 2.0 * model.params_active_matmul + attn
    # Full training: forward + backward (2x forward) = 6N per token (Kaplan et al. 2020);
    # LoRA: the frozen base still needs activation gradients (2N) but no weight gradients.
    # Full activation recomputation runs the forward pass once more: 8N (and 3x forward).
    passes = 3.0 if mode == "training" else 2.0
    if p.recompute:
        passes += 1.0
    flops_per_token = passes * forward
    n = build.accelerator_count
    compute_tokens_per_s = n * peak * mfu / flops_per_token
    comm_s = 0.0
    if dp > 1:
        tokens_per_step = workload.batch * s * dp
        step_s = tokens_per_step / compute_tokens_per_s
        grad_bytes = (
            (model.params_total if mode == "training" else p.trainable_params) * 2.0 / (tp * pp)
        )
        volume = 2.0 * (dp - 1) / dp * grad_bytes
        if mode == "training" and workload.zero_stage >= 3:
            volume *= 1.5
        bw, lat, _ = link_for(build, tp * pp * dp)
        transfer = volume / (bw * LINK_EFFICIENCY) + 2 * (dp - 1) * lat
        backward = step_s * (passes - 1.0) / passes
        comm_s = max(0.0, transfer - OVERLAPPED_SHARE_OF_BACKWARD * backward)
        tokens_per_s = tokens_per_step / (step_s + comm_s)
    else:
        tokens_per_s = compute_tokens_per_s
    hours = None
    cost_usd = None
    if workload.training_tokens:
        hours = workload.training_tokens / tokens_per_s / 3600.0
        if cost.usd_per_hour is not None:
            cost_usd = hours * cost.usd_per_hour
    return TrainingFigures(
        tokens_per_s=tokens_per_s,
        time_to_train_hours=hours,
        cost_usd=cost_usd,
        model_flops_utilization=mfu,
        flops_per_token=flops_per_token,
        trainable_params=p.trainable_params,
        communication_s_per_step=comm_s,
        recomputation=p.recompute,
    )
