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

    __slots__ = (
        "weights", "kv", "activations", "overhead", "optimizer", "gradients", "total",
        "layer_share", "capacity",
    )

    def __init__(
        self,
        weights: float,
        kv: float,
        activations: float,
        overhead: float,
        optimizer: float,
        gradients: float,
        layer_share: float = 1.0,
    ) -> None:
        self.weights, self.kv, self.activations = weights, kv, activations
        self.overhead, self.optimizer, self.gradients = overhead, optimizer, gradients
        self.total = weights + kv + activations + overhead + optimizer + gradients
        self.layer_share = layer_share  # share of the layers this accelerator holds
        self.capacity: tuple[int | None, int] | None = None  # see capacity()


def kv_share(model: ModelSpec, tp: int) -> float:
    """Share of a layer's KV cache one tensor-parallel rank holds."""
    if model.kv_lora_rank:
        return 1.0  # the MLA latent is not split by heads: every rank keeps all of it
    return max(1.0 / tp, 1.0 / model.num_key_value_heads)


def stages(p: Prepared, layers: int, pp: int) -> tuple[tuple[float, float], ...]:
    """(share of the layers, embedding / output bytes) of the accelerators that can be the
    fullest when the layers are split over pp stages.

    Default: ceil(L/pp) layers, the first stage holding the embedding and the last the output
    projection (the larger of the two counts). llama.cpp (`ggml_layout`): the input embedding
    stays in host RAM, and its layer split assigns L + 1 units (the output layer is unit L) by
    `upper_bound(splits, unit / (L + 1))` over equal splits, so card g holds units
    ceil(g(L+1)/pp) .. ceil((g+1)(L+1)/pp) - 1: the first card the most layers, the last one
    fewer layers and the output projection (a tied embedding is duplicated for it)."""
    if not p.runtime.ggml_layout:
        edge = (
            p.embed_bytes + p.head_params_bytes
            if pp == 1
            else max(p.embed_bytes, p.head_params_bytes)
        )
        return ((-(-layers // pp) / layers, edge),)
    if pp == 1:
        return ((1.0, p.head_bytes),)
    units = layers + 1
    first = -(-units // pp)
    last = max(0, units - -(-(pp - 1) * units // pp) - 1)  # its units less the output layer
    return ((first / layers, 0.0), (last / layers, p.head_bytes))


def score_buffer_bytes(p: Prepared, model: ModelSpec, workload: Workload) -> float:
    """llama.cpp's compute buffer for the attention scores when flash attention is off.

    ggml then materialises K*Q in F32 for one micro-batch against the whole cache: n_ubatch x
    n_kv x n_head x 4 bytes, the softmax reusing the same buffer (ikawrakow/ik_llama.cpp PR
    #237, #235), reserved at start-up for the worst case, n_tokens = min(n_ctx, n_ubatch) and
    n_kv = n_ctx. One layer's worth on each card: a layer's intermediates are freed before the
    next. With flash attention (llama.cpp's default since `-fa auto`, ggml-org/llama.cpp PR
    #15434, August 2025) the scores are tiled and never held."""
    if workload.flash_attention or not p.runtime.ggml_layout:
        return 0.0
    context = workload.context_tokens
    tokens = min(p.runtime.prefill_chunk_tokens, context)
    # A sliding-window layer scores only its window (and the micro-batch itself).
    keys = context if p.full_layers else min(context, p.window + tokens)
    return tokens * keys * model.num_attention_heads * 4.0


def ggml_compute_buffer_bytes(p: Prepared, model: ModelSpec, workload: Workload, tp: int) -> float:
    """llama.cpp's compute buffer on a card: reserved at start-up for the worst-case graph, a
    micro-batch of min(n_ctx, n_ubatch) tokens that all output logits ("graph_reserve: reserving
    a graph for ubatch with n_tokens = 512, n_seqs = 1, n_outputs = 512"). ggml's allocator
    reuses a tensor's memory once it is consumed, so the buffer is the largest phase of one
    layer, not their sum: the F32 logits of every token (Llama 3 8B: 512 x 128,256 x 4 B =
    250.5 MiB, which with the hidden states is the "CUDA0 compute buffer size = 258.50 MiB"
    llama.cpp logs), the K*Q scores without flash attention (score_buffer_bytes; at 8,192
    tokens 512 MiB), or the MLP's intermediates; plus the hidden-state buffers."""
    tokens = min(p.runtime.prefill_chunk_tokens, workload.context_tokens)
    largest = max(
        score_buffer_bytes(p, model, workload),
        tokens * model.vocab_size * 4.0,
        tokens * p.act_mlp_bytes / tp,
    )
    return tokens * p.act_hidden_bytes + largest


def need_per_accel(
    p: Prepared, model: ModelSpec, build: BuildSpec, workload: Workload, tp: int, pp: int, dp: int
) -> Need:
    """Bytes on the fullest accelerator of one replica split tp x pp, with dp replicas."""
    layers = model.num_hidden_layers
    overhead = p.runtime.overhead_gb * GB
    if build.accelerator.memory_kind == "unified":
        overhead *= 0.5  # no separate CUDA context copy of host allocations
    if tp * pp > 1:
        overhead += COMM_BUFFER_GB * GB
    if p.mode == "inference":
        batch_r = -(-workload.batch // dp)
        per_layer_kv = batch_r * p.kv_seq_bytes * kv_share(model, tp)
        best: tuple[float, float, float] | None = None
        for share, edge_bytes in stages(p, layers, pp):
            w = (p.body_bytes * share + edge_bytes) / tp
            k = per_layer_kv * share
            if best is None or w + k > best[0] + best[1]:
                best = (w, k, share)
        assert best is not None
        weights, kv, share = best
        if p.runtime.ggml_layout:
            act = ggml_compute_buffer_bytes(p, model, workload, tp)
        else:
            inflight = min(batch_r * workload.prompt_tokens, p.runtime.prefill_chunk_tokens)
            act = inflight * (p.act_hidden_bytes + p.act_mlp_bytes / tp)
            act += batch_r * model.vocab_size * 4.0 / tp  # fp32 logits of the last position
        return Need(weights, kv, act, overhead, 0.0, 0.0, share)
    ((frac, edge),) = stages(p, layers, pp)
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
    return Need(weights, 0.0, act, overhead, optim, grads, frac)


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


def capacity(
    p: Prepared, model: ModelSpec, workload: Workload, tp: int, pp: int, dp: int, need: Need
) -> tuple[int | None, int]:
    """(max_context_tokens, max_batch_that_fits) of the split `need` was computed for, kept on
    it: a Need the search memoised belongs to one p and one (tp, pp, dp)."""
    hit = need.capacity
    if hit is None:
        hit = need.capacity = (
            max_context_tokens(p, model, workload, tp, pp, dp, need),
            max_batch_that_fits(p, model, tp, pp, dp, need),
        )
    return hit


def max_context_tokens(
    p: Prepared, model: ModelSpec, workload: Workload, tp: int, pp: int, dp: int, need: Need
) -> int | None:
    """Largest context_tokens that fits at the workload's batch (closed form)."""
    free = p.usable_per_accel - (need.weights + need.activations + need.overhead)
    if free <= 0:
        return 0
    batch_r = -(-workload.batch // dp)
    a = batch_r * p.kv_token_layer_bytes * kv_share(model, tp) * need.layer_share
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
    per_seq = p.kv_seq_bytes * need.layer_share * kv_share(model, tp)
    if per_seq <= 0:
        return 0
    return int(free // per_seq) * dp
