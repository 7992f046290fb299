"""Dump what POST /api/v1/estimate/batch answers for a few hundred varied entries, to compare
two trees byte for byte (a speed change must not change one byte of an answer).

Sends batches through the whole app in-process (TestClient, a fresh migrated and seeded SQLite
catalog): catalog builds x catalog models under several workloads, inline builds (one card,
several nodes, mixed cards, host RAM, catalog cards by slug) with pasted configs (also ones that
differ only by a value's JSON type), entries that fail on their own (unknown slugs, an unreadable
config, a split the engine refuses) and bodies refused whole (schema errors, too many entries,
undecodable JSON). Writes status, content type and body of every response to OUT, one block
per request, and prints a digest of the file.

    PYTHONPATH=<tree> python benchmarks/batch_answers.py OUT   # then: cmp OUT_main OUT_branch
"""

import hashlib
import itertools
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from http_bench import LLAMA_8B_CONFIG, batch_body  # noqa: E402
from seeded_catalog import seeded_catalog  # noqa: E402

from app.config import Settings  # noqa: E402
from app.main import create_app  # noqa: E402

CARD = {"name": "card", "memory_gb": 24, "memory_bandwidth_gbs": 936, "fp16_tflops": 71}
# A pre-Ampere card (llama.cpp without CUDA graphs), with power and price.
GEFORCE = {"name": "GeForce RTX 2080 Ti", "memory_gb": 11, "memory_bandwidth_gbs": 616,
           "fp16_tflops": 54, "tdp_w": 250, "price_usd": 400}  # fmt: skip
HOST = {"ram_gb": 128, "ram_bandwidth_gbs": 80}
MOE_CONFIG = {
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096,
    "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2,
    "vocab_size": 32000, "max_position_embeddings": 32768, "sliding_window": None,
}  # fmt: skip
WORKLOADS: list[dict[str, Any]] = [
    {},
    {"precision": "fp8", "context_tokens": 8192, "batch": 8},
    {"precision": "q4_k_m", "context_tokens": 4096},
    {"precision": "bf16", "context_tokens": 32768, "batch": 4, "runtime": "vllm"},
    {"precision": "int4", "batch": 32, "prompt_tokens": 512, "kv_cache_precision": "fp8"},
    {"mode": "lora", "batch": 4, "training_tokens": 10**8},
    {"mode": "training", "precision": "bf16", "zero_stage": 3, "training_tokens": 10**9},
    {"precision": "fp8", "tensor_parallel": 2, "offload": "none"},
]


def _slugs(name: str) -> list[str]:
    rows = yaml.safe_load((ROOT / "seed_data" / name).read_text())
    return [row["slug"] for row in rows]


def entries() -> list[dict[str, Any]]:
    """Varied batch entries, valid and failing ones, in a fixed order."""
    builds, models = _slugs("builds.yaml"), _slugs("models.yaml")
    out: list[dict[str, Any]] = []
    # Catalog pairs: every build and every model appear, under every workload in turn.
    for i, (build, model) in enumerate(itertools.product(builds[::3], models[::4])):
        out.append({"build": build, "model": model, "workload": WORKLOADS[i % len(WORKLOADS)]})
    two = {"name": "2x card", "accelerators_per_node": 2, "accelerator": CARD}
    configs = [
        LLAMA_8B_CONFIG, {**LLAMA_8B_CONFIG, "num_hidden_layers": 32.0},
        {**LLAMA_8B_CONFIG, "num_hidden_layers": True}, MOE_CONFIG, {"model_type": "llama"},
    ]  # fmt: skip
    inline_builds: list[Any] = [
        two,
        {"name": "1x old", "accelerators_per_node": 1, "accelerator": GEFORCE, "host": HOST},
        {"name": "4 nodes", "nodes": 4, "accelerators_per_node": 8, "accelerator": CARD,
         "inter_node_link": {"kind": "infiniband", "bandwidth_gbps": 400}},
        {"name": "mixed", "accelerators": [{"accelerator": CARD, "count": 2},
                                           {"accelerator": GEFORCE, "count": 1}], "host": HOST},
        {"name": "by slug", "accelerators_per_node": 2, "accelerator": "rtx-4090"},
        {**two, "accelerator": "no-such-card"},
        {**two, "intra_node_link": {"kind": "pcie", "bandwidth_gbs": 32}, "price_usd": 2500},
    ]  # fmt: skip
    for i, (build, config) in enumerate(itertools.product(inline_builds, configs)):
        model = {"name": f"pasted {i % 3}", "config": config}
        out.append({"build": build, "model": model, "workload": WORKLOADS[i % len(WORKLOADS)]})
    for i, build in enumerate(inline_builds):
        out.append({"build": build, "model": models[i % len(models)],
                    "costs": {"pue": 1.5, "utilization": 0.5} if i % 2 else None})  # fmt: skip
    out += [
        {"build": "no-such-build", "model": models[0]},
        {"build": builds[0], "model": "no-such-model"},
        {"build": two, "model": models[0], "workload": {"tensor_parallel": 3}},
        {"build": two, "model": {"name": "p", "config": LLAMA_8B_CONFIG,
                                 "params_total": 8 * 10**9}},
    ]  # fmt: skip
    return [{k: v for k, v in e.items() if v is not None} for e in out]


def requests() -> list[tuple[str, Any]]:
    """(label, JSON body or raw bytes) of every request, in a fixed order."""
    items = entries()
    out: list[tuple[str, Any]] = [
        (f"entries {start}-{start + 99}", items[start : start + 100])
        for start in range(0, len(items), 100)
    ]
    out.append(("benchmark body", batch_body(100)))
    ok = items[0]
    out += [
        ("empty", []),
        ("101 entries", [ok] * 101),
        ("not a list", ok),
        ("bad slug", [ok, {"build": "Not A Slug", "model": ok["model"]}]),
        ("unknown field", [ok, {**ok, "extra": 1}]),
        ("bad workload", [{**ok, "workload": {"batch": 0, "precision": "fp9"}}]),
        ("prompt over context", [{**ok, "workload": {"context_tokens": 8, "prompt_tokens": 9}}]),
        ("bad inline", [{"build": {"name": "", "accelerator": CARD}, "model": ok["model"]}]),
        ("bad config", [{"build": ok["build"], "model": {"name": "x", "config": {"a": 1e13}}}]),
        ("undecodable JSON", b'[{"build": '),
    ]
    return out


def main() -> int:
    """Write every response to argv[1] and print the file's digest."""
    from fastapi.testclient import TestClient

    out = Path(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="tierline-answers-") as tmp:
        app = create_app(Settings(database_url=seeded_catalog(tmp)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client = TestClient(app)
        blocks = []
        with client:
            for label, body in requests():
                if isinstance(body, bytes):
                    headers = {"content-type": "application/json"}
                    response = client.post("/api/v1/estimate/batch", content=body, headers=headers)
                else:
                    response = client.post("/api/v1/estimate/batch", json=body)
                blocks.append(
                    f"## {label}: {response.status_code} {response.headers['content-type']}\n"
                    f"{response.text}\n"
                )
    text = "".join(blocks)
    out.write_text(text)
    print(f"{len(blocks)} requests, {len(text):,} characters, "
          f"sha256 {hashlib.sha256(text.encode()).hexdigest()[:16]}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
