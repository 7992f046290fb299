"""A stated token budget per scheduler step, and vLLM's MLA releases without chunked prefill."""

from __future__ import annotations

from dataclasses import replace

from app.engine import (
    BuildSpec,
    CostAssumptions,
    IntraNodeLink,
    Workload,
    estimate,
    model_spec_from_hf_config,
)
from app.engine.serving_point import plain_context, serving_point
from app.engine.serving_traffic import Traffic
from app.engine.token_budget import mixes_prefill, token_budget, vllm_unchunked_budget

from .shapes import DEEPSEEK_V3, H200, LLAMA_70B

DGX_H200 = BuildSpec("DGX H200", H200, 1, 8, IntraNodeLink("nvswitch", 450))
DEEPSEEK = model_spec_from_hf_config(DEEPSEEK_V3, name="DeepSeek-R1")
LLAMA70 = model_spec_from_hf_config(LLAMA_70B, name="Llama 3.1 70B")
# dstack's DeepSeek-R1 runs: 3,200-token prompts, 800-token answers, a wave of 32 at once.
RUN = Workload(precision="fp8", runtime="vllm", context_tokens=3600, prompt_tokens=3200, batch=32)


def test_mla_on_vllm_0_7_runs_without_chunked_prefill_at_the_model_length() -> None:
    assert vllm_unchunked_budget("0.7.4.dev181+gf35f8e22", DEEPSEEK, None) == 163840
    assert vllm_unchunked_budget("0.7.3.dev138+g21f6ca217", DEEPSEEK, 32768) == 32768
    # vLLM's floor of 2,048 tokens a step, however short the stated length.
    assert vllm_unchunked_budget("0.7.3", DEEPSEEK, 1024) == 2048


def test_other_releases_and_models_keep_chunked_prefill() -> None:
    assert vllm_unchunked_budget("0.7.0", DEEPSEEK, None) is None  # before vLLM's MLA kernels
    assert vllm_unchunked_budget("0.8.0", DEEPSEEK, None) is None  # MLA chunked prefill shipped
    assert vllm_unchunked_budget("v0.11.0", DEEPSEEK, None) is None
    assert vllm_unchunked_budget(None, DEEPSEEK, None) is None  # version not published
    assert vllm_unchunked_budget("0.7.3", LLAMA70, None) is None  # no MLA


def test_the_budget_defaults_to_the_runtime_profile() -> None:
    assert token_budget("vllm", RUN) == 8192
    assert token_budget("vllm", replace(RUN, prefill_token_budget=163840)) == 163840


def test_a_large_budget_reserves_activations_for_its_pass_and_holds_fewer_requests() -> None:
    # The runtime sizes its KV cache after reserving the workspace of its largest pass.
    small = estimate(DGX_H200, DEEPSEEK, replace(RUN, batch=128))
    large = estimate(DGX_H200, DEEPSEEK, replace(RUN, batch=128, prefill_token_budget=163840))
    assert small.memory is not None and large.memory is not None
    assert large.memory.activations_gb > 10 * small.memory.activations_gb
    assert small.max_batch_that_fits is not None and large.max_batch_that_fits is not None
    assert large.max_batch_that_fits < small.max_batch_that_fits


def _burst_ttft_s(workload: Workload) -> float:
    est = estimate(DGX_H200, DEEPSEEK, workload)
    single = estimate(DGX_H200, DEEPSEEK, replace(workload, batch=1))
    ctx = plain_context(DGX_H200, DEEPSEEK, workload, est, 800, CostAssumptions(), single)
    point, _ = serving_point(ctx, est, workload.batch, Traffic(arrival="burst"))
    return point.ttft_s


def test_a_wave_prefilled_in_one_pass_waits_for_the_whole_pass() -> None:
    # With 8,192 tokens a pass, two of the 32 prompts share each pass and the first get their
    # first token early; in one pass of 163,840 tokens every prompt waits for all 32.
    chunked = _burst_ttft_s(RUN)
    one_pass = _burst_ttft_s(replace(RUN, prefill_token_budget=163840))
    assert one_pass > 1.5 * chunked


def test_sglang_runs_prefill_apart_unless_the_workload_says_otherwise() -> None:
    assert not mixes_prefill("sglang", Workload())
    assert mixes_prefill("vllm", Workload())
    assert mixes_prefill("trt-llm", Workload())
    assert not mixes_prefill("vllm", Workload(mixed_prefill=False))
    assert mixes_prefill("sglang", Workload(mixed_prefill=True))
