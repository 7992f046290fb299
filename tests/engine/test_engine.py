"""Engine behaviour: parameters, fit, the tier-line story, speed shape, training, validation."""

from __future__ import annotations

import ast
import csv
import dataclasses
import importlib.util
import types
from pathlib import Path

import pytest

from app.engine import (
    PRECISIONS,
    AcceleratorSpec,
    BuildSpec,
    CostAssumptions,
    EngineInputError,
    InterNodeLink,
    IntraNodeLink,
    ModelSpec,
    Workload,
    derive_tier,
    estimate,
    model_spec_from_hf_config,
    rule_of_thumb_gb,
)

# Shapes from /work/shared/reference/model_configs.csv.
LLAMA_8B = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
}
LLAMA_70B = {
    "model_type": "llama",
    "num_hidden_layers": 80,
    "hidden_size": 8192,
    "num_attention_heads": 64,
    "num_key_value_heads": 8,
    "intermediate_size": 28672,
    "vocab_size": 128256,
}
LLAMA_405B = {
    "model_type": "llama",
    "num_hidden_layers": 126,
    "hidden_size": 16384,
    "num_attention_heads": 128,
    "num_key_value_heads": 8,
    "intermediate_size": 53248,
    "vocab_size": 128256,
}
MIXTRAL = {
    "model_type": "mixtral",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 32000,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
}
QWEN3_235B = {
    "model_type": "qwen3_moe",
    "num_hidden_layers": 94,
    "hidden_size": 4096,
    "num_attention_heads": 64,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "intermediate_size": 12288,
    "moe_intermediate_size": 1536,
    "vocab_size": 151936,
    "num_experts": 128,
    "num_experts_per_tok": 8,
}
DEEPSEEK_V3 = {
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
    "max_position_embeddings": 163840,
}
KIMI_K2 = dict(
    DEEPSEEK_V3,
    model_type="kimi_k2",
    num_attention_heads=64,
    num_key_value_heads=64,
    vocab_size=163840,
    n_routed_experts=384,
    first_k_dense_replace=1,
)
GPT_OSS_120B = {
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
    "layer_types": ["sliding_attention", "full_attention"] * 18,
}
GEMMA3_27B = {
    "model_type": "gemma3",
    "text_config": {
        "model_type": "gemma3_text",
        "num_hidden_layers": 62,
        "hidden_size": 5376,
        "num_attention_heads": 32,
        "num_key_value_heads": 16,
        "head_dim": 128,
        "intermediate_size": 21504,
        "vocab_size": 262208,
        "sliding_window": 1024,
    },
}

RTX4090 = AcceleratorSpec(
    "RTX 4090", 24, 1008, 165.2, fp8_tflops=660.6, int8_tops=660.6, tdp_w=450, price_usd=1599
)
H200 = AcceleratorSpec(
    "H200", 141, 4800, 989, fp8_tflops=1979, int8_tops=1979, tdp_w=700, price_usd=32000
)
H100 = AcceleratorSpec("H100 SXM", 80, 3350, 989, fp8_tflops=1979, tdp_w=700)
RTX6000 = AcceleratorSpec("RTX 6000 Ada", 48, 960, 364, fp8_tflops=728, tdp_w=300)
M2_ULTRA = AcceleratorSpec("M2 Ultra", 192, 800, 27.2, memory_kind="unified")
DESKTOP = BuildSpec("4x RTX 4090", RTX4090, 1, 4, IntraNodeLink("pcie", 32))
CLUSTER = BuildSpec(
    "2x DGX H200", H200, 2, 8, IntraNodeLink("nvswitch", 450), InterNodeLink("infiniband", 400)
)


def spec(config: dict, **kw: object) -> ModelSpec:
    return model_spec_from_hf_config(config, name="test", **kw)


@pytest.mark.parametrize(
    ("config", "total", "active", "attr"),
    [
        (LLAMA_8B, 8.03e9, None, "params_active"),
        (LLAMA_70B, 70.6e9, None, "params_active"),
        (LLAMA_405B, 405e9, None, "params_active"),
        # Mistral and Qwen publish active counts that include the embeddings.
        (MIXTRAL, 46.7e9, 12.9e9, "params_active"),
        (QWEN3_235B, 235e9, 22e9, "params_active"),
        # DeepSeek (README_WEIGHTS: 36.7B), Kimi and gpt-oss count matmul parameters per token.
        (DEEPSEEK_V3, 671e9, 36.7e9, "params_active_matmul"),
        (GPT_OSS_120B, 116.83e9, 5.13e9, "params_active_matmul"),
    ],
)
def test_parameter_counts_within_one_percent(config, total, active, attr):
    m = spec(config)
    assert m.params_total == pytest.approx(total, rel=0.01)
    if active:
        assert getattr(m, attr) == pytest.approx(active, rel=0.01)


def test_kimi_k2_counts_match_rounded_published_figures():
    m = spec(KIMI_K2)
    # "1T" is rounded to one significant figure; the architecture gives 1.026T.
    assert 0.95e12 <= m.params_total < 1.05e12
    assert m.params_active_matmul == pytest.approx(32e9, rel=0.01)


def test_deepseek_v3_excludes_the_mtp_module():
    assert spec(DEEPSEEK_V3).params_total == pytest.approx(671e9, rel=0.005)  # not 685B


def test_rule_of_thumb_deepseek_fp8_is_805_gb():
    assert rule_of_thumb_gb(671_000_000_000, "fp8") == pytest.approx(805, abs=1)


def test_gguf_bits_per_weight_follow_block_layouts():
    assert PRECISIONS["q8_0"].bits_per_weight == pytest.approx(34 * 8 / 32, abs=0.01)
    assert PRECISIONS["q4_0"].bits_per_weight == pytest.approx(18 * 8 / 32)
    assert PRECISIONS["q6_k"].bits_per_weight == pytest.approx(210 * 8 / 256, abs=0.01)
    assert 144 * 8 / 256 < PRECISIONS["q4_k_m"].bits_per_weight < 176 * 8 / 256


def test_deepseek_fp8_does_not_fit_four_isolated_4090s():
    e = estimate(DESKTOP, spec(DEEPSEEK_V3), Workload(precision="fp8"))
    assert not e.fits
    assert e.throughput is None
    # Four "24 GB" cards hold 4 x 24 GiB = 103 x 1e9 bytes; memory is never summed over them.
    assert e.verdict.startswith("No — 4 isolated 24 GB cards (103 GB in all); needs ")
    assert any(f.severity == "blocker" for f in e.findings)


def test_deepseek_fp8_fits_two_dgx_h200():
    e = estimate(CLUSTER, spec(DEEPSEEK_V3), Workload(precision="fp8"))
    assert e.fits
    assert e.verdict.startswith("Yes — ")
    usable = 16 * 141 * 2**30 * 0.90 / 1e9  # 141 GiB per H200, vLLM's 90 %
    assert "GB to spare" in e.verdict and f"{usable:,.0f} GB" in e.verdict
    assert e.plan.tensor_parallel == 8
    assert e.throughput is not None and e.throughput.decode_tokens_per_s > 0
    assert e.memory.rule_of_thumb_gb == pytest.approx(805, abs=1)


def test_156_gb_model_fits_cluster_but_not_desktop():
    # Llama 3.1 70B in BF16 is ~141 GB of weights; with KV and overheads ~156 GB.
    model = spec(LLAMA_70B)
    desk = estimate(DESKTOP, model, Workload(precision="bf16", context_tokens=32768))
    clus = estimate(CLUSTER, model, Workload(precision="bf16", context_tokens=32768))
    assert 140 < clus.memory.total_gb < 175
    assert not desk.fits and clus.fits


def test_fit_is_judged_per_accelerator_not_summed():
    # 4 x 24 GB = 96 GB sums above ~70 GB of FP8 weights, but the layer split still fits; a
    # model whose single layer-stage exceeds one card must not fit even if the sum would.
    model = spec(LLAMA_70B)
    e = estimate(DESKTOP, model, Workload(precision="fp8", context_tokens=2048))
    assert e.memory.per_accelerator_gb <= e.memory.available_per_accelerator_gb
    assert e.plan.tensor_parallel * e.plan.pipeline_parallel >= 3
    one = estimate(
        BuildSpec("1x RTX 4090", RTX4090), model, Workload(precision="fp8", context_tokens=2048)
    )
    assert not one.fits


def test_pcie_tensor_parallel_is_slower_than_nvswitch():
    model = spec(LLAMA_70B)
    pcie = BuildSpec("8x H100 PCIe-linked", H100, 1, 8, IntraNodeLink("pcie", 64))
    nvs = BuildSpec("8x H100 NVSwitch", H100, 1, 8, IntraNodeLink("nvswitch", 450))
    w = Workload(precision="bf16", parallelism="tensor")
    slow = estimate(pcie, model, w).throughput
    fast = estimate(nvs, model, w).throughput
    assert slow.decode_tokens_per_s < fast.decode_tokens_per_s
    assert slow.decode_communication_s > fast.decode_communication_s


def test_pipeline_single_stream_is_not_faster_than_one_card():
    model = spec(LLAMA_8B)
    one = BuildSpec("1x 4090", RTX4090)
    w1 = Workload(precision="bf16", runtime="llama.cpp")
    w4 = Workload(precision="bf16", runtime="llama.cpp", pipeline_parallel=4)
    single = estimate(one, model, w1).throughput.decode_tokens_per_s
    piped = estimate(DESKTOP, model, w4).throughput.decode_tokens_per_s
    assert piped <= single


def test_mla_kv_cache_is_far_smaller_than_mha_equivalent():
    mla = spec(DEEPSEEK_V3)
    mha = dataclasses.replace(mla, kv_lora_rank=None, head_dim=128)
    assert mla.kv_cache_bytes_per_token("bf16") * 20 < mha.kv_cache_bytes_per_token("bf16")
    assert mla.kv_cache_bytes_per_token("bf16") == (512 + 64) * 61 * 2


def test_sliding_window_caps_kv_cache():
    gemma = spec(GEMMA3_27B)
    assert gemma.sliding_window == 1024 and gemma.sliding_window_layers == 52
    build = BuildSpec("1x H200", H200)
    full = dataclasses.replace(gemma, sliding_window=None, sliding_window_layers=0)
    w = Workload(precision="bf16", context_tokens=32768)
    assert (
        estimate(build, gemma, w).memory.kv_cache_gb
        < estimate(build, full, w).memory.kv_cache_gb / 4
    )


def test_batching_raises_aggregate_and_moves_bottleneck_to_compute():
    build = BuildSpec("1x H200", H200)
    model = spec(LLAMA_8B)
    # A short context keeps 512 sequences' KV reads below the weight reads: with the fitted
    # batched-decode efficiency of vLLM, long contexts stay memory-bound at any batch.
    small = estimate(build, model, Workload(batch=1, context_tokens=128)).throughput
    big = estimate(build, model, Workload(batch=512, context_tokens=128)).throughput
    assert big.aggregate_decode_tokens_per_s > 10 * small.aggregate_decode_tokens_per_s
    assert small.bottleneck == "memory bandwidth"
    assert big.bottleneck == "compute"
    assert small.compute_bound_batch is not None and 1 < small.compute_bound_batch <= 512


def test_fixed_costs_cap_tiny_models():
    tiny = spec(
        {
            "model_type": "llama",
            "num_hidden_layers": 22,
            "hidden_size": 2048,
            "num_attention_heads": 32,
            "num_key_value_heads": 4,
            "intermediate_size": 5632,
            "vocab_size": 32000,
        }
    )
    t = estimate(BuildSpec("1x H200", H200), tiny, Workload(runtime="vllm")).throughput
    roofline = 1.0 / t.decode_memory_s
    assert t.decode_tokens_per_s < 0.5 * roofline
    assert t.decode_fixed_s > t.decode_memory_s


def _measurement_rows(**match: str) -> list[dict[str, str]]:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "measurements.csv"
    with path.open() as fh:
        rows = list(csv.DictReader(fh))
    return [r for r in rows if all(r[k] == v for k, v in match.items())]


def _accuracy_module() -> types.ModuleType:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "accuracy.py"
    loader_spec = importlib.util.spec_from_file_location("tierline_accuracy", path)
    assert loader_spec is not None and loader_spec.loader is not None
    module = importlib.util.module_from_spec(loader_spec)
    loader_spec.loader.exec_module(module)
    return module


def test_deepseek_v3_single_stream_on_8x_h200_matches_published_rows():
    # The published single-stream DeepSeek-V3 figures (no MTP) on one 8-GPU node; before the
    # MoE/MLA fixed costs the engine predicted ~7x too fast.
    rows = _measurement_rows(model="deepseek_v3", kind="decode", batch="1", accelerators="8")
    assert len(rows) >= 2
    accuracy = _accuracy_module()
    for row in rows:
        predicted, fits = accuracy.predict(row)
        measured = float(row["measured_tokens_per_s"])
        assert fits and predicted is not None
        assert measured / 1.25 <= predicted <= measured * 1.25, row["id"]


def test_deepseek_v3_batch_sweep_keeps_per_sequence_speed_roughly_flat():
    # SGLang's 1/8/32 sweep: aggregate grows almost linearly because fixed per-layer costs,
    # not expert bytes, dominate a step. Compare the predicted growth with the measured one.
    rows = _measurement_rows(model="deepseek_v3", hardware="h200", runtime="sglang")
    by_batch = {int(r["batch"]): r for r in rows}
    assert {1, 8, 32} <= set(by_batch)
    accuracy = _accuracy_module()
    pred = {b: accuracy.predict(by_batch[b])[0] for b in (1, 8, 32)}
    meas = {b: float(by_batch[b]["measured_tokens_per_s"]) for b in (1, 8, 32)}
    for b in (8, 32):
        growth_pred = pred[b] / pred[1]
        growth_meas = meas[b] / meas[1]
        assert growth_meas / 1.3 <= growth_pred <= growth_meas * 1.3


def test_moe_and_mla_fixed_costs_dominate_deepseek_single_stream():
    t = estimate(
        CLUSTER, spec(DEEPSEEK_V3), Workload(precision="fp8", context_tokens=8192)
    ).throughput
    assert t is not None
    assert t.decode_fixed_s > 5 * t.decode_memory_s
    assert t.decode_tokens_per_s < 0.2 / t.decode_memory_s
    # A dense model of similar active size is not penalised the same way.
    dense = estimate(CLUSTER, spec(LLAMA_70B), Workload(precision="fp8")).throughput
    assert dense is not None and dense.decode_fixed_s < t.decode_fixed_s / 5


def test_tensor_parallel_all_reduce_latency_is_realistic_on_nvswitch():
    # NCCL small-message all-reduce over 8 NVSwitch GPUs takes 10-20 us (docs/engine.md sec. 5).
    model = spec(LLAMA_70B)
    nvs = BuildSpec("8x H100 NVSwitch", H100, 1, 8, IntraNodeLink("nvswitch", 450))
    t = estimate(nvs, model, Workload(precision="fp8", parallelism="tensor")).throughput
    per_all_reduce = t.decode_communication_s / (2 * model.num_hidden_layers)
    assert 10e-6 <= per_all_reduce <= 20e-6


def test_training_memory_is_sixteen_bytes_per_param_plus_activations():
    model = spec(LLAMA_8B)
    build = BuildSpec("8x H100", H100, 1, 8, IntraNodeLink("nvswitch", 450))
    e = estimate(build, model, Workload(mode="training", context_tokens=4096, batch=1))
    states = e.memory.weights_gb + e.memory.gradients_gb + e.memory.optimizer_gb
    assert states == pytest.approx(model.params_total * 16 / 1e9, rel=0.01)
    assert e.memory.activations_gb > 0


def test_zero3_divides_states_over_data_parallel():
    model = spec(LLAMA_8B)
    build = BuildSpec("8x H100", H100, 1, 8, IntraNodeLink("nvswitch", 450))
    dp_only = {"tensor_parallel": 1, "pipeline_parallel": 1}
    z0 = estimate(build, model, Workload(mode="training", zero_stage=0, batch=1, **dp_only))
    z3 = estimate(build, model, Workload(mode="training", zero_stage=3, batch=1, **dp_only))
    assert not z0.fits and z3.fits
    # DeepSpeed's estimator: 18 bytes/param / 8 GPUs + a gather buffer, against 16 bytes/param.
    assert z3.memory.per_accelerator_gb < z0.memory.per_accelerator_gb / 3
    assert z3.training is not None and z3.training.tokens_per_s > 0


def test_qlora_fits_70b_on_48_gb():
    build = BuildSpec("1x RTX 6000 Ada", RTX6000)
    w = Workload(
        mode="qlora",
        context_tokens=2048,
        batch=1,
        activation_recomputation=True,
        training_tokens=10_000_000,
    )
    e = estimate(build, spec(LLAMA_70B), w)
    assert e.fits
    assert e.training is not None and e.training.time_to_train_hours > 0
    assert not estimate(build, spec(LLAMA_70B), dataclasses.replace(w, mode="lora")).fits


def test_unknown_precision_raises_engine_input_error():
    with pytest.raises(EngineInputError) as err:
        estimate(DESKTOP, spec(LLAMA_8B), Workload(precision="fp7"))
    assert err.value.field == "precision"


def test_invalid_inputs_name_their_field():
    with pytest.raises(EngineInputError) as err:
        estimate(dataclasses.replace(DESKTOP, nodes=0), spec(LLAMA_8B), Workload())
    assert err.value.field == "nodes"
    with pytest.raises(EngineInputError) as err:
        spec(dict(LLAMA_8B, num_hidden_layers=0))
    assert err.value.field == "num_hidden_layers"
    with pytest.raises(EngineInputError) as err:
        spec({"model_type": "llama"})
    assert err.value.field == "num_hidden_layers"


def test_max_context_and_batch_are_consistent_with_fit():
    build = BuildSpec("1x 4090", RTX4090)
    e = estimate(build, spec(LLAMA_8B), Workload(precision="q4_k_m", runtime="llama.cpp"))
    assert e.fits and e.max_context_tokens_that_fit >= 4096
    ctx = min(e.max_context_tokens_that_fit, 131072)
    assert estimate(
        build, spec(LLAMA_8B), Workload(precision="q4_k_m", runtime="llama.cpp", context_tokens=ctx)
    ).fits
    assert e.max_batch_that_fits >= 1


def test_unified_memory_uses_three_quarters_of_ram():
    e = estimate(BuildSpec("Mac Studio", M2_ULTRA), spec(LLAMA_8B), Workload(runtime="llama.cpp"))
    # macOS wires ~75 % of RAM for the GPU by default; "192 GB" of RAM is 192 GiB.
    assert e.memory.available_per_accelerator_gb == pytest.approx(192 * 2**30 * 0.75 / 1e9)
    assert (
        derive_tier(
            BuildSpec("Mac Studio", M2_ULTRA, intra_node_link=IntraNodeLink("unified", None))
        )
        == "desktop"
    )


def test_tiers():
    assert derive_tier(DESKTOP) == "desktop"
    assert derive_tier(BuildSpec("DGX", H200, 1, 8, IntraNodeLink("nvswitch", 450))) == "dgx"
    assert derive_tier(CLUSTER) == "cluster"
    nvl72 = BuildSpec(
        "NVL72", H200, 18, 4, IntraNodeLink("nvswitch", 900), scale_up_domain_accelerators=72
    )
    assert derive_tier(nvl72) == "cluster"


def test_cost_figures_use_assumptions():
    costs = CostAssumptions(amortization_years=3, electricity_usd_per_kwh=0.15, pue=1.3)
    e = estimate(
        BuildSpec("1x 4090", RTX4090),
        spec(LLAMA_8B),
        Workload(precision="q4_k_m", runtime="llama.cpp"),
        costs,
    )
    c = e.cost
    assert c.price_usd == 1599 and c.power_w == pytest.approx(450 * 1.25)
    assert c.usd_per_hour == pytest.approx(1599 / (3 * 8766) + 0.5625 * 1.3 * 0.15)
    assert c.usd_per_million_tokens > 0 and c.joules_per_token > 0
    assert c.usd_per_gb_memory == pytest.approx(1599 / 24)


def test_estimate_is_deterministic_and_frozen():
    a = estimate(CLUSTER, spec(DEEPSEEK_V3), Workload(precision="fp8"))
    b = estimate(CLUSTER, spec(DEEPSEEK_V3), Workload(precision="fp8"))
    assert a == b
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.fits = False  # type: ignore[misc]


FORBIDDEN = {"fastapi", "starlette", "sqlalchemy", "jinja2", "httpx", "pydantic", "yaml"}


def test_engine_imports_only_the_standard_library():
    engine = Path(__file__).resolve().parents[2] / "app" / "engine"
    for path in engine.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN, f"{path.name} imports {name}"
