"""Decode and prefill speed: roofline, communication, fixed costs, published rows (speed.py)."""

from __future__ import annotations

import dataclasses

import pytest

from app.engine import (
    BuildSpec,
    Estimate,
    InterNodeLink,
    IntraNodeLink,
    Workload,
    estimate,
)
from app.engine.collectives import allreduce_link
from app.engine.prep import link_for
from app.engine.runtime import PRE_CUDA_GRAPH_S_PER_LAYER
from app.engine.serving_point import shared_prefill_s

from .shapes import (
    CLUSTER,
    DEEPSEEK_V3,
    DESKTOP,
    H100,
    H200,
    LLAMA_3_8B,
    LLAMA_8B,
    LLAMA_70B,
    RTX4090,
    RTX6000,
    spec,
)

NVSWITCH_H100 = BuildSpec("8x H100 NVSwitch", H100, 1, 8, IntraNodeLink("nvswitch", 450))


def test_pcie_tensor_parallel_is_slower_than_nvswitch():
    model = spec(LLAMA_70B)
    pcie = BuildSpec("8x H100 PCIe-linked", H100, 1, 8, IntraNodeLink("pcie", 64))
    w = Workload(precision="bf16", parallelism="tensor")
    slow = estimate(pcie, model, w).throughput
    fast = estimate(NVSWITCH_H100, model, w).throughput
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


def test_llama_cpp_pipeline_refills_for_every_2048_token_call():
    # llama.cpp overlaps the 512-token micro-batches of one 2048-token call across stages, then
    # drains: 4 stages run 4 micro-batches in (4 + 4 - 1) stage-slots of a quarter each, a
    # speed-up of at most 4 x 4 / 7 = 2.29 however long the prompt (not 4 x 16 / 19 = 3.37).
    model = spec(LLAMA_8B)
    one = BuildSpec("1x 4090", RTX4090)

    def ttft(build: BuildSpec, pp: int | None) -> float:
        w = Workload(precision="q4_0", runtime="llama.cpp", pipeline_parallel=pp,
                     prompt_tokens=8192, context_tokens=8192)
        return estimate(build, model, w).throughput.time_to_first_token_s

    speedup = ttft(one, None) / ttft(DESKTOP, 4)
    assert 2.0 < speedup <= 4 * 4 / 7


def test_short_prompts_packed_into_one_pass_share_its_weight_reads_and_fixed_costs():
    # vLLM prefills up to 8,192 tokens per pass: 64 prompts of 128 tokens share one pass, so
    # each skips most of the weight reads that bound a 128-token prompt alone (16 GB at
    # ~3.8 TB/s = 4.2 ms) and pays its FLOPs; a prompt of a whole pass or more shares nothing.
    build = BuildSpec("1x H200", H200)
    model = spec(LLAMA_8B)
    short = estimate(build, model, Workload(prompt_tokens=128, context_tokens=256, batch=2))
    assert short.throughput.packed_prefill_s < 0.8 * short.throughput.time_to_first_token_s
    long = estimate(build, model, Workload(prompt_tokens=8192, context_tokens=8300, batch=2))
    assert long.throughput.packed_prefill_s == long.throughput.time_to_first_token_s
    # One sequence: no other prompt shares its pass.
    alone = estimate(build, model, Workload(prompt_tokens=128, context_tokens=256)).throughput
    assert alone.packed_prefill_s is None


def test_a_serving_pipeline_kept_full_shares_a_prompt_over_its_stages():
    # vLLM / TensorRT-LLM keep pp micro-batches in flight, so in a stream of requests a long
    # prompt occupies each of 4 stages for a quarter of its alone-in-the-pipeline time (plus
    # the hop transfers); llama.cpp drains its pipeline after every call and keeps the bubble.
    model = spec(LLAMA_8B)
    w = Workload(precision="bf16", pipeline_parallel=4, prompt_tokens=8192,
                 context_tokens=8300, batch=8)
    piped = estimate(DESKTOP, model, dataclasses.replace(w, runtime="vllm")).throughput
    assert piped.packed_prefill_s < 0.3 * piped.time_to_first_token_s
    drained = estimate(DESKTOP, model, dataclasses.replace(w, runtime="llama.cpp")).throughput
    assert drained.packed_prefill_s == drained.time_to_first_token_s


def test_routed_experts_prefill_at_their_own_share(calibration) -> None:
    # Halving the routed-expert share doubles only the routed-expert part of a MoE prompt's
    # compute; a dense model's prefill does not change.
    from app.engine import runtime
    from app.engine.prep import accelerator_class

    build = BuildSpec("8x H200", H200, 1, 8, IntraNodeLink("nvswitch", 450))
    w = Workload(precision="fp8", prompt_tokens=8192, context_tokens=8300)

    def ttft(model_config: dict, routed: float | None) -> float:
        eff = runtime.Efficiency(0.8, 0.5, 0.3, 4e-6, routed)
        calibration({("vllm", accelerator_class(H200)): eff})
        return estimate(build, spec(model_config), w).throughput.time_to_first_token_s

    assert ttft(DEEPSEEK_V3, 0.25) > ttft(DEEPSEEK_V3, 0.5) > ttft(DEEPSEEK_V3, None) * 0.999
    assert ttft(LLAMA_70B, 0.25) == ttft(LLAMA_70B, None)


def test_a_host_launched_prefill_pass_ends_no_sooner_than_its_launches(calibration) -> None:
    # The launch floor binds a short prompt (its pass is over on the GPU sooner) and leaves a
    # long one, whose GEMMs outlast the launches, as it was.
    from app.engine import runtime
    from app.engine.prep import accelerator_class

    build = BuildSpec("8x H200", H200, 1, 8, IntraNodeLink("nvswitch", 450))
    model = spec(DEEPSEEK_V3)
    host = 2e-3  # seconds per layer

    def ttft(prompt: int, floor: float) -> float:
        eff = runtime.Efficiency(0.8, 0.5, 0.3, 4e-6, 0.05, floor)
        calibration({("sglang", accelerator_class(H200)): eff})
        w = Workload(
            precision="fp8", runtime="sglang", prompt_tokens=prompt, context_tokens=prompt + 100
        )
        return estimate(build, model, w).throughput.time_to_first_token_s

    short = ttft(128, host)
    assert short > ttft(128, 0.0)
    assert short >= host * model.num_hidden_layers
    assert short < host * model.num_hidden_layers * 1.2  # the floor, not floor + GPU time
    assert ttft(8192, host) == ttft(8192, 0.0)


def test_sglang_prefill_pays_its_measured_eager_launch_floor() -> None:
    # SGLang launches prefill kernels from Python (graphs in decode only): a one-pass DeepSeek
    # prompt takes at least SGLang PR #12160's eager floor; graph-replaying runtimes have none.
    from app.engine import RUNTIMES
    from app.engine.runtime import SGLANG_EAGER_PREFILL_S_PER_LAYER

    model = spec(DEEPSEEK_V3)
    est = _sglang_run(1)
    floor = SGLANG_EAGER_PREFILL_S_PER_LAYER * model.num_hidden_layers
    assert floor <= est.throughput.time_to_first_token_s
    assert RUNTIMES["vllm"].prefill_host_s_per_layer == 0.0
    assert RUNTIMES["trt-llm"].prefill_host_s_per_layer == 0.0  # no measurement (docs 7)


def test_a_packed_prefill_pass_pays_the_host_launches_once(calibration) -> None:
    # 32 prompts of 128 tokens fill one 4,096-token pass: the host launches its kernels once,
    # so a prompt's share holds a 32nd of the floor (not a 64th: the 8,192-token budget could
    # pack 64, but the replica has only 32 sequences), and the pass no more than floor + GPU.
    from app.engine import runtime
    from app.engine.prep import accelerator_class

    build = BuildSpec("8x H200", H200, 1, 8, IntraNodeLink("nvswitch", 450))
    model = spec(DEEPSEEK_V3)
    host = 2e-3  # seconds per layer

    def pass_s(floor: float) -> float:
        eff = runtime.Efficiency(0.8, 0.5, 0.3, 4e-6, 0.5, floor)
        calibration({("sglang", accelerator_class(H200)): eff})
        w = Workload(precision="fp8", runtime="sglang", prompt_tokens=128, context_tokens=228,
                     batch=32, tensor_parallel=8)
        return 32 * estimate(build, model, w).throughput.packed_prefill_s

    floor = host * model.num_hidden_layers
    assert floor <= pass_s(host) < floor + pass_s(0.0)


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


def test_moe_and_mla_fixed_costs_dominate_deepseek_single_stream():
    t = estimate(
        CLUSTER, spec(DEEPSEEK_V3), Workload(precision="fp8", context_tokens=8192)
    ).throughput
    assert t is not None
    assert t.decode_fixed_s > 5 * t.decode_memory_s
    assert t.decode_tokens_per_s < 0.2 / t.decode_memory_s
    # A dense model of similar active size is not penalised the same way.
    dense = estimate(CLUSTER, spec(LLAMA_70B), Workload(precision="fp8")).throughput
    assert dense is not None and dense.decode_fixed_s < t.decode_fixed_s / 3


def test_early_2025_mla_kernels_cost_more_than_todays_and_llama_cpp_is_unchanged():
    # vLLM / SGLang / TensorRT-LLM builds from before April 2025 pay the early MLA and MoE
    # kernel time; today's pay MLA_KERNEL_SHARE of it. llama.cpp runs its own kernels.
    from app.engine import RUNTIMES
    from app.engine.mla_kernels import MLA_KERNEL_SHARE
    from app.engine.moe_kernels import moe_fixed_s_per_layer
    from app.engine.runtime import MLA_FIXED_S_PER_LAYER

    model = spec(DEEPSEEK_V3)
    w = Workload(precision="fp8", runtime="sglang", tensor_parallel=8)
    today = estimate(NODE_H200, model, w).throughput
    early = estimate(NODE_H200, model, dataclasses.replace(w, early_mla_kernels=True)).throughput
    assert today is not None and early is not None
    rt = RUNTIMES["sglang"]
    kernels = moe_fixed_s_per_layer(rt, model, w) * model.moe_layers
    kernels += MLA_FIXED_S_PER_LAYER * model.num_hidden_layers
    saved = early.decode_fixed_s - today.decode_fixed_s
    assert saved == pytest.approx((1 - MLA_KERNEL_SHARE) * kernels)
    assert today.decode_tokens_per_s > 1.5 * early.decode_tokens_per_s
    gguf = Workload(precision="q4_k_m", runtime="llama.cpp", context_tokens=2048)
    assert estimate(NODE_H200, model, gguf).throughput == estimate(
        NODE_H200, model, dataclasses.replace(gguf, early_mla_kernels=True)
    ).throughput


def test_tensor_parallel_all_reduce_latency_is_realistic_on_nvswitch():
    # NCCL small-message all-reduce over 8 NVSwitch GPUs takes 10-20 us (docs/engine.md sec. 5).
    model = spec(LLAMA_70B)
    t = estimate(NVSWITCH_H100, model, Workload(precision="fp8", parallelism="tensor")).throughput
    per_all_reduce = t.decode_communication_s / (2 * model.num_hidden_layers)
    assert 10e-6 <= per_all_reduce <= 20e-6


# ---- published DeepSeek-V3 runs on one 8-GPU node (no MTP) ------------------------------------
# Rows m01-m03 of benchmarks/data/measurements.csv, with their sources; the build is the one
# the accuracy script of that dataset used.
SGLANG_PR = "https://github.com/sgl-project/sglang/pull/2643"  # SGLang v0.4.1.post2, --tp 8
VLLM_ISSUE = "https://github.com/vllm-project/vllm/issues/30832"  # vLLM 0.13, TP8 on 8x H20
NODE_H200 = BuildSpec(
    "8x h200", H200, 1, 8, IntraNodeLink("nvswitch", 450), InterNodeLink("none", None)
)


def _sglang_run(batch: int) -> Estimate:
    """The SGLang PR's run: 128 prompt tokens, 256 output tokens, TP8 on 8x H200 (SGLang
    v0.4.1.post2, January 2025: the early MLA kernels)."""
    w = Workload(
        precision="fp8",
        context_tokens=256,
        prompt_tokens=128,
        batch=batch,
        runtime="sglang",
        tensor_parallel=8,
        early_mla_kernels=True,
    )
    return estimate(NODE_H200, spec(DEEPSEEK_V3), w)


def _output_tokens_per_s(est: Estimate, output_tokens: int) -> float:
    """Output tokens over wall time as serving benchmarks report it: every request of the batch
    is prefilled (the runtime packs the waiting prompts into its prefill passes, as the serving
    point does: shared_prefill_s), then `output_tokens` decode steps."""
    t = est.throughput
    assert t is not None
    wall = t.batch_per_replica * shared_prefill_s(t) + output_tokens * t.decode_step_s
    return t.batch_per_replica * output_tokens / wall * est.plan.data_parallel


def test_deepseek_v3_single_stream_on_8x_h200_matches_sglangs_run():
    # m01 (SGLANG_PR): 30.29 output tok/s at batch 1; before the MoE/MLA fixed costs the engine
    # predicted ~7x too fast.
    est = _sglang_run(1)
    assert est.fits
    assert 30.29 / 1.25 <= _output_tokens_per_s(est, 256) <= 30.29 * 1.25


def test_deepseek_r1_single_stream_on_8x_h100_matches_the_mla_kernel_anchor():
    # MLA_KERNEL_SHARE was set from tenstorrent/tt-inference-server issue #356 (July 2025):
    # DeepSeek-R1-0528 AWQ on 8x H100 under vLLM, one request, 16.1 ms per output token. (vLLM
    # 0.13 running DeepSeek-V3.2 on 8x H20, VLLM_ISSUE's ~30 tokens/s, is now predicted ~1.9x
    # too fast: V3.2's indexer kernels and the H20's seventh of the H100's compute are not
    # modelled; docs/engine.md 5.)
    w = Workload(
        precision="int4",
        context_tokens=1024 + 64,
        prompt_tokens=1024,
        runtime="vllm",
        tensor_parallel=8,
    )
    est = estimate(NVSWITCH_H100, spec(DEEPSEEK_V3), w)
    assert est.fits and est.throughput is not None
    assert 16.1e-3 / 1.25 <= est.throughput.decode_step_s <= 16.1e-3 * 1.25


@pytest.mark.parametrize(("batch", "measured_growth"), [(8, 206.32 / 30.29), (32, 760.52 / 30.29)])
def test_deepseek_v3_batch_sweep_keeps_per_sequence_speed_roughly_flat(batch, measured_growth):
    # SGLANG_PR's 1/8/32 sweep (m01-m03): aggregate grows almost linearly because fixed
    # per-layer costs, not expert bytes, dominate a step.
    growth = _output_tokens_per_s(_sglang_run(batch), 256) / _output_tokens_per_s(
        _sglang_run(1), 256
    )
    assert measured_growth / 1.3 <= growth <= measured_growth * 1.3


def test_llama_cpp_prefill_on_geforce_runs_at_the_fp16_accumulate_rate() -> None:
    # The catalogue holds GeForce's FP32-accumulate tensor rate; llama.cpp's CUDA GEMMs
    # accumulate in FP16 (twice that rate there), vLLM's in FP32. A pro card with the same
    # figures but full-rate FP32 accumulation gets no doubling.
    from dataclasses import replace

    from app.engine import RUNTIMES
    from app.engine.prep import half_rate_fp32_accumulate, prefill_peak_flops

    geforce = replace(RTX6000, name="NVIDIA GeForce RTX 4090")
    llama, vllm = RUNTIMES["llama.cpp"], RUNTIMES["vllm"]
    assert half_rate_fp32_accumulate(geforce) and not half_rate_fp32_accumulate(RTX6000)
    pro_peak = prefill_peak_flops(llama, BuildSpec("pro", RTX6000), "fp16")
    assert pro_peak == (364e12, 364e12)
    assert prefill_peak_flops(llama, BuildSpec("geforce", geforce), "fp16") == (728e12, 728e12)
    assert prefill_peak_flops(vllm, BuildSpec("geforce", geforce), "fp16") == pro_peak
    # FP8 weight GEMMs are not 16-bit ones: unchanged; their 16-bit attention is doubled.
    assert prefill_peak_flops(llama, BuildSpec("geforce", geforce), "fp8") == (728e12, 728e12)
    assert prefill_peak_flops(vllm, BuildSpec("geforce", geforce), "fp8") == (728e12, 364e12)

    model = spec(LLAMA_8B)
    w = Workload(precision="q4_0", runtime="llama.cpp", prompt_tokens=4096, context_tokens=4200)
    fast = estimate(BuildSpec("geforce", geforce), model, w).throughput.prefill_tokens_per_s
    slow = estimate(BuildSpec("pro", RTX6000), model, w).throughput.prefill_tokens_per_s
    assert 1.5 * slow < fast < 2 * slow  # the compute part doubles, fixed costs do not


def test_prefill_after_cached_context_attends_to_it_up_to_the_window() -> None:
    # Each prompt token attends to the depth already cached as well: full attention adds the
    # same time for every further 8,192 cached tokens; a sliding window caps what a token can
    # see, so depth beyond the window costs nothing more.
    from dataclasses import replace

    build = BuildSpec("1x 4090", RTX4090)
    w = Workload(precision="q4_0", runtime="llama.cpp", prompt_tokens=2048, context_tokens=40000)

    def ttft(config: dict, depth: int) -> float:
        work = replace(w, prefill_depth_tokens=depth)
        return estimate(build, spec(config), work).throughput.time_to_first_token_s

    full = [ttft(LLAMA_8B, d) for d in (0, 8192, 16384)]
    assert full[0] < full[1] < full[2]
    assert full[2] - full[1] == pytest.approx(full[1] - full[0], rel=1e-6)
    windowed = {**LLAMA_8B, "model_type": "mistral", "sliding_window": 4096}
    capped = [ttft(windowed, d) for d in (0, 2048, 8192, 16384)]
    assert capped[0] < capped[1] < capped[2] == pytest.approx(capped[3], rel=1e-9)



def test_a_larger_ubatch_prefills_a_long_prompt_in_fewer_passes() -> None:
    # llama-bench -ub 2048: a 2,048-token prompt is one forward pass, not four of 512; each
    # pass reads the weights and pays the per-layer fixed costs once, so it is no slower.
    from dataclasses import replace

    build = BuildSpec("1x 4090", RTX4090)
    w = Workload(precision="q4_0", runtime="llama.cpp", prompt_tokens=2048, context_tokens=2048)
    default = estimate(build, spec(LLAMA_8B), w).throughput.time_to_first_token_s
    one_pass = replace(w, prefill_token_budget=2048)
    assert estimate(build, spec(LLAMA_8B), one_pass).throughput.time_to_first_token_s < default
    as_default = replace(w, prefill_token_budget=512)
    assert estimate(build, spec(LLAMA_8B), as_default).throughput.time_to_first_token_s == (
        pytest.approx(default, rel=1e-12)
    )

def test_a_foreign_kernel_backend_takes_its_own_prefill_shares(
    calibration,
) -> None:
    # Vulkan on an NVIDIA card reads the (llama.cpp, class, vulkan) entry; CUDA, the card's
    # native backend, and an unnamed backend read the device class's.
    from dataclasses import replace

    from app.engine import runtime
    from app.engine.prep import accelerator_class

    card = replace(RTX4090, vendor="NVIDIA")
    kind = accelerator_class(card)
    native = runtime.Efficiency(0.8, 0.4, 0.2, 8e-6, None)
    vulkan = runtime.Efficiency(0.8, 0.1, 0.2, 8e-6, None)
    table = {("llama.cpp", kind): native, ("llama.cpp", kind, "vulkan"): vulkan}
    calibration(table)
    base = Workload(precision="q4_0", runtime="llama.cpp", prompt_tokens=4096,
                    context_tokens=4200)

    def ttft(backend: str | None) -> float:
        work = replace(base, backend=backend)
        result = estimate(BuildSpec("c", card), spec(LLAMA_8B), work)
        return result.throughput.time_to_first_token_s

    assert ttft(None) == ttft("cuda")
    assert ttft("vulkan") > 3 * ttft(None)  # a quarter of the compute share
    # vLLM has one kernel stack: a backend name changes nothing.
    vllm = replace(base, runtime="vllm", precision="bf16")
    plain = estimate(BuildSpec("c", card), spec(LLAMA_8B), vllm).throughput
    named = estimate(BuildSpec("c", card), spec(LLAMA_8B), replace(vllm, backend="vulkan"))
    assert named.throughput.time_to_first_token_s == plain.time_to_first_token_s


def test_a_foreign_kernel_backend_decodes_at_its_own_bandwidth_share(calibration) -> None:
    # Vulkan's mat-vec shaders have their own (llama.cpp, class, vulkan) bandwidth share and
    # launch cost; CUDA, the card's native backend, and an unnamed backend the class's.
    from dataclasses import replace

    from app.engine import runtime
    from app.engine.prep import accelerator_class

    card = replace(RTX4090, vendor="NVIDIA")
    kind = accelerator_class(card)
    native = runtime.Efficiency(0.8, 0.4, 0.2, 8e-6, None)
    vulkan = runtime.Efficiency(0.4, 0.4, 0.2, 8e-6, None)
    calibration({("llama.cpp", kind): native, ("llama.cpp", kind, "vulkan"): vulkan})
    base = Workload(precision="fp16", runtime="llama.cpp", context_tokens=512)

    def tg(backend: str | None) -> float:
        result = estimate(BuildSpec("c", card), spec(LLAMA_8B), replace(base, backend=backend))
        assert result.throughput is not None
        return result.throughput.decode_tokens_per_s

    assert tg(None) == tg("cuda")
    # F16 weight reads bind: half the bandwidth share, close to half the speed.
    assert tg("vulkan") == pytest.approx(tg(None) / 2, rel=0.05)


def test_llama_cpp_builds_before_cuda_graphs_pay_their_kernel_launches():
    # FP16 weights: the GPU's step outlasts the host's launches, so the host floor
    # (graph_capture) does not bind and the difference is the per-layer term alone.
    build = BuildSpec("1x 4090", RTX4090)
    today = Workload(precision="fp16", context_tokens=512, runtime="llama.cpp")
    before = dataclasses.replace(today, cuda_graphs=False)
    now, then = estimate(build, LLAMA_3_8B, today), estimate(build, LLAMA_3_8B, before)
    assert now.throughput is not None and then.throughput is not None
    step_now = 1.0 / now.throughput.decode_tokens_per_s
    step_then = 1.0 / then.throughput.decode_tokens_per_s
    extra = PRE_CUDA_GRAPH_S_PER_LAYER * LLAMA_3_8B.num_hidden_layers
    assert step_then - step_now == pytest.approx(extra, rel=1e-6)
    # vLLM captures its own graphs: the setting does not apply.
    vllm = dataclasses.replace(today, runtime="vllm", precision="int4")
    vllm_old = dataclasses.replace(vllm, cuda_graphs=False)
    a, b = estimate(build, LLAMA_3_8B, vllm), estimate(build, LLAMA_3_8B, vllm_old)
    assert a.throughput is not None and b.throughput is not None
    assert a.throughput.decode_tokens_per_s == pytest.approx(b.throughput.decode_tokens_per_s)


def test_bf16_weights_on_vulkan_run_the_scalar_fp32_path(calibration) -> None:
    # ggml-vulkan builds its BF16 matmuls from the FP32 shader unless the device has bf16
    # cooperative matrices (precision.BF16_SCALAR_BACKENDS): half the 16-bit rate; FP16
    # weights, and BF16 on the native backend, keep the 16-bit rate.
    from dataclasses import replace

    from app.engine import runtime
    from app.engine.precision import PRECISIONS, gemm_compute
    from app.engine.prep import accelerator_class

    assert gemm_compute(PRECISIONS["bf16"], "vulkan") == "fp32"
    assert gemm_compute(PRECISIONS["bf16"], None) == "fp16"
    assert gemm_compute(PRECISIONS["fp16"], "vulkan") == "fp16"
    card = replace(RTX4090, vendor="NVIDIA")
    kind = accelerator_class(card)
    same = runtime.Efficiency(0.8, 0.4, 0.2, 8e-6, None)  # one share: only the rate differs
    table = {("llama.cpp", kind): same, ("llama.cpp", kind, "vulkan"): same}
    calibration(table)
    base = Workload(precision="bf16", runtime="llama.cpp", prompt_tokens=4096,
                    context_tokens=4200)

    def ttft(precision: str, backend: str | None) -> float:
        work = replace(base, precision=precision, backend=backend)
        result = estimate(BuildSpec("c", card), spec(LLAMA_8B), work)
        return result.throughput.time_to_first_token_s

    assert ttft("fp16", "vulkan") == ttft("fp16", None) == ttft("bf16", None)
    # The weight GEMMs take twice as long; attention and fixed costs do not change.
    assert 1.5 * ttft("bf16", None) < ttft("bf16", "vulkan") < 2.0 * ttft("bf16", None)


def test_llama_cpp_prompts_without_flash_attention_move_their_scores_through_memory(
    calibration,
) -> None:
    # Without flash attention ggml writes each layer's K*Q scores in F32, softmaxes them in
    # place and reads them back (speed.UNFUSED_SCORE_BYTES = 16 a score): a prompt of n tokens
    # moves 16 x heads x layers x n^2/2 bytes more. vLLM's kernels are fused: no change there.
    from dataclasses import replace

    from app.engine import runtime
    from app.engine.prep import accelerator_class

    kind = accelerator_class(RTX4090)
    share = runtime.Efficiency(0.8, 0.4, 0.2, 8e-6, None)
    table = {("llama.cpp", kind): share, ("vllm", kind): share}
    calibration(table)
    n = 8192
    fused = Workload(precision="q4_0", runtime="llama.cpp", prompt_tokens=n, context_tokens=n)

    def prefill_s(work: Workload) -> float:
        result = estimate(BuildSpec("1x 4090", RTX4090), LLAMA_3_8B, work).throughput
        assert result is not None
        return n / result.prefill_tokens_per_s

    unfused = replace(fused, flash_attention=False)
    model = LLAMA_3_8B
    scores = model.num_attention_heads * model.num_hidden_layers * n * n / 2.0
    extra = 16.0 * scores / (RTX4090.memory_bandwidth_gbs * 1e9 * 0.8)
    assert prefill_s(unfused) - prefill_s(fused) == pytest.approx(extra, rel=1e-6)
    vllm = replace(fused, runtime="vllm", precision="int4")
    assert prefill_s(replace(vllm, flash_attention=False)) == pytest.approx(prefill_s(vllm))


def test_llama_cpp_decode_without_flash_attention_reads_the_cache_once_per_query_head():
    # ggml's unfused K*Q and KQ*V broadcast each KV head over its query heads: Llama 3 8B
    # (32 query heads, 8 KV heads) reads its cache 4 times a step; vLLM reads it once.
    build = BuildSpec("1x 4090", RTX4090)
    fused = Workload(precision="q4_0", context_tokens=8192, runtime="llama.cpp")
    model = LLAMA_3_8B

    def memory_s(work: Workload) -> float:
        result = estimate(build, model, work).throughput
        assert result is not None
        return result.decode_memory_s

    unfused = dataclasses.replace(fused, flash_attention=False)
    short_fused = dataclasses.replace(fused, context_tokens=16)
    short_unfused = dataclasses.replace(unfused, context_tokens=16)
    # The extra bytes grow with the cache: (ratio - 1) more reads of what one read costs.
    cache_read = memory_s(fused) - memory_s(short_fused)
    ratio = model.num_attention_heads / model.num_key_value_heads
    assert ratio == 4
    extra_long = memory_s(unfused) - memory_s(fused)
    extra_short = memory_s(short_unfused) - memory_s(short_fused)
    assert extra_long - extra_short == pytest.approx((ratio - 1) * cache_read, rel=1e-6)
    vllm = dataclasses.replace(fused, runtime="vllm", precision="int4")
    assert memory_s(dataclasses.replace(vllm, flash_attention=False)) == memory_s(vllm)


def test_tokens_of_one_sequence_read_its_cache_once_and_every_token_pays_attention_flops():
    # llama-bench's prompt run at -ub 2 decodes two consecutive tokens of one sequence per
    # pass: one cache read, not one per token as for two sequences.
    build = BuildSpec("1x 4090", RTX4090)
    two = Workload(precision="q4_0", context_tokens=32768, batch=2, runtime="llama.cpp")
    one_sequence = dataclasses.replace(two, decode_sequences=1)
    single = dataclasses.replace(two, batch=1)
    model = LLAMA_3_8B

    def parts(work: Workload) -> tuple[float, float]:
        result = estimate(build, model, work).throughput
        assert result is not None
        return result.decode_memory_s, result.decode_compute_s

    cache_read = parts(two)[0] - parts(single)[0]
    assert cache_read > 0.0
    assert parts(one_sequence)[0] == pytest.approx(parts(two)[0] - cache_read, rel=1e-9)
    assert parts(one_sequence)[1] == pytest.approx(parts(two)[1], rel=1e-9)
    assert dataclasses.replace(single, decode_sequences=1).kv_share_per_token == 1.0


def test_a_ring_all_reduce_across_nodes_runs_at_the_node_network_not_a_gpu_share() -> None:
    # Two nodes of 8 with 3,200 Gb/s each (8 x 400 Gb/s): a TP-16 ring sends each node's
    # share out once through all its NICs (400 GB/s); an all-to-all's GPU gets 1/8 of them.
    nics = BuildSpec(
        "2x DGX H200", H200, 2, 8, IntraNodeLink("nvswitch", 450), InterNodeLink("infiniband", 3200)
    )
    assert allreduce_link(nics, 16)[0] == pytest.approx(400e9)
    assert link_for(nics, 16)[0] == pytest.approx(50e9)
    # One 400 Gb/s port per node: the ring is bound by it, 50 GB/s.
    assert allreduce_link(CLUSTER, 16)[0] == pytest.approx(50e9)
    # Inside a node nothing changes.
    assert allreduce_link(CLUSTER, 8) == link_for(CLUSTER, 8)


def test_mxfp4_gguf_runs_llama_cpps_block_kernels_not_the_fp4_tensor_rate() -> None:
    # ggml-cuda's MMQ takes MXFP4 like Q4_0 (q8_1 activations, int8 MMA); vLLM's FP4 GEMMs
    # run at the card's FP4 rate where it has one.
    from app.engine.precision import PRECISIONS
    from app.engine.prep import matmul_compute
    from app.engine.runtime import RUNTIMES

    blackwell = dataclasses.replace(RTX6000, fp4_tflops=2020.0, fp8_tflops=1010.0)
    mxfp4, q4_0 = PRECISIONS["mxfp4"], PRECISIONS["q4_0"]
    for name in ("llama.cpp", "ollama"):
        assert matmul_compute(RUNTIMES[name], blackwell, mxfp4) == (
            matmul_compute(RUNTIMES[name], blackwell, q4_0)
        )
    assert matmul_compute(RUNTIMES["vllm"], blackwell, mxfp4) == "fp4"


def test_early_triton_mla_attention_grows_with_batch_times_context_at_its_own_rate():
    # The early Triton MLA decode kernel (vLLM TRITON_MLA, SGLang's default before FlashInfer MLA)
    # takes its attention FLOPs at EARLY_MLA_ATTENTION_SHARE of the 16-bit rate, in a kernel of
    # its own: at batch 128 its step grows with the context by those FLOPs, far beyond the KV
    # read that today's kernels pay (mla_kernels.py, docs/engine.md 5).
    from app.engine.mla_kernels import EARLY_MLA_ATTENTION_SHARE

    model = spec(DEEPSEEK_V3)

    def step(context: int, triton: bool) -> float:
        w = Workload(precision="fp8", runtime="sglang", tensor_parallel=8, batch=128,
                     context_tokens=context, early_mla_kernels=True, triton_mla_decode=triton)
        t = estimate(NODE_H200, model, w).throughput
        assert t is not None
        return t.decode_step_s

    grown = step(4000, True) - step(2000, True)
    flops = model.attention_flops_per_context_token * model.num_hidden_layers * 128 * 2000
    rate = H200.fp16_tflops * 1e12 * EARLY_MLA_ATTENTION_SHARE * 8
    assert grown == pytest.approx(flops / rate, rel=0.02)
    assert step(4000, False) - step(2000, False) < grown / 2
