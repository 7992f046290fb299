"""Serving plan search for mixture-of-experts models (expert parallel) and offloaded builds.

Times are process CPU time (time.process_time), best of 3; pin to one core with `taskset -c 1`.
Prints one Qwen3-235B-A22B curve with the plan search (TP sizes and expert parallel), the
1,000-build SLO search for it, and one curve of an offloaded build (llama-server slots).

Run from the repository root:  python benchmarks/serving_plans_speed.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_speed import catalogue  # noqa: E402
from serving_speed import best_of  # noqa: E402

from app.engine import (  # noqa: E402
    AcceleratorSpec,
    BuildSpec,
    HostSpec,
    Workload,
    model_spec_from_hf_config,
)
from app.engine.serving import (  # noqa: E402
    ServiceLevel,
    ServingWorkload,
    best_at_slo,
    serving_curve,
)

# Hugging Face config.json fields (seed_data/models.yaml).
QWEN3_235B = model_spec_from_hf_config(
    {
        "model_type": "qwen3_moe", "num_hidden_layers": 94, "hidden_size": 4096,
        "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128,
        "intermediate_size": 12288, "moe_intermediate_size": 1536, "vocab_size": 151936,
        "num_experts": 128, "num_experts_per_tok": 8,
    },
    name="Qwen3-235B-A22B",
)
GPT_OSS_120B = model_spec_from_hf_config(
    {
        "model_type": "gpt_oss", "num_hidden_layers": 36, "hidden_size": 2880,
        "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64,
        "intermediate_size": 2880, "vocab_size": 201088, "num_local_experts": 128,
        "num_experts_per_tok": 4, "attention_bias": True, "sliding_window": 128,
        "layer_types": ["sliding_attention", "full_attention"] * 18,
    },
    name="gpt-oss-120b",
)
RTX4090 = AcceleratorSpec("NVIDIA GeForce RTX 4090", 24, 1008, 165.2, fp8_tflops=330.3,
                          tdp_w=450, price_usd=1599)
SERVING = ServingWorkload(input_tokens=1024, output_tokens=1024)
SLO = ServiceLevel(tokens_per_s_per_user_min=10, concurrent_users=2000)


def main() -> int:
    """Print the three timings."""
    builds = catalogue()
    nodes = builds[1::4][:40]
    fp8 = Workload(precision="fp8")
    t_curve = best_of(3, lambda: [serving_curve(b, QWEN3_235B, fp8, SERVING, SLO)
                                  for b in nodes]) / len(nodes)
    t_search = best_of(3, lambda: [best_at_slo(b, QWEN3_235B, fp8, SERVING, SLO)
                                   for b in builds])
    # Host RAM sizes and prompt lengths vary so no two calls share their inputs.
    boxes = [(BuildSpec("4090 box", RTX4090, host=HostSpec("host", 16, 128 + 8 * (i % 8),
                                                             89.6 + i % 5)),
              ServingWorkload(input_tokens=1024 + i, output_tokens=1024)) for i in range(20)]
    llama = Workload(precision="mxfp4", runtime="llama.cpp")
    t_offload = best_of(3, lambda: [serving_curve(b, GPT_OSS_120B, llama, s)
                                    for b, s in boxes]) / len(boxes)
    print(f"one Qwen3-235B-A22B FP8 curve at an SLO, plan search with expert parallel, "
          f"{len(nodes)} 8-GPU nodes (best of 3): {t_curve * 1e3:.2f} ms")
    print(f"1,000-build SLO search for it (best of 3): {t_search:.2f} s")
    print(f"one offloaded curve (RTX 4090 + 128 GB, gpt-oss-120b MXFP4, llama.cpp slots, best "
          f"of 3): {t_offload * 1e3:.1f} ms")
    print("targets: < 5 ms per curve and < 2 s per 1,000-build search on one core")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
