"""Memory on the fullest accelerator of a (tensor x pipeline) split, and what else would fit."""

from __future__ import annotations

from .prep import GB
from .prepared import ADAPTER_STATE_BYTES, TRAIN_GRAD_BYTES, TRAIN_OPTIMIZER_BYTES, Prepared
from .runtime import COMM_BUFFER_GB
from .specs import BuildSpec, ModelSpec, Workload


class Need:
    """Bytes on the fullest accelerator, by component, and their sum.

    A plain slotted class rather than a frozen dataclass: the plan search builds one per
    candidate split, and nothing outside the engine sees it."""

    __slots__ = ("weights", "kv", "activations", "overhead", "optimizer", "gradients", "total")

    def __init__(
        self,
        weights: float,
        kv: float,
        activations: float,
        overhead: float,
        optimizer: float,
        gradients: float,
    ) -> None:
        self.weights, self.kv, self.activations = weights, kv, activations
        self.overhead, self.optimizer, self.gradients = overhead, optimizer, gradients
        self.total = weights + kv + activations + overhead + optimizer + gradients


def kv_share(model: ModelSpec, tp: int) -> float:
    """Share of a layer's KV cache one tensor-parallel rank holds."""
    if model.kv_lora_rank:
        return 1.0  # the MLA latent is not split by heads: every rank keeps all of it
    return max(1.0 / tp, 1.0 / model.num_key_value_heads)


def need_per_accel(
    p: Prepared, model: ModelSpec, build: BuildSpec, workload: Workload, tp: int, pp: int, dp: int
) -> Need:
    """Bytes on the fullest accelerator of one replica split tp x pp, with dp replicas."""
    layers = model.num_hidden_layers
    lps = -(-layers // pp)
    frac = lps / layers
    edge = (
        p.embed_bytes + p.head_params_bytes if pp == 1 else max(p.embed_bytes, p.head_params_bytes)
    )
    overhead = p.runtime.overhead_gb * GB
    if build.accelerator.memory_kind == "unified":
        overhead *= 0.5  # no separate CUDA context copy of host allocations
    if tp * pp > 1:
        overhead += COMM_BUFFER_GB * GB
    if p.mode == "inference":
        weights = (p.body_bytes * frac + edge) / tp
        batch_r = -(-workload.batch // dp)
        kv = batch_r * p.kv_seq_bytes * frac * kv_share(model, tp)
        inflight = min(batch_r * workload.prompt_tokens, p.runtime.prefill_chunk_tokens)
        act = inflight * (p.act_hidden_bytes + p.act_mlp_bytes / tp)
        act += batch_r * model.vocab_size * 4.0 / tp  # fp32 logits of the last position
        return Need(weights, kv, act, overhead, 0.0, 0.0)
    # Training / fine-tuning: states sharded over tp x pp, then ZeRO over data parallel, with
    # DeepSpeed's own estimator formulas (estimate_zero2/3_model_states_mem_needs): stages 1-2
    # keep bf16 weights and gradients (4 bytes/param) and partition fp32 master weights, Adam
    # moments and the fp32 gradient partition (16 bytes/param) over dp; stage 3 partitions
    # 18 bytes/param (bf16 weights 2, fp32 gradients 4, fp32 optimizer 12) plus a gather
    # buffer of 4 bytes per parameter of the largest layer.
    shard = tp * pp
    zero = workload.zero_stage
    weights = (p.body_bytes * frac + edge) / tp
    if p.mode == "training":
        n = model.params_total / shard
        if zero == 0:
            grads = n * TRAIN_GRAD_BYTES
            optim = n * TRAIN_OPTIMIZER_BYTES
        elif zero in (1, 2):
            grads = n * TRAIN_GRAD_BYTES + n * 4.0 / dp
            optim = n * TRAIN_OPTIMIZER_BYTES / dp
        else:
            weights /= dp
            grads = n * 4.0 / dp
            optim = n * TRAIN_OPTIMIZER_BYTES / dp
            largest = max(model.vocab_size, model.intermediate_size) * model.hidden_size
            overhead += 4.0 * largest / tp  # ZeRO-3 parameter gather buffer
    else:
        n = p.trainable_params / shard
        grads = n * 2.0
        optim = n * (ADAPTER_STATE_BYTES - 2.0 - 2.0)
        weights += n * 2.0  # the adapters themselves in bf16
    act = training_activation_bytes(p, model, workload, tp, pp)
    return Need(weights, 0.0, act, overhead, optim, grads)


def training_activation_bytes(
    p: Prepared, model: ModelSpec, workload: Workload, tp: int, pp: int
) -> float:
    """Activation memory for one micro-batch, per accelerator (Korthikanti et al. 2022,
    with the MLP term for a gated (SwiGLU) MLP of the model's width)."""
    s = workload.context_tokens
    b = workload.batch
    h = model.hidden_size
    a = model.num_attention_heads
    layers = model.num_hidden_layers
    # With 1F1B the first stage holds pp micro-batches of its L/pp layers: about L layers' worth.
    stored_layers = -(-layers // pp) * pp
    scores = 0.0 if workload.flash_attention else 5.0 * a * s / h
    # Per layer, 16-bit: attention block 11sbh, two norms 4sbh, MLP input 2sbh, and for a
    # SwiGLU MLP of width I the gate, up, SiLU and product outputs (2 bytes each): 8sbI.
    # (The paper's 34sbh is the GeLU MLP with I = 4h and dropout masks.)
    mlp_width = p.act_mlp_bytes / 6.0  # act_mlp_bytes = 3 x width x 2 bytes
    per_layer_full = s * b * (h * (17.0 + scores) + 8.0 * mlp_width) / tp
    if p.recompute:
        # Full recomputation keeps each layer's input (2sbh) and rebuilds one layer at a time.
        act = stored_layers * 2.0 * s * b * h / tp + per_layer_full
    else:
        act = stored_layers * per_layer_full
    act += s * b * model.vocab_size * 4.0 / tp  # fp32 logits for the loss
    return act


def max_context_tokens(
    p: Prepared, model: ModelSpec, workload: Workload, tp: int, pp: int, dp: int, need: Need
) -> int | None:
    """Largest context_tokens that fits at the workload's batch (closed form)."""
    free = p.usable_per_accel - (need.weights + need.activations + need.overhead)
    if free <= 0:
        return 0
    layers = model.num_hidden_layers
    frac = -(-layers // pp) / layers
    batch_r = -(-workload.batch // dp)
    a = batch_r * p.kv_token_layer_bytes * kv_share(model, tp) * frac
    cap = model.max_position_embeddings
    if a <= 0:
        return cap
    lw, lf, w = p.windowed_layers, p.full_layers, p.window
    if lw and (lf + lw) * w * a >= free:
        tokens = free / (a * (lf + lw))
    elif lw:
        if lf == 0:
            return cap  # every layer is windowed: the cache stops growing at the window
        tokens = (free - a * lw * w) / (a * lf)
    else:
        tokens = free / (a * lf)
    result = int(tokens)
    return min(result, cap) if cap else result


def max_batch_that_fits(
    p: Prepared, model: ModelSpec, tp: int, pp: int, dp: int, need: Need
) -> int:
    """Most concurrent sequences at context_tokens over all replicas (closed form)."""
    free = p.usable_per_accel - (need.weights + need.activations + need.overhead)
    if free <= 0:
        return 0
    frac = -(-model.num_hidden_layers // pp) / model.num_hidden_layers
    per_seq = p.kv_seq_bytes * frac * kv_share(model, tp)
    if per_seq <= 0:
        return 0
    return int(free // per_seq) * dp
