"""The first accuracy script, on benchmarks/data/measurements.csv (superseded).

The measurements now live in the catalog (seed_data/measurements.yaml, the first 67 records
are this CSV's rows) and `python benchmarks/accuracy.py` reports on them. No test uses this
module any more (tests/engine/test_speed.py carries the published rows it checks, with their
sources); it can go once benchmarks/accuracy.py stops re-exporting `predict` from it.

Run from the repository root:  python benchmarks/accuracy_legacy.py
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.engine import (  # noqa: E402
    AcceleratorSpec,
    BuildSpec,
    InterNodeLink,
    IntraNodeLink,
    Workload,
    estimate,
    model_spec_from_hf_config,
)

DATA = ROOT / "benchmarks" / "data" / "measurements.csv"

# Hardware specs, transcribed from /work/shared/reference/accelerators.csv unless noted.
# GeForce: fp16_tflops is the FP32-accumulate rate PyTorch/vLLM use; llama.cpp's quantised
# kernels use the INT8 rate where we know it.
ACCEL = {
    "rtx3090": AcceleratorSpec("RTX 3090", 24, 936.2, 71, int8_tops=None, tdp_w=350),
    "rtx4090": AcceleratorSpec(
        "RTX 4090", 24, 1008, 165.2, fp8_tflops=660.6, int8_tops=660.6, tdp_w=450
    ),
    "a100_40": AcceleratorSpec("A100 40GB", 40, 1555, 312, int8_tops=624, tdp_w=400),
    "a100_80": AcceleratorSpec("A100 80GB", 80, 2039, 312, int8_tops=624, tdp_w=400),
    "h100_sxm": AcceleratorSpec(
        "H100 SXM", 80, 3350, 989, fp8_tflops=1979, int8_tops=1979, tdp_w=700
    ),
    "h200": AcceleratorSpec("H200", 141, 4800, 989, fp8_tflops=1979, int8_tops=1979, tdp_w=700),
    "mi300x": AcceleratorSpec(
        "MI300X", 192, 5300, 1307, fp8_tflops=2610, int8_tops=2600, tdp_w=750
    ),
    # H20 (China-market Hopper): 96 GB HBM3, 4.0 TB/s, 148 dense BF16 / 296 FP8 TFLOPS,
    # NVLink 900 GB/s bidirectional (NVIDIA H20 product brief figures as widely reported).
    "h20": AcceleratorSpec("H20", 96, 4000, 148, fp8_tflops=296, int8_tops=296, tdp_w=400),
    # Apple: bandwidth from the reference; GPU FP32 = FP16 rate: M2 Ultra 76-core 27.2 TFLOPS
    # (apple.com Mac Pro page), M1 Ultra 64-core 21.2 TFLOPS (cpu-monkey.com).
    "m2ultra": AcceleratorSpec("M2 Ultra", 192, 800, 27.2, memory_kind="unified"),
    "m1ultra": AcceleratorSpec("M1 Ultra", 128, 800, 21.2, memory_kind="unified"),
    # Strix Halo: 256 GB/s theoretical (reference systems.csv); only decode rows use it, the
    # FP16 rate (40 RDNA 3.5 CUs) is a placeholder that does not affect memory-bound rows.
    "strixhalo": AcceleratorSpec("Radeon 8060S", 128, 256, 59.4, memory_kind="unified"),
}

LINKS = {
    "h100_sxm": IntraNodeLink("nvswitch", 450),
    "h200": IntraNodeLink("nvswitch", 450),
    "a100_80": IntraNodeLink("nvswitch", 300),
    "h20": IntraNodeLink("nvswitch", 450),
    "mi300x": IntraNodeLink("infinity_fabric", 64 * 7),
}

# Model shapes (HF config.json field names). Reference: /work/shared/reference/model_configs.csv;
# codellama/Llama 2 7B, Llama 3.2 3B and TinyLlama from their Hugging Face config.json files.
_LLAMA3 = {"model_type": "llama", "vocab_size": 128256}
MODELS = {
    "llama3_8b": dict(
        _LLAMA3,
        num_hidden_layers=32,
        hidden_size=4096,
        num_attention_heads=32,
        num_key_value_heads=8,
        intermediate_size=14336,
    ),
    "llama31_8b": dict(
        _LLAMA3,
        num_hidden_layers=32,
        hidden_size=4096,
        num_attention_heads=32,
        num_key_value_heads=8,
        intermediate_size=14336,
    ),
    "llama31_70b": dict(
        _LLAMA3,
        num_hidden_layers=80,
        hidden_size=8192,
        num_attention_heads=64,
        num_key_value_heads=8,
        intermediate_size=28672,
    ),
    "llama31_405b": dict(
        _LLAMA3,
        num_hidden_layers=126,
        hidden_size=16384,
        num_attention_heads=128,
        num_key_value_heads=8,
        intermediate_size=53248,
    ),
    "llama32_3b": dict(
        _LLAMA3,
        num_hidden_layers=28,
        hidden_size=3072,
        num_attention_heads=24,
        num_key_value_heads=8,
        intermediate_size=8192,
        tie_word_embeddings=True,
    ),
    "llama2_7b": {
        "model_type": "llama",
        "vocab_size": 32000,
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "intermediate_size": 11008,
    },
    "codellama_7b": {
        "model_type": "llama",
        "vocab_size": 32016,
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "intermediate_size": 11008,
    },
    "tinyllama_1b": {
        "model_type": "llama",
        "vocab_size": 32000,
        "num_hidden_layers": 22,
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "intermediate_size": 5632,
    },
    "mistral_7b": {
        "model_type": "mistral",
        "vocab_size": 32768,
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
    },
    "qwen25_32b": {
        "model_type": "qwen2",
        "vocab_size": 152064,
        "num_hidden_layers": 64,
        "hidden_size": 5120,
        "num_attention_heads": 40,
        "num_key_value_heads": 8,
        "intermediate_size": 27648,
    },
    "deepseek_v3": {
        "model_type": "deepseek_v3",
        "num_hidden_layers": 61,
        "hidden_size": 7168,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "intermediate_size": 18432,
        "moe_intermediate_size": 2048,
        "vocab_size": 129280,
        "n_routed_experts": 256,
        "num_experts_per_tok": 8,
        "n_shared_experts": 1,
        "first_k_dense_replace": 3,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "v_head_dim": 128,
    },
    # Qwen3-30B-A3B and Mixtral 8x7B: their Hugging Face config.json files.
    "qwen3_30b_a3b": {
        "model_type": "qwen3_moe",
        "num_hidden_layers": 48,
        "hidden_size": 2048,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "intermediate_size": 6144,
        "moe_intermediate_size": 768,
        "vocab_size": 151936,
        "num_experts": 128,
        "num_experts_per_tok": 8,
    },
    "mixtral_8x7b": {
        "model_type": "mixtral",
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "intermediate_size": 14336,
        "vocab_size": 32000,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
    },
    "gptoss_120b": {
        "model_type": "gpt_oss",
        "num_hidden_layers": 36,
        "hidden_size": 2880,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "intermediate_size": 2880,
        "vocab_size": 201088,
        "num_local_experts": 128,
        "num_experts_per_tok": 4,
        "attention_bias": True,
        "sliding_window": 128,
    },
}


def _build(hw: str, count: int) -> BuildSpec:
    per_node = min(count, 8)
    nodes = max(1, count // per_node)
    link = (
        LINKS.get(hw, IntraNodeLink("pcie", 25.0)) if per_node > 1 else IntraNodeLink("none", None)
    )
    net = InterNodeLink("infiniband", 3200) if nodes > 1 else InterNodeLink("none", None)
    return BuildSpec(f"{count}x {hw}", ACCEL[hw], nodes, per_node, link, net)


def _int(value: str) -> int | None:
    return int(value) if value else None


def predict(row: dict[str, str]) -> tuple[float | None, bool]:
    """(predicted tokens/s for the row's kind, predicted fit)."""
    model = model_spec_from_hf_config(MODELS[row["model"]], name=row["model"])
    build = _build(row["hardware"], int(row["accelerators"]))
    workload = Workload(
        precision=row["precision"],
        context_tokens=int(row["context_tokens"]),
        prompt_tokens=int(row["prompt_tokens"]),
        batch=int(row["batch"]),
        runtime=row["runtime"],
        tensor_parallel=_int(row["tensor_parallel"]),
        pipeline_parallel=_int(row["pipeline_parallel"]),
    )
    est = estimate(build, model, workload)
    if est.throughput is None:
        return None, est.fits
    t = est.throughput
    if row["kind"] == "prefill":
        return t.prefill_tokens_per_s, est.fits
    out = _int(row.get("output_tokens", ""))
    if not out:
        return t.aggregate_decode_tokens_per_s, est.fits
    # Serving benchmarks report output tokens over wall time, prefill included: every request
    # of the batch is prefilled (one prompt at a time at the prefill rate), then `out` steps.
    batch_r = t.batch_per_replica
    wall = batch_r * t.time_to_first_token_s + out * t.decode_step_s
    return batch_r * out / wall * est.plan.data_parallel, est.fits


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[idx]


def _summary(label: str, errs: list[float]) -> str:
    if not errs:
        return f"{label:24} rows   0"
    return (
        f"{label:24} rows {len(errs):3}  median abs error {statistics.median(errs):6.1%}  "
        f"p90 {_pct(errs, 0.9):6.1%}"
    )


def main() -> int:
    """Print per-row detail and the summary figures, in-sample and held-out separately."""
    rows = list(csv.DictReader(DATA.open()))
    # split: "calibration" rows were looked at while the constants were hand-set; "holdout" rows
    # were marked when they were added, before any constant changed, and never used to tune.
    errors: dict[tuple[str, str], list[float]] = {}
    fit_ok: dict[str, int] = {}
    fit_n: dict[str, int] = {}
    print(
        f"{'id':4} {'kind':7} {'runtime':9} {'model':13} {'prec':6} {'hw':9} {'n':>2} "
        f"{'batch':>5} {'measured':>9} {'predicted':>9} {'error':>7} split"
    )
    for row in rows:
        predicted, fits = predict(row)
        kind = row["kind"]
        split = row.get("split") or "calibration"
        if kind == "fit":
            fit_n[split] = fit_n.get(split, 0) + 1
            expected = row["fits"] == "yes"
            ok = expected == fits
            fit_ok[split] = fit_ok.get(split, 0) + ok
            shown = f"{'fits' if fits else 'no':>9} {'ok' if ok else 'WRONG':>7}"
            measured = f"{row['fits']:>9}"
        else:
            measured_v = float(row["measured_tokens_per_s"])
            if predicted is None:
                err = 1.0
                shown = f"{'no fit':>9} {'100%':>7}"
            else:
                err = abs(predicted - measured_v) / measured_v
                shown = f"{predicted:9.1f} {err:7.1%}"
            errors.setdefault((kind, split), []).append(err)
            measured = f"{measured_v:9.1f}"
        print(
            f"{row['id']:4} {kind:7} {row['runtime']:9} {row['model']:13} {row['precision']:6} "
            f"{row['hardware']:9} {row['accelerators']:>2} {row['batch']:>5} {measured} {shown} "
            f"{split}"
        )
    print()
    for kind in ("decode", "prefill"):
        cal = errors.get((kind, "calibration"), [])
        hold = errors.get((kind, "holdout"), [])
        print(_summary(f"{kind} in-sample", cal))
        print(_summary(f"{kind} held-out", hold))
        print(_summary(f"{kind} all", cal + hold))
    for split in sorted(fit_n):
        n, ok = fit_n[split], fit_ok[split]
        print(f"fit {split:20} rows {n:3}  verdicts agreeing {ok}/{n} = {ok / n:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
