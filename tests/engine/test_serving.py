"""Serving curves: shape with concurrency, the SLO point, sizing, queueing, speculation, plans."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.engine import (
    AcceleratorSpec,
    BuildSpec,
    CostAssumptions,
    EngineInputError,
    HostSpec,
    IntraNodeLink,
    ModelSpec,
    Workload,
    estimate,
    model_spec_from_hf_config,
)
from app.engine.serving import (
    ServiceLevel,
    ServingWorkload,
    SloPoint,
    Speculative,
    best_at_slo,
    concurrency_grid,
    expected_tokens_per_step,
    meets,
    mmc_wait_s,
    serving_base_workload,
    serving_curve,
)

from .shapes import CLUSTER, DEEPSEEK_V3, DESKTOP, GPT_OSS_120B, H200, LLAMA_8B, LLAMA_70B

DGX_H200 = BuildSpec(
    "DGX H200", H200, 1, 8, IntraNodeLink("nvswitch", 450), power_w=10_200, price_usd=400_000
)
ONE_H200 = BuildSpec("1x H200", H200, price_usd=32_000)
DEEPSEEK = model_spec_from_hf_config(DEEPSEEK_V3, name="DeepSeek-V3")
LLAMA70 = model_spec_from_hf_config(LLAMA_70B, name="Llama 3.1 70B")
LLAMA8 = model_spec_from_hf_config(LLAMA_8B, name="Llama 3.1 8B")
FP8 = Workload(precision="fp8")
CHAT = ServingWorkload(input_tokens=1024, output_tokens=1024)


def test_grid_has_powers_of_two_and_half_steps_and_ends_at_the_largest_batch() -> None:
    assert concurrency_grid(100) == (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 100)
    assert concurrency_grid(64)[-1] == 64
    assert concurrency_grid(0) == ()


def test_per_user_speed_falls_and_total_throughput_rises_until_it_saturates() -> None:
    curve = serving_curve(ONE_H200, LLAMA8, FP8, CHAT)
    users = [p.tokens_per_s_per_user for p in curve.curve]
    totals = [p.tokens_per_s_total for p in curve.curve]
    assert len(curve.curve) > 8
    assert all(a >= b for a, b in zip(users, users[1:], strict=False))
    assert users[0] > 2 * users[-1]
    # Total throughput rises steeply at first, then flattens: the last doubling of concurrency
    # gains far less than the first.
    assert all(b > a for a, b in zip(totals[:6], totals[1:6], strict=False))
    assert totals[-1] > 20 * totals[0]
    first_gain = totals[1] / totals[0]
    last_gain = totals[-1] / totals[-3]
    assert first_gain > 1.8 and last_gain < first_gain


def test_itl_rises_with_the_share_of_each_step_spent_on_arriving_prompts() -> None:
    short = serving_curve(ONE_H200, LLAMA8, FP8, ServingWorkload(256, 1024)).curve
    long_ = serving_curve(ONE_H200, LLAMA8, FP8, ServingWorkload(4096, 1024)).curve
    at = {p.concurrency: p for p in short}
    for p in long_:
        if p.concurrency >= 16 and p.concurrency in at:
            assert p.itl_ms > at[p.concurrency].itl_ms
            assert p.prefill_share > at[p.concurrency].prefill_share


def test_ttft_grows_with_concurrency_and_prompt_length() -> None:
    curve = serving_curve(ONE_H200, LLAMA8, FP8, CHAT).curve
    assert curve[-1].ttft_s > curve[0].ttft_s
    longer = serving_curve(ONE_H200, LLAMA8, FP8, ServingWorkload(8192, 1024)).curve
    assert longer[0].ttft_s > 4 * curve[0].ttft_s


def test_cost_per_million_output_tokens_falls_with_concurrency_and_is_null_without_price() -> None:
    curve = serving_curve(ONE_H200, LLAMA8, FP8, CHAT).curve
    first, last = curve[0], curve[-1]
    assert first.usd_per_million_output_tokens is not None
    assert last.usd_per_million_output_tokens is not None
    assert last.usd_per_million_output_tokens < first.usd_per_million_output_tokens / 10
    unpriced = replace(ONE_H200, price_usd=None, accelerator=replace(H200, price_usd=None))
    point = serving_curve(unpriced, LLAMA8, FP8, CHAT).curve[0]
    assert point.usd_per_million_output_tokens is None
    assert point.usd_per_million_input_tokens is None


def test_one_user_pays_for_the_prompts_it_prefills() -> None:
    """With one user nothing decodes beside its prompt: the prefill is its own GPU time, so
    prompts take that share of the build's cost (it was 0 with one user: only the other slots'
    prompts were counted)."""
    first = serving_curve(ONE_H200, LLAMA8, FP8, ServingWorkload(4096, 256)).curve[0]
    assert first.concurrency == 1
    slot_s = 1.0 / first.requests_per_s
    assert first.prefill_share > 0.5 * first.ttft_s / slot_s
    assert first.usd_per_million_input_tokens is not None
    assert first.usd_per_million_input_tokens > 0.0
    # GPU seconds are split, not added: prompts and answers together pay the build's hour.
    hour_usd = (
        first.usd_per_million_input_tokens * first.input_tokens_per_s
        + first.usd_per_million_output_tokens * first.tokens_per_s_total
    ) * 3600 / 1e6
    alone = (first.usd_per_million_output_tokens * first.tokens_per_s_total) * 3600 / 1e6
    assert hour_usd > alone


def test_the_slo_point_meets_its_limits_and_has_the_most_throughput_that_does() -> None:
    slo = ServiceLevel(ttft_s_max=0.5, tokens_per_s_per_user_min=60)
    curve = serving_curve(ONE_H200, LLAMA8, FP8, CHAT, slo)
    at = curve.at_slo
    assert at is not None
    assert at.point.ttft_s <= 0.5 and at.point.tokens_per_s_per_user >= 60
    meeting = [p for p in curve.curve if meets(p, slo)]
    assert at.point.tokens_per_s_total == max(p.tokens_per_s_total for p in meeting)
    assert any(not meets(p, slo) for p in curve.curve)  # the limit actually binds


def test_no_point_meeting_the_limits_gives_no_operating_point_and_says_so() -> None:
    curve = serving_curve(ONE_H200, LLAMA8, FP8, CHAT, ServiceLevel(itl_ms_max=0.01))
    assert curve.at_slo is None
    assert any("No concurrency meets" in f.message for f in curve.findings)


@pytest.mark.parametrize("factor", [1, 2, 4, 8])
def test_sizing_for_concurrent_users_scales_linearly_with_load(factor: int) -> None:
    slo = ServiceLevel(tokens_per_s_per_user_min=60)
    base = serving_curve(ONE_H200, LLAMA8, FP8, CHAT, slo).at_slo
    assert base is not None
    load = replace(slo, concurrent_users=base.point.concurrency * 10 * factor)
    at = serving_curve(ONE_H200, LLAMA8, FP8, CHAT, load).at_slo
    assert at is not None and at.copies_needed == 10 * factor


RATES = (200.0, 400.0, 800.0)


def _sized_for_rate(rate: float) -> SloPoint:
    slo = ServiceLevel(ttft_s_max=1.0, tokens_per_s_per_user_min=60, requests_per_s=rate)
    at = serving_curve(ONE_H200, LLAMA8, FP8, CHAT, slo).at_slo
    assert at is not None and at.copies_needed is not None and at.utilization is not None
    return at


@pytest.mark.parametrize("rate", RATES)
def test_sizing_for_a_request_rate_queues_inside_the_ttft_limit(rate: float) -> None:
    at = _sized_for_rate(rate)
    assert at.point.ttft_s <= 1.0
    assert at.point.queue_wait_s >= 0.0
    assert at.utilization is not None and at.utilization < 1.0


def test_sizing_for_a_request_rate_scales_about_linearly() -> None:
    rates = RATES
    copies = [_sized_for_rate(rate).copies_needed or 0 for rate in rates]
    # Whole copies round up, so copies per request/s agree to within one copy's share.
    per_rate = [c / r for c, r in zip(copies, rates, strict=True)]
    assert max(per_rate) / min(per_rate) < 1 + 1 / copies[0]
    assert copies[2] > copies[1] > copies[0] >= 2


def test_waiting_for_a_slot_grows_without_bound_as_utilisation_nears_one() -> None:
    assert mmc_wait_s(0.0, 64, 10.0) == 0.0
    waits = [mmc_wait_s(u, 64, 10.0) for u in (0.5, 0.9, 0.99)]
    assert waits[0] < waits[1] < waits[2]
    assert mmc_wait_s(1.0, 64, 10.0) == float("inf")
    # One server: Sakasegawa's formula is exact, Wq = rho / (1 - rho) x service time.
    assert mmc_wait_s(0.5, 1, 2.0) == pytest.approx(2.0)


def test_mtp_raises_single_user_speed_by_less_than_its_tokens_per_step() -> None:
    plain = serving_curve(DGX_H200, DEEPSEEK, FP8, CHAT)
    mtp = serving_curve(DGX_H200, DEEPSEEK, FP8, replace(CHAT, speculative=Speculative("mtp")))
    gain = mtp.curve[0].tokens_per_s_per_user / plain.curve[0].tokens_per_s_per_user
    tokens_per_step = expected_tokens_per_step(0.85, 1)  # DeepSeek-V3's published acceptance
    assert mtp.curve[0].tokens_per_step == pytest.approx(tokens_per_step)
    assert 1.3 < gain < tokens_per_step


def test_speculation_costs_compute_at_high_concurrency() -> None:
    spec = Speculative("mtp", acceptance_rate=0.85)
    # Eight one-GPU replicas with an FP8 KV cache and short requests hold batches large enough
    # to turn compute-bound (with the default bf16 KV cache they run out of memory first).
    replicas = replace(FP8, tensor_parallel=1, kv_cache_precision="fp8")
    short = replace(CHAT, input_tokens=256, output_tokens=256)
    plain = {p.concurrency: p for p in serving_curve(DGX_H200, LLAMA70, replicas, short).curve}
    mtp = serving_curve(DGX_H200, LLAMA70, replicas, replace(short, speculative=spec))
    assert mtp.curve[0].tokens_per_s_per_user > plain[1].tokens_per_s_per_user
    compute_bound = [p for p in mtp.curve
                     if p.concurrency in plain and plain[p.concurrency].bottleneck == "compute"]
    assert compute_bound
    for p in compute_bound:
        assert p.tokens_per_s_per_user < plain[p.concurrency].tokens_per_s_per_user
    assert any("cost more compute" in f.message for f in mtp.findings)


def test_a_draft_model_speeds_up_a_single_user() -> None:
    spec = Speculative("draft", acceptance_rate=0.7, draft_tokens=4, draft_model=LLAMA8)
    plain = serving_curve(DGX_H200, LLAMA70, FP8, CHAT).curve[0]
    draft = serving_curve(DGX_H200, LLAMA70, FP8, replace(CHAT, speculative=spec)).curve[0]
    assert draft.tokens_per_s_per_user > plain.tokens_per_s_per_user


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (Speculative("mtp"), "speculative.acceptance_rate"),  # no published figure for Llama
        (Speculative("draft", acceptance_rate=0.7), "speculative.draft_model"),
        (Speculative("mtp", acceptance_rate=1.0), "speculative.acceptance_rate"),
        (Speculative("eagle"), "speculative.kind"),
    ],
)
def test_bad_speculation_is_refused_naming_the_field(spec: Speculative, field: str) -> None:
    with pytest.raises(EngineInputError) as info:
        serving_curve(DGX_H200, LLAMA70, FP8, replace(CHAT, speculative=spec))
    assert info.value.field == field


def test_bad_serving_inputs_are_refused_naming_the_field() -> None:
    with pytest.raises(EngineInputError) as info:
        serving_curve(ONE_H200, LLAMA8, FP8, ServingWorkload(0, 10))
    assert info.value.field == "serving.input_tokens"
    with pytest.raises(EngineInputError) as info:
        serving_curve(ONE_H200, LLAMA8, FP8, CHAT, ServiceLevel(ttft_s_max=-1))
    assert info.value.field == "serving.ttft_s_max"
    with pytest.raises(EngineInputError) as info:
        serving_curve(ONE_H200, LLAMA8, Workload(mode="training"), CHAT)
    assert info.value.field == "mode"


def test_a_model_that_does_not_fit_has_no_curve() -> None:
    small = BuildSpec("1x 24 GB", AcceleratorSpec("24 GB card", 24, 1000, 165))
    curve = serving_curve(small, LLAMA70, FP8, CHAT, ServiceLevel(concurrent_users=10))
    assert not curve.fits and curve.curve == () and curve.at_slo is None
    assert any(f.severity == "blocker" for f in curve.findings)


def test_the_plan_search_prefers_replicas_of_small_groups_for_throughput_at_an_slo() -> None:
    slo = ServiceLevel(tokens_per_s_per_user_min=40, concurrent_users=4000)
    searched = serving_curve(DGX_H200, LLAMA8, FP8, CHAT, slo)
    pinned = serving_curve(DGX_H200, LLAMA8, replace(FP8, tensor_parallel=8), CHAT, slo)
    assert searched.at_slo is not None and pinned.at_slo is not None
    assert searched.plan.data_parallel > 1
    assert searched.at_slo.copies_needed is not None and pinned.at_slo.copies_needed is not None
    # Replicas of smaller groups hold more users per copy at the per-user limit: never more
    # copies, and more throughput from each.
    assert searched.at_slo.copies_needed <= pinned.at_slo.copies_needed
    assert searched.at_slo.point.concurrency > pinned.at_slo.point.concurrency
    assert searched.at_slo.point.tokens_per_s_total > pinned.at_slo.point.tokens_per_s_total


@pytest.mark.parametrize(
    ("build", "model", "slo"),
    [
        (ONE_H200, LLAMA8, ServiceLevel(ttft_s_max=0.5, tokens_per_s_per_user_min=60)),
        (DGX_H200, DEEPSEEK, ServiceLevel(tokens_per_s_per_user_min=20, concurrent_users=900)),
        (DGX_H200, LLAMA70, ServiceLevel(itl_ms_max=25, requests_per_s=30)),
        (DGX_H200, DEEPSEEK, ServiceLevel(concurrent_users=5000)),  # the top of the curve
    ],
)
def test_the_fast_slo_search_finds_the_curves_operating_point(
    build: BuildSpec, model: ModelSpec, slo: ServiceLevel
) -> None:
    curve = serving_curve(build, model, FP8, CHAT, slo)
    found = best_at_slo(build, model, FP8, CHAT, slo)
    assert curve.at_slo is not None and found is not None
    plan, at = found
    assert plan == curve.plan
    assert at.point.concurrency == curve.at_slo.point.concurrency
    assert at.copies_needed == curve.at_slo.copies_needed


def test_every_figure_is_labelled_an_estimate() -> None:
    curve = serving_curve(ONE_H200, LLAMA8, FP8, CHAT)
    assert curve.estimated is True
    assert any("chunked prefill" in a for a in curve.assumptions)


def test_the_curve_ends_at_the_largest_concurrency_that_really_fits() -> None:
    curve = serving_curve(DGX_H200, DEEPSEEK, FP8, CHAT)
    top = curve.curve[-1].concurrency
    assert curve.max_concurrency == top
    wl = replace(FP8, context_tokens=2048, prompt_tokens=1024, tensor_parallel=8,
                 pipeline_parallel=1)
    assert estimate(DGX_H200, DEEPSEEK, replace(wl, batch=top)).fits
    assert not estimate(DGX_H200, DEEPSEEK, replace(wl, batch=top + 1)).fits


@pytest.mark.parametrize(
    "slo",
    [
        ServiceLevel(concurrent_users=10**6),
        ServiceLevel(tokens_per_s_per_user_min=30, concurrent_users=1000),
        ServiceLevel(ttft_s_max=0.3, requests_per_s=50),
    ],
)
@pytest.mark.parametrize("model", [LLAMA8, LLAMA70], ids=lambda m: m.name)
@pytest.mark.parametrize(
    "build", [ONE_H200, DGX_H200, DESKTOP, CLUSTER], ids=lambda b: b.name
)
def test_the_fast_slo_search_agrees_with_the_curve_across_builds(
    slo: ServiceLevel, build: BuildSpec, model: ModelSpec
) -> None:
    curve = serving_curve(build, model, FP8, CHAT, slo)
    found = best_at_slo(build, model, FP8, CHAT, slo)
    if curve.at_slo is None:
        assert found is None
        return
    assert found is not None
    assert found[1].point.concurrency == curve.at_slo.point.concurrency
    assert found[1].copies_needed == curve.at_slo.copies_needed


# Builds of parts (issue 14) served by llama-server with several slots.
RTX4090_CARD = AcceleratorSpec(
    "NVIDIA GeForce RTX 4090", 24, 1008, 165.2, fp8_tflops=330.3, tdp_w=450, price_usd=1599
)
# Dual-channel DDR5-5600: 2 x 5600 MT/s x 8 bytes = 89.6 GB/s.
OFFLOAD_BOX = BuildSpec(
    "4090 + 128 GB", RTX4090_CARD, host=HostSpec("Ryzen 9 9950X", 16, 128, 89.6),
    price_usd=3600,
)
GPT_OSS = model_spec_from_hf_config(GPT_OSS_120B, name="gpt-oss-120b")
MXFP4_LLAMA_CPP = Workload(precision="mxfp4", runtime="llama.cpp")


def test_an_offloaded_build_gets_a_curve_over_llama_server_slots() -> None:
    curve = serving_curve(OFFLOAD_BOX, GPT_OSS, MXFP4_LLAMA_CPP, CHAT)
    assert curve.fits and curve.plan.runtime == "llama.cpp"
    assert "in RAM" in curve.plan.description
    concurrency = [p.concurrency for p in curve.curve]
    assert concurrency[0] == 1 and len(concurrency) > 3
    # Shared RAM reads: each slot is slower, all slots together serve more.
    users = [p.tokens_per_s_per_user for p in curve.curve]
    totals = [p.tokens_per_s_total for p in curve.curve]
    assert users == sorted(users, reverse=True) and users[-1] < users[0]
    assert totals[-1] > totals[0]
    # Between points with the same placement the total rises; a point whose KV cache pushes
    # more weights into RAM may stall it (the prompt chunks no longer hide under the reads).
    base = serving_base_workload(MXFP4_LLAMA_CPP, CHAT)
    placements = [
        estimate(OFFLOAD_BOX, GPT_OSS, replace(base, batch=c), CostAssumptions()).placement
        for c in concurrency
    ]
    for i in range(1, len(totals)):
        if placements[i] == placements[i - 1]:
            assert totals[i] > totals[i - 1]
    assert any("llama-server" in f.message for f in curve.findings)


def test_the_offload_curve_stops_below_llama_cpps_gpu_offload_batch() -> None:
    # From 32 tokens per batch ggml-cuda moves RAM weights over PCIe (not modelled): 31 slots.
    curve = serving_curve(OFFLOAD_BOX, GPT_OSS, MXFP4_LLAMA_CPP, CHAT)
    assert curve.max_concurrency == 31
    assert any(f.severity == "caution" and "31 slots" in f.message for f in curve.findings)


def test_an_offloaded_decode_step_adds_the_ram_part_at_the_hosts_bandwidth() -> None:
    slow_ram = replace(OFFLOAD_BOX, host=HostSpec("slow", 16, 128, 44.8))  # half the bandwidth
    fast = serving_curve(OFFLOAD_BOX, GPT_OSS, MXFP4_LLAMA_CPP, CHAT).curve[0]
    slow = serving_curve(slow_ram, GPT_OSS, MXFP4_LLAMA_CPP, CHAT).curve[0]
    assert fast.bottleneck == "host RAM bandwidth"
    # The RAM part doubles, the GPU part stays: slower, but by less than 2x.
    assert fast.itl_ms < slow.itl_ms < 2 * fast.itl_ms


def test_an_offloaded_build_meets_an_slo_and_is_sized() -> None:
    slo = ServiceLevel(tokens_per_s_per_user_min=5, concurrent_users=20)
    curve = serving_curve(OFFLOAD_BOX, GPT_OSS, MXFP4_LLAMA_CPP, CHAT, slo)
    found = best_at_slo(OFFLOAD_BOX, GPT_OSS, MXFP4_LLAMA_CPP, CHAT, slo)
    assert curve.at_slo is not None and found is not None
    assert curve.at_slo.point.tokens_per_s_per_user >= 5
    copies = curve.at_slo.copies_needed
    assert copies == -(-20 // curve.at_slo.point.concurrency)
    assert found[1].point.concurrency == curve.at_slo.point.concurrency


def test_prefill_in_passes_of_its_own_hides_nothing_under_the_decode_weight_reads() -> None:
    mixed = serving_curve(ONE_H200, LLAMA8, replace(FP8, runtime="vllm"), CHAT).curve
    alone = serving_curve(
        ONE_H200, LLAMA8, replace(FP8, runtime="vllm", mixed_prefill=False), CHAT
    ).curve
    at = {p.concurrency: p for p in mixed}
    shared = [p for p in alone if p.concurrency in at]
    assert shared[0].concurrency == 1
    # A lone request has no other prompts beside its decode: nothing to hide either way.
    assert shared[0].itl_ms == pytest.approx(at[1].itl_ms)
    # While the decode compute is below the weight reads, the mixed pass hides prompt compute
    # there; once it is not, neither hides anything.
    assert all(p.itl_ms >= at[p.concurrency].itl_ms * (1 - 1e-12) for p in shared)
    assert all(p.itl_ms > at[p.concurrency].itl_ms for p in shared if 2 <= p.concurrency <= 32)
