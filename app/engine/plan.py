"""Plan enumeration: the tensor x pipeline splits a runtime would consider, and explicit plans."""

from __future__ import annotations

from functools import lru_cache

from .errors import EngineInputError
from .memory import kv_share
from .prepared import Prepared, clear_prepared, kv_tokens_weighted
from .runtime import MAX_TENSOR_PARALLEL
from .specs import BuildSpec, ModelSpec, Workload

# Prepared, kv_share, kv_tokens_weighted and clear_prepared live in prepared.py / memory.py; they
# stay importable from here for speed.py and benchmarks/calibrate.py, written before the split.
__all__ = [
    "Options",
    "Prepared",
    "candidate_options",
    "check_explicit_plan",
    "clear_prepared",
    "kv_share",
    "kv_tokens_weighted",
    "stage_counts",
    "tensor_parallel_refusal",
    "tensor_parallel_sizes",
]


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


Options = tuple[tuple[int, tuple[int, ...], bool], ...]


@lru_cache(maxsize=1024)
def candidate_options(
    split: str,
    n: int,
    apn: int,
    pooled_domain: int,
    heads: int,
    kv_heads: int,
    mla: bool,
    layers: int,
    parallelism: str,
    explicit_tp: int | None,
    explicit_pp: int | None,
) -> Options:
    """(tensor-parallel size, pipeline sizes to try in order, replicas allowed) per candidate
    the runtime would consider; a pure function of the shapes, memoised."""
    if split == "single":
        return ((1, (1,), False),)
    if split == "layers":
        # llama.cpp / Ollama: every local GPU of one machine, layers split (or rows with
        # parallelism="tensor"); no automatic replicas.
        if explicit_tp is not None and explicit_tp > 1:
            return ((explicit_tp, (1,), False),)
        if explicit_pp is not None:
            return ((1, (explicit_pp,), False),)
        if parallelism == "tensor":
            return ((apn, (1,), False),)
        return ((1, (min(apn, layers),), False),)
    domain = min(n, max(apn, pooled_domain))
    if explicit_tp is not None:
        tps: tuple[int, ...] = (explicit_tp,)
    elif explicit_pp is not None or parallelism == "pipeline":
        tps = (1,)
    else:
        tps = tensor_parallel_sizes(heads, kv_heads, mla, domain) or (1,)
        if parallelism == "tensor":
            tps = tps[:1]
    if explicit_pp is not None:
        return tuple((tp, (explicit_pp,), True) for tp in tps)
    return tuple((tp, stage_counts(layers, max(1, n // tp)), True) for tp in tps)
