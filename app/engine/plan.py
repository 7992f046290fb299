"""Memory per accelerator for a (tensor x pipeline) split, and the search for a split that fits."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .errors import EngineInputError
from .precision import PRECISIONS, Precision, kv_bytes
from .prep import (
    GB,
    GIB,
    accelerator_class,
    bandwidth_efficiency,
    fixed_per_pass,
    resolve_runtime,
    unified_platform,
    usable_fraction,
)
from .runtime import COMM_BUFFER_GB, MAX_TENSOR_PARALLEL, RUNTIMES, RuntimeProfile
from .specs import BuildSpec, ModelSpec, Workload

# Mixed-precision Adam: bf16 weights (2) + bf16 gradients (2) + fp32 master, m, v (12).
TRAIN_WEIGHT_BYTES = 2.0
TRAIN_GRAD_BYTES = 2.0
TRAIN_OPTIMIZER_BYTES = 12.0
# LoRA adapters (QLoRA paper): bf16 weights (2) + bf16 gradients (2) + fp32 Adam m, v (8).
ADAPTER_STATE_BYTES = 12.0


@dataclass(frozen=True, slots=True)
class Prepared:
    """Quantities shared by every candidate split (bytes, FLOPs, counts)."""

    mode: str
    precision: Precision
    kv_precision: str
    runtime: RuntimeProfile
    usable_per_accel: float  # bytes
    body_bytes: float  # all transformer layers
    nonexpert_body_bytes: float  # attention + dense MLPs + shared experts + routers
    expert_bytes: float  # one routed expert in one layer
    embed_bytes: float
    head_bytes: float  # output projection (the embedding again when tied)
    head_params_bytes: float  # output projection stored separately (0 when tied)
    kv_token_layer_bytes: float
    full_layers: int
    windowed_layers: int
    window: int
    kv_seq_bytes: float  # one sequence at context_tokens, all layers, window caps applied
    act_hidden_bytes: float  # per in-flight token, before TP division of the MLP part
    act_mlp_bytes: float
    trainable_params: int
    train_state_bytes_per_param: float
    recompute: bool  # activation recomputation in effect (training modes)
    bandwidth_efficiency: float  # achieved share of nominal bandwidth (runtime x platform)
    fixed_pass_s: float  # fixed seconds of one forward pass over all layers


@dataclass(frozen=True, slots=True)
class Need:
    """Bytes on the fullest accelerator, by component."""

    weights: float
    kv: float
    activations: float
    overhead: float
    optimizer: float
    gradients: float

    @property
    def total(self) -> float:
        """Sum of the components."""
        return (
            self.weights
            + self.kv
            + self.activations
            + self.overhead
            + self.optimizer
            + self.gradients
        )


def kv_tokens_weighted(p: Prepared, tokens: int) -> float:
    """Layer-tokens held for one sequence of `tokens` (windowed layers capped)."""
    return p.full_layers * tokens + p.windowed_layers * min(tokens, p.window)


# Prepared depends on the build only through one accelerator's memory size and kind, so a
# catalogue sweep or repeated requests reuse it. Bounded: cleared when full (no unbounded
# global state); keys are frozen, hashable inputs.
_PREPARED_CACHE: dict[tuple[ModelSpec, Workload, float, str, str, str], Prepared] = {}
_PREPARED_CACHE_MAX = 256


def clear_prepared() -> None:
    """Forget memoised per-call quantities (a calibration swapping efficiency constants)."""
    _PREPARED_CACHE.clear()


def prepare(build: BuildSpec, model: ModelSpec, workload: Workload) -> Prepared:
    """Compute the per-call quantities (no plan yet); memoised in a small bounded cache."""
    acc = build.accelerator
    # The platform decides the unified-memory share and the default runtime (Apple).
    kind = acc.memory_kind if acc.memory_kind != "unified" else unified_platform(acc)
    # The device class picks the efficiency constants Prepared carries (runtime.efficiency).
    key = (
        model,
        workload,
        acc.memory_gb,
        kind,
        acc.name if kind == "apple" else "",
        accelerator_class(acc),
    )
    hit = _PREPARED_CACHE.get(key)
    if hit is not None:
        return hit
    result = _prepare(build, model, workload)
    if len(_PREPARED_CACHE) >= _PREPARED_CACHE_MAX:
        _PREPARED_CACHE.clear()
    _PREPARED_CACHE[key] = result
    return result


def _prepare(build: BuildSpec, model: ModelSpec, workload: Workload) -> Prepared:
    mode = workload.mode
    prec = PRECISIONS["nf4"] if mode == "qlora" else PRECISIONS[workload.precision]
    runtime = RUNTIMES[resolve_runtime(build, workload)]
    kv_name = workload.kv_cache_precision or prec.kv_default
    wb = prec.bytes_per_weight
    emb_b = 2.0 if prec.embeddings_16bit else wb
    if mode == "training":
        wb = emb_b = TRAIN_WEIGHT_BYTES if prec.bits_per_weight <= 16 else 4.0
    m = model
    layers = m.num_hidden_layers
    nonexpert_params = (
        layers * m.attention_params_per_layer
        + m.dense_layers * m.dense_mlp_params
        + m.moe_layers * m.moe_layer_fixed_params
    )
    body_params = nonexpert_params + m.moe_layers * m.n_routed_experts * m.expert_params
    embed_bytes = m.embedding_params * emb_b
    head_params_bytes = m.lm_head_params * emb_b
    kv_b = kv_bytes(kv_name)
    windowed = m.sliding_window_layers if m.sliding_window else 0
    window = m.sliding_window or 0
    kv_tl = m.kv_elements_per_token_layer * kv_b
    full = layers - windowed
    ctx = workload.context_tokens
    kv_seq = kv_tl * (full * ctx + windowed * min(ctx, window))
    moe_i = (m.moe_intermediate_size or m.intermediate_size) * m.num_experts_per_tok
    mlp_width = max(m.intermediate_size if m.dense_layers else 0, moe_i)
    recompute = workload.activation_recomputation
    if recompute is None:
        # The standard LoRA/QLoRA recipe (PEFT / TRL gradient_checkpointing=True) recomputes.
        recompute = mode in ("lora", "qlora")
    trainable = 0
    state_bytes = 0.0
    if mode == "training":
        trainable = m.params_total
        state_bytes = TRAIN_GRAD_BYTES + TRAIN_OPTIMIZER_BYTES
    elif mode in ("lora", "qlora"):
        trainable = lora_params(m, workload.lora_rank)
        state_bytes = ADAPTER_STATE_BYTES
    return Prepared(
        mode=mode,
        precision=prec,
        kv_precision=kv_name,
        runtime=runtime,
        usable_per_accel=build.accelerator.memory_gb
        * GIB
        * usable_fraction(build, workload, runtime),
        body_bytes=body_params * wb,
        nonexpert_body_bytes=nonexpert_params * wb,
        expert_bytes=m.expert_params * wb,
        embed_bytes=embed_bytes,
        head_bytes=m.vocab_size * m.hidden_size * emb_b,
        head_params_bytes=head_params_bytes,
        kv_token_layer_bytes=kv_tl,
        full_layers=full,
        windowed_layers=windowed,
        window=window,
        kv_seq_bytes=kv_seq,
        # Hidden-state buffers (residual, norm out, attention out, QKV) in 16-bit.
        act_hidden_bytes=(4 * m.hidden_size + 2 * m.num_attention_heads * m.head_dim) * 2.0,
        act_mlp_bytes=3 * mlp_width * 2.0,  # gate, up and their product
        trainable_params=trainable,
        train_state_bytes_per_param=state_bytes,
        recompute=recompute,
        bandwidth_efficiency=bandwidth_efficiency(runtime, build),
        fixed_pass_s=fixed_per_pass(runtime, build, model),
    )


def lora_params(model: ModelSpec, rank: int) -> int:
    """Adapter parameters: rank x (d_in + d_out) on every attention and dense-MLP projection."""
    m = model
    h = m.hidden_size
    q_out = m.num_attention_heads * m.head_dim
    kv_out = m.num_key_value_heads * m.head_dim
    attn = (h + q_out) * 2 + (h + kv_out) * 2  # q, o, k, v
    mlp = (h + m.intermediate_size) * 3  # gate, up, down
    # MoE layers: adapters on attention only (expert adapters are unusual and huge).
    per_layer_sum = m.num_hidden_layers * attn + m.dense_layers * mlp
    return rank * per_layer_sum


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


@lru_cache(maxsize=256)
def tensor_parallel_sizes(heads: int, kv_heads: int, mla: bool, limit: int) -> tuple[int, ...]:
    """Tensor-parallel sizes up to `limit` a runtime accepts, largest first.

    vLLM/SGLang/TensorRT-LLM require tp to divide the attention heads, and either divide the KV
    heads or be a multiple of them (KV heads are then replicated); MLA has no KV heads to split.
    """
    return tuple(
        t
        for t in range(min(limit, MAX_TENSOR_PARALLEL), 0, -1)
        if heads % t == 0 and (mla or kv_heads % t == 0 or t % kv_heads == 0)
    )


def tensor_parallel_refusal(model: ModelSpec, tp: int) -> str | None:
    """Why a tensor-parallel runtime would refuse `tp` for this model, or None."""
    heads = model.num_attention_heads
    if heads % tp:
        return f"{tp} does not divide the model's {heads} attention heads"
    kv = model.num_key_value_heads
    if not model.kv_lora_rank and kv % tp and tp % kv:
        return f"{tp} neither divides the model's {kv} KV heads nor is a multiple of them"
    return None


@lru_cache(maxsize=1024)
def stage_counts(layers: int, limit: int) -> tuple[int, ...]:
    """Pipeline sizes 1..min(limit, layers) that each give fewer layers per stage than the
    previous one (the smallest pp for each distinct stage size): at most ~2 sqrt(layers)
    values, so the plan search does not grow with the accelerator count."""
    out = []
    last = layers + 1
    for pp in range(1, min(limit, layers) + 1):
        lps = -(-layers // pp)
        if lps < last:
            out.append(pp)
            last = lps
    return tuple(out)


def check_explicit_plan(build: BuildSpec, model: ModelSpec, workload: Workload, split: str) -> None:
    """Raise EngineInputError for an explicit tensor/pipeline size the runtime would refuse."""
    tp = workload.tensor_parallel
    pp = workload.pipeline_parallel
    name = workload.runtime or "the runtime"
    if split == "single" and ((tp or 1) > 1 or (pp or 1) > 1):
        raise EngineInputError("tensor_parallel", f"{name} runs the model on one device")
    if split == "layers" and tp is not None and tp > 1 and tp > build.accelerators_per_node:
        raise EngineInputError(
            "tensor_parallel",
            f"{name} splits a model over the GPUs of one machine "
            f"({build.accelerators_per_node}), not {tp}",
        )
    if split == "tensor" and tp is not None and tp > 1:
        reason = tensor_parallel_refusal(model, tp)
        if reason is not None:
            raise EngineInputError("tensor_parallel", reason)
    if pp is not None and pp > model.num_hidden_layers:
        raise EngineInputError(
            "pipeline_parallel", f"exceeds the model's {model.num_hidden_layers} layers"
        )
