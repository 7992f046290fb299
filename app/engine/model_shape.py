"""The model's shape (Hugging Face config.json field names) and every quantity derived from it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from .precision import kv_bytes


class HashedOnce:
    """Base of an input hashed once at construction: the `_hash` slot is set by the subclass's
    __post_init__ and is no dataclass field, so fields(), asdict() and == never see it. The
    subclass names `__hash__ = HashedOnce.__hash__` in its body, or @dataclass(frozen=True)
    would replace it with one that hashes every field."""

    __slots__ = ("_hash",)
    _hash: int

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class ModelSpec(HashedOnce):
    """Transformer shape, with Hugging Face config.json field names."""

    name: str
    num_hidden_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    intermediate_size: int  # dense MLP width (dense layers)
    vocab_size: int
    tie_word_embeddings: bool = False
    max_position_embeddings: int | None = None
    # Mixture of experts (DeepSeek names; Mixtral/Qwen3/gpt-oss/Llama 4 are mapped onto them).
    n_routed_experts: int = 0
    num_experts_per_tok: int = 0
    n_shared_experts: int = 0
    moe_intermediate_size: int | None = None  # per routed expert
    shared_expert_intermediate_size: int | None = None  # None = n_shared x moe_intermediate_size
    first_k_dense_replace: int = 0  # leading dense layers
    moe_layer_freq: int = 1  # after the dense prefix, every k-th layer is MoE (Llama 4 Maverick: 2)
    # Multi-head latent attention (DeepSeek-V3, Kimi K2).
    kv_lora_rank: int | None = None
    q_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    # Local attention: `sliding_window_layers` layers keep at most `sliding_window` tokens.
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    attention_bias: bool = False  # q/k/v(/o) biases (Qwen2, gpt-oss)
    params_total_published: int | None = None
    params_active_published: int | None = None
    # Linear attention (Gated DeltaNet: Qwen3-Next, Qwen3.5/3.6): `linear_attention_layers` layers
    # keep a fixed-size recurrent state per sequence instead of a KV cache; the other layers are
    # full attention, whose query projection also emits a per-head output gate when
    # `attn_output_gate` (Qwen3-Next, Qwen3.5).
    linear_attention_layers: int = 0
    linear_num_key_heads: int = 0
    linear_num_value_heads: int = 0
    linear_key_head_dim: int = 0
    linear_value_head_dim: int = 0
    linear_conv_kernel_dim: int = 0
    attn_output_gate: bool = False
    # The format the weights are published in (config.json quantization_config, mapped onto a
    # PRECISIONS name by params.published_precision; None: not stated or not one we know).
    published_precision: str | None = None

    # Derived once in __post_init__ so `estimate` does no per-call architecture arithmetic.
    # Mean over layers: full-attention and linear-attention layers differ in size.
    attention_params_per_layer: float = field(init=False, compare=False, repr=False)
    dense_mlp_params: int = field(init=False, compare=False, repr=False)
    expert_params: int = field(init=False, compare=False, repr=False)
    moe_layer_fixed_params: int = field(init=False, compare=False, repr=False)
    moe_layers: int = field(init=False, compare=False, repr=False)
    dense_layers: int = field(init=False, compare=False, repr=False)
    embedding_params: int = field(init=False, compare=False, repr=False)
    lm_head_params: int = field(init=False, compare=False, repr=False)
    params_total: int = field(init=False, compare=False, repr=False)
    params_active: int = field(init=False, compare=False, repr=False)
    params_active_matmul: int = field(init=False, compare=False, repr=False)
    kv_elements_per_token_layer: int = field(init=False, compare=False, repr=False)
    attention_flops_per_context_token: float = field(init=False, compare=False, repr=False)
    linear_state_bytes: float = field(init=False, compare=False, repr=False)  # per layer, sequence

    def __post_init__(self) -> None:
        for name, value in derive_model_quantities(self).items():
            object.__setattr__(self, name, value)
        # Estimates key their memo of per-call quantities by the model, and hashing some
        # thirty fields on every call costs more than most of the estimate (HashedOnce).
        object.__setattr__(self, "_hash", hash(compared_values(self)))

    __hash__ = HashedOnce.__hash__  # (a dataclass would otherwise hash every field per call)

    def __reduce__(self) -> tuple[type[ModelSpec], tuple[object, ...]]:
        # Rebuild through __init__ (a copy or a pickle recomputes the derived fields and the
        # hash, whose string part differs between processes).
        return (type(self), init_values(self))

    @property
    def attention_kind(self) -> str:
        """ "mla", "mha", "mqa" or "gqa"."""
        if self.kv_lora_rank:
            return "mla"
        if self.num_key_value_heads == self.num_attention_heads:
            return "mha"
        if self.num_key_value_heads == 1:
            return "mqa"
        return "gqa"

    @property
    def is_moe(self) -> bool:
        """True for mixture-of-experts models."""
        return self.n_routed_experts > 0 and self.num_experts_per_tok > 0

    @property
    def cached_attention_layers(self) -> int:
        """Layers that keep a KV cache (linear-attention layers keep a fixed state instead)."""
        return self.num_hidden_layers - self.linear_attention_layers

    def kv_cache_bytes_per_token(self, kv_precision: str = "bf16") -> float:
        """KV-cache bytes per token over the cached layers, ignoring sliding-window caps."""
        return (
            self.kv_elements_per_token_layer
            * self.cached_attention_layers
            * kv_bytes(kv_precision)
        )


def _attention_params(m: ModelSpec) -> int:
    h, nh = m.hidden_size, m.num_attention_heads
    if m.kv_lora_rank:
        rope = m.qk_rope_head_dim or 0
        nope = m.qk_nope_head_dim or 0
        v = m.v_head_dim or nope
        qk = nope + rope
        if m.q_lora_rank:
            # q_a (h -> q_lora), its RMSNorm, q_b (q_lora -> heads x (nope + rope))
            q = h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * nh * qk
        else:
            q = h * nh * qk
        # kv_a (h -> latent + shared rope key), its RMSNorm, kv_b (latent -> heads x (nope + v))
        kv = h * (m.kv_lora_rank + rope) + m.kv_lora_rank + m.kv_lora_rank * nh * (nope + v)
        return q + kv + nh * v * h
    hd, nkv = m.head_dim, m.num_key_value_heads
    params = h * nh * hd + 2 * h * nkv * hd + nh * hd * h
    if m.attn_output_gate:
        params += h * nh * hd  # q_proj's second half: a sigmoid gate on each head's output
    if m.attention_bias:
        params += (nh + 2 * nkv) * hd + h
    return params


def _linear_conv_dim(m: ModelSpec) -> int:
    # The short causal convolution runs over the query, key and value channels.
    return (
        2 * m.linear_num_key_heads * m.linear_key_head_dim
        + m.linear_num_value_heads * m.linear_value_head_dim
    )


def _linear_attention_params(m: ModelSpec) -> int:
    """One Gated DeltaNet layer (HF Qwen3NextGatedDeltaNet): q/k/v/z and b/a input projections,
    the depthwise causal conv, per-value-head A_log and dt_bias, the gated RMSNorm, out_proj."""
    h = m.hidden_size
    nv = m.linear_num_value_heads
    v_dim = nv * m.linear_value_head_dim
    conv = _linear_conv_dim(m)
    return (
        h * (conv + v_dim)  # in_proj_qkvz (Qwen3.5 splits it into in_proj_qkv and in_proj_z)
        + h * 2 * nv  # in_proj_ba: the per-head write strength b and decay a
        + conv * m.linear_conv_kernel_dim
        + 2 * nv  # A_log, dt_bias
        + m.linear_value_head_dim  # gated RMSNorm weight
        + v_dim * h  # out_proj
    )


def _linear_state_bytes(m: ModelSpec) -> float:
    """Recurrent state per linear-attention layer and sequence: the delta-rule matrix (one
    key_dim x value_dim per value head) and the conv's last kernel-1 inputs, both FP32 as
    llama.cpp and vLLM keep them (mamba_ssm_dtype float32), whatever the KV-cache type."""
    if not m.linear_attention_layers:
        return 0.0
    delta = m.linear_num_value_heads * m.linear_key_head_dim * m.linear_value_head_dim
    conv = (m.linear_conv_kernel_dim - 1) * _linear_conv_dim(m)
    return 4.0 * (delta + conv)


def derive_model_quantities(m: ModelSpec) -> dict[str, Any]:
    """Every per-model number the estimate needs, computed once per ModelSpec."""
    h, layers = m.hidden_size, m.num_hidden_layers
    norms = 2 * h  # two RMSNorm weight vectors per block
    linear = m.linear_attention_layers
    attn_total = (layers - linear) * (_attention_params(m) + norms)
    if linear:
        attn_total += linear * (_linear_attention_params(m) + norms)
    dense_mlp = 3 * h * m.intermediate_size  # gated MLP: gate, up, down
    is_moe = m.n_routed_experts > 0 and m.num_experts_per_tok > 0
    if is_moe:
        moe_i = m.moe_intermediate_size or m.intermediate_size
        expert = 3 * h * moe_i
        shared_i = m.shared_expert_intermediate_size
        if shared_i is None:
            shared_i = m.n_shared_experts * moe_i
        router = h * m.n_routed_experts
        moe_fixed = 3 * h * shared_i + router
        after = max(layers - m.first_k_dense_replace, 0)
        freq = max(m.moe_layer_freq, 1)
        # Llama 4 Maverick: interleave step 2 puts MoE on every second layer (1, 3, 5 ...).
        moe_layers = after // freq if freq > 1 else after
    else:
        expert = moe_fixed = moe_layers = 0
    dense_layers = layers - moe_layers
    embed = m.vocab_size * h
    head = 0 if m.tie_word_embeddings else m.vocab_size * h
    body_total = (
        attn_total
        + dense_layers * dense_mlp
        + moe_layers * (moe_fixed + m.n_routed_experts * expert)
    )
    body_active = (
        attn_total
        + dense_layers * dense_mlp
        + moe_layers * (moe_fixed + m.num_experts_per_tok * expert)
    )
    # Matmul weights touched per token: the input embedding is a row lookup, not a matmul, but
    # the output projection reads the whole vocab x hidden matrix even when it is tied.
    matmul_active = body_active + m.vocab_size * h
    if m.kv_lora_rank:
        kv_elems = m.kv_lora_rank + (m.qk_rope_head_dim or 0)
        nope = m.qk_nope_head_dim or 0
        # Absorbed MLA decode: scores over latent+rope, values over latent, for every head.
        attn_flops = 2.0 * m.num_attention_heads * (2 * m.kv_lora_rank + (m.qk_rope_head_dim or 0))
        del nope
    else:
        kv_elems = 2 * m.num_key_value_heads * m.head_dim
        attn_flops = 4.0 * m.num_attention_heads * m.head_dim  # QK^T and AV, 2 FLOPs per MAC
    return {
        "attention_params_per_layer": attn_total / layers,
        "dense_mlp_params": dense_mlp,
        "expert_params": expert,
        "moe_layer_fixed_params": moe_fixed,
        "moe_layers": moe_layers,
        "dense_layers": dense_layers,
        "embedding_params": embed,
        "lm_head_params": head,
        "params_total": body_total + embed + head + h,  # + final norm
        # "Activated parameters" as Qwen, Mixtral and Llama publish them: embeddings included.
        "params_active": body_active + embed + head + h,
        "params_active_matmul": matmul_active,
        "kv_elements_per_token_layer": kv_elems,
        "attention_flops_per_context_token": attn_flops,
        "linear_state_bytes": _linear_state_bytes(m),
    }


# Per class, a getter of its compared fields' values: every Workload and ModelSpec (a batch
# request builds one per item) is hashed at construction, and fields() is slow to walk.
_COMPARED: dict[type, Callable[[object], tuple[object, ...]]] = {}


def compared_values(obj: object) -> tuple[object, ...]:
    """The values of a dataclass's compared fields, in order: what its generated hash hashes."""
    getter = _COMPARED.get(type(obj))
    if getter is None:
        names = [f.name for f in fields(obj) if f.compare]  # type: ignore[arg-type]
        many = attrgetter(*names)  # a tuple when given two names or more
        getter = _COMPARED[type(obj)] = many if len(names) > 1 else lambda o: (many(o),)
    return getter(obj)


def init_values(obj: object) -> tuple[object, ...]:
    """The values of a dataclass's __init__ fields, in order."""
    return tuple(getattr(obj, f.name) for f in fields(obj) if f.init)  # type: ignore[arg-type]

def distinct_experts(n_experts: int, top_k: int, tokens: float) -> float:
    """Expected distinct routed experts a layer touches for `tokens` tokens (uniform routing)."""
    if n_experts <= 0:
        return 0.0
    return n_experts * (1.0 - (1.0 - top_k / n_experts) ** tokens)
