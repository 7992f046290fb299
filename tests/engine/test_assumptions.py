"""The assumptions an estimate states are the constants it ran with (assumptions.py)."""

from __future__ import annotations

from dataclasses import replace

from app.engine import Workload, estimate
from app.engine.prep import accelerator_class, efficiency
from app.engine.runtime import CALIBRATION, RUNTIMES

from .shapes import FOUR_4090, LLAMA_3_8B


def _runtime_line(assumptions: tuple[str, ...]) -> str:
    return next(a for a in assumptions if a.startswith("Runtime "))


def test_the_runtime_assumption_states_the_fitted_shares_the_estimate_used():
    for precision, runtime in (("bf16", "vllm"), ("q4_k_m", "llama.cpp")):
        e = estimate(FOUR_4090, LLAMA_3_8B, Workload(precision=precision))
        eff = efficiency(RUNTIMES[runtime], FOUR_4090)
        line = _runtime_line(e.assumptions)
        assert line.startswith(f"Runtime {runtime} on {accelerator_class(FOUR_4090.accelerator)}")
        assert f"bandwidth {eff.bandwidth:.0%}" in line
        assert f"decode compute {eff.decode_compute:.0%}" in line


def test_the_runtime_assumption_says_whether_its_shares_are_fitted_or_hand_set():
    fitted = estimate(FOUR_4090, LLAMA_3_8B, Workload(precision="bf16", runtime="vllm"))
    assert "fitted to the catalog's measurements" in _runtime_line(fitted.assumptions)
    # Training runs in PyTorch, which no measurement calibrates.
    trained = estimate(FOUR_4090, LLAMA_3_8B, Workload(precision="bf16", mode="lora"))
    assert "hand-set (too few measurements" in _runtime_line(trained.assumptions)


def test_the_runtime_assumption_states_a_swapped_calibration_not_a_memoised_one(calibration):
    workload = Workload(precision="bf16", runtime="vllm")
    before = _runtime_line(estimate(FOUR_4090, LLAMA_3_8B, workload).assumptions)
    key = ("vllm", accelerator_class(FOUR_4090.accelerator))
    table = dict(CALIBRATION)
    table[key] = replace(table[key], bandwidth=0.123)
    calibration(table)  # as benchmarks/calibrate.py swaps candidate constants in
    after = _runtime_line(estimate(FOUR_4090, LLAMA_3_8B, workload).assumptions)
    assert "bandwidth 12%" in after
    assert after != before
