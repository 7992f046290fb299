"""ModelSpec from a Hugging Face config.json (parameter counts live in model_shape.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import EngineInputError
from .model_shape import ModelSpec

# ---------------------------------------------------------------- Hugging Face config.json


def _get(cfg: Mapping[str, Any], *names: str, default: Any = None) -> Any:
    for n in names:
        if n in cfg and cfg[n] is not None:
            return cfg[n]
    return default


def _req_int(cfg: Mapping[str, Any], *names: str, minimum: int = 1) -> int:
    value = _get(cfg, *names)
    if value is None:
        raise EngineInputError(names[0], "missing from config")
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise EngineInputError(names[0], f"must be an integer, got {value!r}")
    if value < minimum:
        raise EngineInputError(names[0], f"must be at least {minimum}, got {value}")
    return int(value)


def _opt_int(cfg: Mapping[str, Any], *names: str) -> int | None:
    value = _get(cfg, *names)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
        raise EngineInputError(names[0], f"must be an integer, got {value!r}")
    return int(value)


def _count_layer_types(cfg: Mapping[str, Any], layers: int) -> int | None:
    types = cfg.get("layer_types")
    if isinstance(types, list) and types:
        return sum(1 for t in types[:layers] if "sliding" in str(t) or "chunked" in str(t))
    return None


def _count_linear_layers(cfg: Mapping[str, Any], layers: int) -> int:
    """Gated DeltaNet layers: `layer_types` "linear_attention" entries (Qwen3.5), else every
    layer but each `full_attention_interval`-th (Qwen3-Next: layers 3, 7, 11 ... are full)."""
    if not _get(cfg, "linear_num_value_heads"):
        return 0
    types = cfg.get("layer_types")
    if isinstance(types, list) and types:
        return sum(1 for t in types[:layers] if str(t) == "linear_attention")
    interval = _req_int(cfg, "full_attention_interval")
    return layers - layers // interval


def model_spec_from_hf_config(
    config: Mapping[str, Any],
    *,
    name: str | None = None,
    params_total_published: int | None = None,
    params_active_published: int | None = None,
) -> ModelSpec:
    """Build a ModelSpec from a Hugging Face config.json dict (text_config is unwrapped)."""
    if not isinstance(config, Mapping):
        raise EngineInputError("config", "must be a JSON object")
    outer = config
    cfg: Mapping[str, Any] = config
    if isinstance(config.get("text_config"), Mapping):
        cfg = config["text_config"]  # Gemma 3, Llama 4, other multimodal wrappers
    model_type = str(_get(cfg, "model_type", default=_get(outer, "model_type", default="")))
    model_type = model_type.replace("_text", "")
    layers = _req_int(cfg, "num_hidden_layers", "n_layer", "num_layers")
    hidden = _req_int(cfg, "hidden_size", "n_embd", "d_model")
    heads = _req_int(cfg, "num_attention_heads", "n_head")
    kv_heads = _opt_int(cfg, "num_key_value_heads", "num_kv_heads") or heads
    if kv_heads > heads or heads % kv_heads:
        raise EngineInputError("num_key_value_heads", f"{kv_heads} does not divide {heads} heads")
    head_dim = _opt_int(cfg, "head_dim")
    if head_dim is None:
        if hidden % heads:
            raise EngineInputError("head_dim", "missing and hidden_size is not divisible by heads")
        head_dim = hidden // heads
    vocab = _req_int(cfg, "vocab_size")
    default_tie = model_type.startswith("gemma")
    tie = bool(
        _get(
            cfg,
            "tie_word_embeddings",
            default=_get(outer, "tie_word_embeddings", default=default_tie),
        )
    )
    max_pos = _opt_int(cfg, "max_position_embeddings", "n_positions")

    intermediate = _opt_int(cfg, "intermediate_size", "ffn_dim")
    n_experts = _opt_int(cfg, "n_routed_experts", "num_local_experts", "num_experts") or 0
    top_k = _opt_int(cfg, "num_experts_per_tok", "experts_per_token", "num_experts_per_token") or 0
    n_shared = _opt_int(cfg, "n_shared_experts") or 0
    moe_i = _opt_int(cfg, "moe_intermediate_size")
    shared_i = _opt_int(cfg, "shared_expert_intermediate_size")
    first_dense = _opt_int(cfg, "first_k_dense_replace") or 0
    moe_freq = _opt_int(cfg, "moe_layer_freq", "decoder_sparse_step") or 1
    if model_type == "llama4":
        # Llama 4: intermediate_size is the expert width, intermediate_size_mlp the dense MLP.
        moe_i = intermediate
        intermediate = _opt_int(cfg, "intermediate_size_mlp") or intermediate
        n_shared = 1
        moe_freq = _opt_int(cfg, "interleave_moe_layer_step") or 1
    elif n_experts and moe_i is None:
        moe_i = intermediate  # Mixtral, gpt-oss: intermediate_size is per expert
    linear = _count_linear_layers(cfg, layers)
    if intermediate is None and n_experts and moe_i and not first_dense and moe_freq == 1:
        # Every layer is MoE (Qwen3.5-35B-A3B has no dense MLP width): none is ever used.
        intermediate = moe_i
    if intermediate is None:
        raise EngineInputError("intermediate_size", "missing from config")
    mlp_only = cfg.get("mlp_only_layers")
    if isinstance(mlp_only, list) and mlp_only and n_experts:
        first_dense = max(first_dense, len(mlp_only))  # Qwen MoE dense layers (approximation)

    kv_lora = _opt_int(cfg, "kv_lora_rank")
    window = _opt_int(cfg, "sliding_window")
    use_sw = cfg.get("use_sliding_window")
    windowed = _count_layer_types(cfg, layers)
    if windowed is None:
        windowed = 0
        if window:
            if model_type == "gemma2" or model_type == "gpt_oss":
                windowed = layers // 2 if model_type == "gpt_oss" else (layers + 1) // 2
            elif model_type == "gemma3":
                pattern = _opt_int(cfg, "sliding_window_pattern") or 6
                windowed = layers - layers // pattern
            elif use_sw is False:
                windowed = 0
            elif model_type in ("mistral", "mixtral") or use_sw:
                windowed = layers
    if model_type == "llama4" and not windowed:
        chunk = _opt_int(cfg, "attention_chunk_size")
        if chunk:
            # Chunked local attention on 3 of every 4 layers (the NoPE layers are global); the
            # cache for those layers is bounded like a sliding window of the chunk size.
            window = chunk
            windowed = layers - layers // 4
    if not windowed:
        window = None
    attention_bias = bool(_get(cfg, "attention_bias", "qkv_bias", default=model_type == "qwen2"))
    return ModelSpec(
        name=name or str(_get(outer, "_name_or_path", "name", default=model_type or "model")),
        num_hidden_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=intermediate,
        vocab_size=vocab,
        tie_word_embeddings=tie,
        max_position_embeddings=max_pos,
        n_routed_experts=n_experts,
        num_experts_per_tok=top_k,
        n_shared_experts=n_shared,
        moe_intermediate_size=moe_i,
        shared_expert_intermediate_size=shared_i,
        first_k_dense_replace=first_dense,
        moe_layer_freq=moe_freq,
        kv_lora_rank=kv_lora,
        q_lora_rank=_opt_int(cfg, "q_lora_rank"),
        qk_rope_head_dim=_opt_int(cfg, "qk_rope_head_dim"),
        qk_nope_head_dim=_opt_int(cfg, "qk_nope_head_dim"),
        v_head_dim=_opt_int(cfg, "v_head_dim"),
        sliding_window=window,
        sliding_window_layers=windowed,
        attention_bias=attention_bias,
        params_total_published=params_total_published,
        params_active_published=params_active_published,
        linear_attention_layers=linear,
        linear_num_key_heads=_opt_int(cfg, "linear_num_key_heads") or 0,
        linear_num_value_heads=_opt_int(cfg, "linear_num_value_heads") or 0,
        linear_key_head_dim=_opt_int(cfg, "linear_key_head_dim") or 0,
        linear_value_head_dim=_opt_int(cfg, "linear_value_head_dim") or 0,
        linear_conv_kernel_dim=_opt_int(cfg, "linear_conv_kernel_dim") or 0,
        # Qwen3-Next's config has no flag: its attention always gates (HF Qwen3NextAttention).
        attn_output_gate=bool(_get(cfg, "attn_output_gate", default=model_type == "qwen3_next")),
        published_precision=published_precision(outer),
    )


# quantization_config.quant_method values that name one of PRECISIONS: gpt-oss ships its experts
# in MXFP4 ({"quant_method": "mxfp4"}), DeepSeek-V3/R1 their weights in FP8 e4m3 block 128x128
# ({"quant_method": "fp8", "fmt": "e4m3"}). AWQ/GPTQ/bitsandbytes/compressed-tensors need their
# bits and scheme read too: not mapped.
_QUANT_METHODS = {"mxfp4": "mxfp4", "fp8": "fp8"}


def published_precision(config: Mapping[str, Any]) -> str | None:
    """The PRECISIONS name of the format a config's weights are published in, from its
    quantization_config (outer or text_config), or None."""
    for where in (config, config.get("text_config")):
        if isinstance(where, Mapping) and isinstance(where.get("quantization_config"), Mapping):
            method = str(where["quantization_config"].get("quant_method", "")).lower()
            return _QUANT_METHODS.get(method)
    return None
