"""The placement a published run states (llama.cpp -ngl, --n-cpu-moe, -ot, --tensor-split)."""

import re
from dataclasses import replace

from app.engine import Workload

# `offload` keys that say where layers went between the cards only (no weights in host RAM).
SPLIT_ONLY_KEYS = frozenset({"ts"})


def offloads(offload: dict[str, int | str] | None) -> bool:
    """True when the run kept weights in host RAM (any placement key beyond a tensor split)."""
    return bool(offload) and any(key not in SPLIT_ONLY_KEYS for key in offload or {})


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
