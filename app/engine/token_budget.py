"""The token budget of a scheduler step: the workload's stated one, the runtime profile's, or the
one a vLLM release sets for MLA models it runs without chunked prefill (docs/engine.md,
"Serving curves and SLOs", and section 4)."""

from __future__ import annotations

import re
from dataclasses import replace

from .runtime import RUNTIMES, RuntimeProfile
from .specs import ModelSpec, Workload


def token_budget(runtime: str, workload: Workload) -> int:
    """Tokens one scheduler step of `runtime` processes: the workload's stated budget, else the
    runtime profile's prefill_chunk_tokens."""
    return workload.prefill_token_budget or RUNTIMES[runtime].prefill_chunk_tokens


# Runtimes whose scheduler step does not run prompt chunks and decode tokens in one forward pass
# by default. vLLM's chunked prefill, TensorRT-LLM's in-flight batching and llama-server's
# unified batch do; SGLang does not (`--enable-mixed-chunk`, "Enabling mixing prefill and decode
# in a batch when using chunked prefill", False in its server_args.py): a prefill batch runs as
# its own pass, ahead of the decode batch, and hides nothing under the decode's weight reads.
SEPARATE_PREFILL_RUNTIMES = frozenset({"sglang"})


def mixes_prefill(runtime: str, workload: Workload) -> bool:
    """Whether a step of `runtime` fuses prompt chunks with the decode batch: the workload's
    statement, else the runtime's default (SEPARATE_PREFILL_RUNTIMES)."""
    if workload.mixed_prefill is not None:
        return workload.mixed_prefill
    return runtime not in SEPARATE_PREFILL_RUNTIMES


def with_token_budget(rt: RuntimeProfile, workload: Workload) -> RuntimeProfile:
    """The profile with the workload's token budget as its prefill pass (unchanged without one)."""
    budget = workload.prefill_token_budget
    if budget is None or budget == rt.prefill_chunk_tokens:
        return rt
    return replace(rt, prefill_chunk_tokens=budget)


# vLLM's scheduler default without chunked prefill: a step holds at least this many tokens
# (vllm/config.py, SchedulerConfig: DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048).
VLLM_DEFAULT_MAX_NUM_BATCHED_TOKENS = 2048
# vLLM releases whose GPU path forced chunked prefill off for MLA models (DeepSeek-V2/V3/R1):
# "MLA is enabled; forcing chunked prefill and prefix caching to be disabled" (vllm/config.py,
# logged by 0.7.1 and 0.7.3, V0 and V1 engines), from the MLA kernels' arrival in 0.7.1 until
# MLA chunked prefill (vllm-project/vllm PR #12639) shipped with 0.8.0; 0.7.4 development builds
# are counted in (which one first carried the PR is not established). From 0.8 on the message
# is logged for non-GPU platforms only ("MLA is enabled on a non-GPU platform").
VLLM_MLA_UNCHUNKED = ((0, 7, 1), (0, 8, 0))


def release_numbers(version: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) of a version string ("v0.7.4.dev181+gf35f8e22" -> (0, 7, 4)), or
    None when it does not start with a number."""
    found = re.match(r"v?(\d+)\.(\d+)(?:\.(\d+))?", version.strip())
    if found is None:
        return None
    major, minor, patch = found.groups()
    return int(major), int(minor), int(patch or 0)


def vllm_unchunked_budget(
    version: str | None, model: ModelSpec, max_model_len: int | None
) -> int | None:
    """The token budget of a vLLM release that runs an MLA model without chunked prefill, or
    None (chunked prefill as usual, or the version unknown).

    Such a release then sets max_num_batched_tokens = max(max_model_len, 2048) (the code that
    forces it off, vllm/config.py; today's non-GPU platforms keep the same lines): every waiting
    prompt that fits is prefilled in one pass, ahead of the running decodes, and the profiling
    run that sizes the KV cache reserves activations for that many tokens. `max_model_len`: the
    run's `--max-model-len`, else the model's max_position_embeddings (vLLM's default)."""
    if version is None or model.kv_lora_rank is None:
        return None
    release = release_numbers(version)
    low, high = VLLM_MLA_UNCHUNKED
    if release is None or not low <= release < high:
        return None
    length = max_model_len or model.max_position_embeddings
    if length is None:
        return None
    return max(length, VLLM_DEFAULT_MAX_NUM_BATCHED_TOKENS)
