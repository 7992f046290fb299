"""Tier of a build: desktop, dgx or cluster."""

from __future__ import annotations

from .prep import accelerator_class
from .specs import BuildSpec


def derive_tier(build: BuildSpec) -> str:
    """Return "desktop", "dgx" or "cluster" from the build's shape and links."""
    if build.nodes > 1:
        return "cluster"
    domain = build.scale_up_domain_accelerators
    if build.memory_pooled and domain is not None and domain > build.accelerators_per_node:
        return "cluster"  # rack-scale NVLink (GB200 NVL72) is a cluster even as one "node"
    # A unified-memory box pools CPU and GPU memory, not several accelerators: a desktop.
    pooled_gpus = build.intra_node_link.kind in ("nvlink", "nvswitch", "infinity_fabric")
    if pooled_gpus and build.accelerators_per_node > 1:
        return "dgx"
    return "desktop"


def serves_in_production(build: BuildSpec) -> bool:
    """True for datacenter builds (HBM cards, or DGX-class and cluster tiers), where the
    realistic runtime is a serving engine (vLLM, SGLang, TensorRT-LLM), not llama.cpp."""
    return derive_tier(build) != "desktop" or accelerator_class(build.accelerator) == (
        "HBM datacenter"
    )
