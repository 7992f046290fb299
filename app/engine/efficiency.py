"""Achieved shares of a device's peaks, per runtime x device class (fitted or hand-set).

`benchmarks/calibrate.py` fits these from the measurements (app/engine/calibrated.py);
`runtime.efficiency` reads them. docs/engine.md, section 7.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Efficiency:
    """Achieved shares of a device's peaks for one runtime on one device class."""

    bandwidth: float  # achieved / peak memory bandwidth in decode
    prefill_compute: float  # achieved / peak dense tensor rate in prefill
    decode_compute: float  # achieved / peak in batched decode
    fixed_s_per_layer: float  # kernel launches / syncs per layer per forward pass
    # Achieved / peak in the routed-expert GEMMs of a prefill pass (grouped GEMMs of a few
    # tokens per expert, token permutation around them); None: as prefill_compute.
    moe_prefill_compute: float | None = None
    # Host seconds per layer to launch a prefill pass's kernels, for a runtime that replays
    # CUDA graphs in decode only: a pass cannot end before its last kernel is launched
    # (speed.prefill). Hand-set on the runtime profile, never fitted; 0: no floor.
    prefill_host_s_per_layer: float = 0.0
    # Share of the shorter of a batch-1 pass's weight reads and its MMVQ instruction issue
    # (llama.cpp CUDA, mmvq.py) that does not hide under the longer: the reads stretch by
    # mmvq_overlap x min(reads, issue) (speed.DecodeModel.parts). Fitted with the bandwidth
    # share; 0 (perfect overlap) where no issue rate is known or the fit cannot tell.
    mmvq_overlap: float = 0.0

    @property
    def routed_prefill_compute(self) -> float:
        """The share the routed-expert matmuls of a prefill reach."""
        routed = self.moe_prefill_compute
        return self.prefill_compute if routed is None else routed
