"""The placement a published run states (llama.cpp -ngl, --n-cpu-moe, -ot, --tensor-split)."""

import re
from dataclasses import replace

from app.engine import Workload

# `offload` keys that say where layers went between the cards only (no weights in host RAM).
SPLIT_ONLY_KEYS = frozenset({"ts"})
# Keys of a placement stated in full (-ngl N, --n-cpu-moe N, an -ot rule, --tensor-split); any
# other key (`no_kv_offload`: the KV cache in RAM) is a kind of offload the engine does not model.
PLACEMENT_KEYS = frozenset({"ngl", "n_cpu_moe", "ot_expert_layers_on_cpu", "ot", "ts"})
PREFILL_METRIC = "prefill_tokens_per_s"


def offloads(offload: dict[str, int | str] | None) -> bool:
    """True when the run kept weights in host RAM (any placement key beyond a tensor split)."""
    return bool(offload) and any(key not in SPLIT_ONLY_KEYS for key in offload or {})


def needs_host_ram(metric: str, offload: dict[str, int | str] | None, layers: int) -> bool:
    """True when predicting the run needs the host's RAM size: every offload run but the prefill
    of a placement stated in full that keeps only routed experts in RAM (--n-cpu-moe or an -ot
    rule, every layer on the GPU). ggml-cuda copies those experts over PCIe for each micro-batch
    of 32 tokens or more (parts_split.prefill_offload_s), so neither the RAM's size nor its
    bandwidth enters, and the run itself shows the placement fitted. Whole layers on the CPU
    (-ngl below the layer count) keep their attention and KV cache there, on the CPU's compute,
    which the engine does not model: those runs still need their host stated."""
    if not offloads(offload):
        return False
    stated = offload or {}
    ngl = stated.get("ngl")
    cpu_moe = stated.get("n_cpu_moe", stated.get("ot_expert_layers_on_cpu"))
    every_layer = ngl is None or (isinstance(ngl, int) and ngl >= layers)
    experts_only = isinstance(cpu_moe, int) and every_layer and set(stated) <= PLACEMENT_KEYS
    return not (metric == PREFILL_METRIC and experts_only)


def published_placement(work: Workload, offload: dict[str, int | str] | None) -> Workload:
    """The run's own -ngl / --n-cpu-moe (an -ot rule is transcribed as the number of MoE layers
    whose experts it sends to the CPU) and --tensor-split (`ts`: "11,1"), so the engine is asked
    about the placement measured. ValueError for a tensor split that is not a list of shares."""
    if not offload:
        return work
    gpu = offload.get("ngl")
    cpu_moe = offload.get("n_cpu_moe", offload.get("ot_expert_layers_on_cpu"))
    ts = offload.get("ts")
    return replace(
        work,
        gpu_layers=gpu if isinstance(gpu, int) else None,
        cpu_moe_layers=cpu_moe if isinstance(cpu_moe, int) else None,
        tensor_split=tensor_split(ts) if isinstance(ts, str) else None,
    )


def tensor_split(text: str) -> tuple[float, ...]:
    """llama.cpp's `-ts 11,1` as shares: numbers split on commas or slashes, as its argument
    parser splits them (common/arg.cpp, `[,/]+`)."""
    try:
        shares = tuple(float(part) for part in re.split(r"[,/]+", text) if part.strip())
    except ValueError:
        raise ValueError(f"tensor split '{text}' is not a list of numbers") from None
    if not shares or any(share < 0 for share in shares) or sum(shares) <= 0:
        raise ValueError(f"tensor split '{text}' has no positive share")
    return shares
