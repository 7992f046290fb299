"""Unified-memory machines (Apple M-series, GB10, Strix Halo): the share of RAM the GPU may use.

Sourced facts, not fitted: docs/engine.md section 4 ("unified memory").
"""

from __future__ import annotations

from types import MappingProxyType

# macOS lets the GPU wire about 75 % of RAM by default (recommendedMaxWorkingSetSize; raise it
# with `sudo sysctl iogpu.wired_limit_mb=...`); DGX Spark (GB10, Linux + CUDA) exposes ~120 GiB
# of its 128 GiB (stas00/ml-engineering, reference/accelerators.csv); Strix Halo on Linux maps
# ~108 GB of 128 GB to the GPU through GTT (BIOS/driver allocation; 96 GB dedicated on Windows).
# Macs with up to 32 GiB of RAM let the GPU wire two thirds: llama.cpp logs Metal's
# recommendedMaxWorkingSetSize as 10922.67 MB (MiB) on 16 GB (abetlen/llama-cpp-python #687)
# and 21845.34 on 32 GB (ggml-org/llama.cpp PR #2011, ollama/ollama #434); 64 GB machines
# reach ~75 % (llama.cpp #1870: "Around 47GB or higher I get problems").
APPLE_SMALL_RAM_GIB = 32.0
APPLE_SMALL_RAM_USABLE_FRACTION = 2 / 3
UNIFIED_USABLE_BY_PLATFORM: MappingProxyType[str, float] = MappingProxyType(
    {"apple": 0.75, "gb10": 120 / 128, "strix_halo": 108 / 128, "other": 0.75}
)
