"""The answer at the precision a model is published in (config.json quantization_config), stated
beside a No at the precision asked for: gpt-oss-120b asked for at fp8 is published in MXFP4."""

from __future__ import annotations

from .precision import PRECISIONS
from .results import Estimate, Finding
from .specs import ModelSpec, Workload


def smaller_published(model: ModelSpec, workload: Workload) -> bool:
    """True when the model is published in a format of fewer bits per weight than the one asked
    for (an inference estimate): the answer at that format is worth stating beside a No."""
    published = model.published_precision
    if published is None or published == workload.precision or workload.mode != "inference":
        return False
    asked = PRECISIONS.get(workload.precision)
    return asked is not None and PRECISIONS[published].bits_per_weight < asked.bits_per_weight


def published_finding(model: ModelSpec, other: Estimate) -> Finding:
    """One finding worded from `other`, the estimate at the model's published precision."""
    published = model.published_precision or ""
    words = other.verdict.split(" — ")[0]
    if other.fits and other.throughput is not None:
        figure = f"{other.throughput.decode_tokens_per_s:,.1f} tokens/s per sequence"
    else:
        figure = f"needs {other.memory.total_gb:,.0f} GB"
    return Finding(
        "info",
        f"{model.name} is published in {published.upper()} (its config's quantization_config); "
        f"at precision={published}: {words}, {figure} (estimate)",
    )
