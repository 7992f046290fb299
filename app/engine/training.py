"""Training and fine-tuning throughput, time and cost."""

from __future__ import annotations

from .plan import Prepared
from .prep import peak_flops
from .results import CostFigures, TrainingFigures
from .runtime import MFU_DEFAULT, MFU_LORA, MFU_QLORA
from .specs import BuildSpec, ModelSpec, Workload


def training_figures(
    p: Prepared, model: ModelSpec, build: BuildSpec, workload: Workload, cost: CostFigures
) -> TrainingFigures:
    """Tokens/s at a model-FLOPs utilisation, hours for training_tokens, and their cost."""
    mode = workload.mode
    if workload.model_flops_utilization is not None:
        mfu = workload.model_flops_utilization
    else:
        mfu = {"training": MFU_DEFAULT, "lora": MFU_LORA}.get(mode, MFU_QLORA)
    compute = p.precision.compute if mode == "training" else "fp16"
    peak, _ = peak_flops(build, compute if compute in ("fp8", "fp16") else "fp16")
    s = workload.context_tokens
    # Causal attention per token, forward: attention_flops x s / 2 context tokens per layer.
    attn = model.attention_flops_per_context_token * model.num_hidden_layers * s / 2.0
    forward = 2.0 * model.params_active_matmul + attn
    # Full training: forward + backward (2x forward) = 6N per token (Kaplan et al. 2020).
    # LoRA: the frozen base still needs activation gradients (2N) but no weight gradients.
    flops_per_token = 3.0 * forward if mode == "training" else 2.0 * forward
    tokens_per_s = build.accelerator_count * peak * mfu / flops_per_token
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
    )
