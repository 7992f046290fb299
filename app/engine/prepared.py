"""The per-call quantities every candidate split shares (bytes, FLOPs, counts), computed once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .precision import PRECISIONS, Precision, kv_bytes
from .prep import (
    GIB,
    accelerator_class,
    bandwidth_efficiency,
    fixed_per_pass,
    native_backend,
    resolve_runtime,
    unified_platform,
    usable_fraction,
)
from .runtime import RUNTIMES, RuntimeProfile
from .specs import BuildSpec, ModelSpec, Workload
from .token_budget import with_token_budget

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
    # Linear-attention layers' recurrent state, as KV layer-tokens of the same bytes: a decode
    # step reads and rewrites it whatever the context (Gated DeltaNet, model_shape.py).
    state_layer_tokens: float
    act_hidden_bytes: float  # per in-flight token, before TP division of the MLP part
    act_mlp_bytes: float
    trainable_params: int
    train_state_bytes_per_param: float
    recompute: bool  # activation recomputation in effect (training modes)
    bandwidth_efficiency: float  # achieved share of nominal bandwidth (runtime x platform)
    fixed_pass_s: float  # fixed seconds of one forward pass over all layers
    # What later steps derive from these fields alone, keyed by (step, its arguments):
    # ("fit", ...) and ("no fit", tp, pp) search.py, ("decode", tp) and ("prefill", prompts)
    # speed.py, ("report",) estimate.py; a sweep asks for the same splits build after build.
    # Not an init field, so a replace()d copy (expert_parallel.py shards body_bytes) starts
    # empty; prepare() bounds it.
    memo: dict[tuple[Any, ...], Any] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )


def kv_tokens_weighted(p: Prepared, tokens: int) -> float:
    """Layer-tokens held for one sequence of `tokens` (windowed layers capped)."""
    return (
        p.full_layers * tokens + p.windowed_layers * min(tokens, p.window) + p.state_layer_tokens
    )


# Prepared depends on the build only through one accelerator's memory size and kind, so a
# catalogue sweep or repeated requests reuse it. Bounded: cleared when full (no unbounded
# global state); keys are frozen, hashable inputs.
_PREPARED_CACHE: dict[tuple[ModelSpec, Workload, float, str, str, str, str | None], Prepared] = {}
_PREPARED_CACHE_MAX = 256
# The same Prepared by the identity of its inputs (keyed by id(workload), the entry holding the
# objects themselves, so an id is not reused while it is here): failover asks again for the
# estimate it follows, with the very same model, workload and card objects, and the value key
# above would answer only after comparing every field of both specs (~17K instructions).
_BY_IDENTITY: dict[int, tuple[ModelSpec, Workload, Any, Prepared]] = {}
_MEMO_MAX = 512  # entries of one Prepared's memo (one estimate adds a few dozen at most)


# Every memo of values that read the fitted efficiency constants: this module's, and those
# other modules register (assumptions.py's texts). clear_prepared() forgets them all.
_CALIBRATED_MEMOS: list[dict[Any, Any]] = [_PREPARED_CACHE, _BY_IDENTITY]


def calibrated_memo(memo: dict[Any, Any]) -> dict[Any, Any]:
    """Register a module's memo of values read from the fitted constants (at import time), so
    clear_prepared() empties it with the prepared quantities."""
    _CALIBRATED_MEMOS.append(memo)
    return memo


def clear_prepared() -> None:
    """Forget memoised per-call quantities (a calibration swapping efficiency constants)."""
    for memo in _CALIBRATED_MEMOS:
        memo.clear()


def prepare(build: BuildSpec, model: ModelSpec, workload: Workload) -> Prepared:
    """Compute the per-call quantities (no plan yet); memoised in a small bounded cache."""
    acc = build.accelerator
    same = _BY_IDENTITY.get(id(workload))
    if same is not None and same[0] is model and same[1] is workload and same[2] is acc:
        return _bounded(same[3])
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
        native_backend(acc),  # whether the workload's backend is foreign (its own constants)
    )
    result = _PREPARED_CACHE.get(key)
    if result is None:
        result = _prepare(build, model, workload)
        if len(_PREPARED_CACHE) >= _PREPARED_CACHE_MAX:
            _PREPARED_CACHE.clear()
        _PREPARED_CACHE[key] = result
    if len(_BY_IDENTITY) >= _PREPARED_CACHE_MAX:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[id(workload)] = (model, workload, acc, result)
    return _bounded(result)


def _bounded(p: Prepared) -> Prepared:
    if len(p.memo) >= _MEMO_MAX:  # bounded here, once per estimate, not at every entry
        p.memo.clear()
    return p


def _prepare(build: BuildSpec, model: ModelSpec, workload: Workload) -> Prepared:
    mode = workload.mode
    prec = PRECISIONS["nf4"] if mode == "qlora" else PRECISIONS[workload.precision]
    runtime = with_token_budget(RUNTIMES[resolve_runtime(build, workload)], workload)
    kv_name = workload.kv_cache_precision or prec.kv_default
    wb = prec.bytes_per_weight
    xb = prec.expert_bytes_per_weight  # routed experts (gpt-oss GGUFs keep them MXFP4)
    emb_b = 2.0 if prec.embeddings_16bit else wb
    if mode == "training":
        wb = xb = emb_b = TRAIN_WEIGHT_BYTES if prec.bits_per_weight <= 16 else 4.0
    m = model
    layers = m.num_hidden_layers
    nonexpert_params = (
        layers * m.attention_params_per_layer
        + m.dense_layers * m.dense_mlp_params
        + m.moe_layers * m.moe_layer_fixed_params
    )
    expert_body_params = m.moe_layers * m.n_routed_experts * m.expert_params
    embed_bytes = m.embedding_params * emb_b
    head_params_bytes = m.lm_head_params * emb_b
    kv_b = kv_bytes(kv_name)
    windowed = m.sliding_window_layers if m.sliding_window else 0
    window = m.sliding_window or 0
    kv_tl = m.kv_elements_per_token_layer * kv_b
    linear = m.linear_attention_layers
    full = layers - windowed - linear
    ctx = workload.context_tokens
    state_seq = linear * m.linear_state_bytes
    kv_seq = kv_tl * (full * ctx + windowed * min(ctx, window)) + state_seq
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
    head_bytes = m.vocab_size * m.hidden_size * emb_b
    return Prepared(
        mode=mode,
        precision=prec,
        kv_precision=kv_name,
        runtime=runtime,
        usable_per_accel=build.accelerator.memory_gb
        * GIB
        * usable_fraction(build, workload, runtime),
        body_bytes=nonexpert_params * wb + expert_body_params * xb,
        nonexpert_body_bytes=nonexpert_params * wb,
        expert_bytes=m.expert_params * xb,
        embed_bytes=embed_bytes,
        head_bytes=head_bytes,
        head_params_bytes=head_params_bytes,
        kv_token_layer_bytes=kv_tl,
        full_layers=full,
        windowed_layers=windowed,
        window=window,
        kv_seq_bytes=kv_seq,
        # Read and written back each step: twice its bytes of traffic.
        state_layer_tokens=2.0 * state_seq / kv_tl if kv_tl else 0.0,
        # Hidden-state buffers (residual, norm out, attention out, QKV) in 16-bit.
        act_hidden_bytes=(4 * m.hidden_size + 2 * m.num_attention_heads * m.head_dim) * 2.0,
        act_mlp_bytes=3 * mlp_width * 2.0,  # gate, up and their product
        trainable_params=trainable,
        train_state_bytes_per_param=state_bytes,
        recompute=recompute,
        bandwidth_efficiency=bandwidth_efficiency(runtime, build, workload),
        fixed_pass_s=fixed_per_pass(runtime, build, model, workload),
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
