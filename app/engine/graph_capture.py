"""Which NVIDIA cards today's llama.cpp runs without CUDA graphs: ggml-cuda captures a decode
step as one graph only on compute capability >= 8.0 (Ampere). ggml-org/llama.cpp
ggml/src/ggml-cuda/ggml-cuda.cu, ggml_cuda_graph_set_enabled: `if (ggml_cuda_info().devices
[...].cc < GGML_CUDA_CC_AMPERE) graph->disable_due_to_gpu_arch = true` (log line "disabling CUDA
graphs due to GPU architecture", e.g. ikawrakow/ik_llama.cpp issue #479 on a GTX 1660 Ti).
The catalogue records no compute capability, so the card's family is read from its name, the
way prep.unified_platform reads a unified platform (docs/engine.md section 5)."""

from __future__ import annotations

import re

from .specs import AcceleratorSpec, BuildSpec, Workload

# Name patterns (matched on the lower-cased name) of NVIDIA cards below compute capability 8.0.
# Each names a product line whose every member is pre-Ampere:
#   Turing (7.5): GeForce RTX 2060/2070/2080 (+ Super/Ti; not the Ampere RTX 2050), GTX 1630-1660,
#     Quadro RTX 3000-8000, Tesla T4, MX450/MX550;
#   Volta (7.0): Tesla V100, Quadro GV100, TITAN V;
#   Pascal (6.x): GTX 1050-1080 Ti, Tesla P4/P40/P100, Quadro P-series / GP100;
#   older: GTX 9xx/7xx (Maxwell/Kepler), Tesla K/M-series;
#   every TITAN (Kepler TITAN to TITAN RTX: there is no Ampere or later TITAN).
# Not matched on purpose: "RTX 2000 Ada", "RTX A6000" (Ampere and later workstation cards whose
# names share digits with Turing ones). A pre-Ampere card no pattern names (e.g. the T400/T1000
# workstation Turing cards, not in the catalogue) keeps CUDA graphs: the rule errs to today's
# default.
PRE_AMPERE_PATTERN = re.compile(
    r"\brtx 20[6-8]0\b|\bgtx 1[06]\d0\b|\bgtx [79]\d0\b|\bquadro rtx\b|\bquadro (?:p\d|gp100|gv100)"
    r"|\bmx[45]50\b|\btitan\b|\b(?:tesla )?(?:t4|v100|p4|p40|p100|k\d{2}|m\d{2})\b"
)

_PRE_AMPERE_CACHE: dict[str, bool] = {}


def pre_ampere_nvidia(acc: AcceleratorSpec) -> bool:
    """True for an NVIDIA card below compute capability 8.0 (PRE_AMPERE_PATTERN), on which
    ggml-cuda disables CUDA graphs."""
    hit = _PRE_AMPERE_CACHE.get(acc.name)
    if hit is None:
        name = acc.name.lower()
        nvidia = (acc.vendor or "").casefold() == "nvidia" or "nvidia" in name
        hit = nvidia and PRE_AMPERE_PATTERN.search(name) is not None
        if len(_PRE_AMPERE_CACHE) >= 1024:
            _PRE_AMPERE_CACHE.clear()
        _PRE_AMPERE_CACHE[acc.name] = hit
    return hit


def cuda_without_graphs(build: BuildSpec, workload: Workload) -> bool:
    """True when today's ggml-cuda runs this build's decode without CUDA graphs: the CUDA
    backend (named, or the NVIDIA default when none is) on a pre-Ampere card. A mixed build
    counts if any card is one: ggml-cuda decides per device and a step waits for every split."""
    if workload.backend not in (None, "cuda"):
        return False
    return any(pre_ampere_nvidia(g.accelerator) for g in build.groups) or pre_ampere_nvidia(
        build.accelerator
    )
