"""Decode and prefill speed: roofline per step plus communication and fixed per-step costs."""

from __future__ import annotations

import math

from .collectives import allreduce_link
from .graph_capture import host_floor, host_issue_s_without_graphs, launch_s_without_graphs
from .hops import pipeline_hop
from .mla_kernels import triton_attention_rate
from .mmvq import mmvq_pass_s, mmvq_s_per_byte
from .model_shape import distinct_experts
from .moe_tiles import routed_tile_use
from .plan import Prepared, kv_share, kv_tokens_weighted
from .prep import (
    efficiency,
    foreign_backend,
    matmul_compute,
    matmul_peak,
    prefill_efficiency,
    prefill_peak_flops,
)
from .runtime import LINK_EFFICIENCY, Efficiency
from .specs import BuildSpec, ModelSpec, Workload

ACTIVATION_BYTES = 2.0  # hidden states cross links in 16-bit
# Without flash attention ggml writes a layer's K*Q scores in F32, softmaxes them in place and
# reads them back for the product with V (memory.score_buffer_bytes): 4 + 8 + 4 bytes a score.
UNFUSED_SCORE_BYTES = 16.0


class DecodeModel:
    """Per-step decode time for one replica split tp x pp; precomputed coefficients."""

    __slots__ = (
        "bw", "flops", "nonexpert", "expert", "moe_layers", "n_experts", "top_k", "kv_per_seq",
        "flops_per_token", "tp", "pp", "comm_fixed", "comm_per_token", "fixed", "hop_fixed",
        "hop_per_token", "mmvq", "host_issue", "overlap", "attn_flops", "attn_rate", "eager",
    )

    def __init__(
        self, p: Prepared, model: ModelSpec, build: BuildSpec, workload: Workload, tp: int, pp: int
    ) -> None:
        acc = build.accelerator
        self.tp, self.pp = tp, pp
        self.bw = acc.memory_bandwidth_gbs * 1e9 * p.bandwidth_efficiency * tp
        peak = matmul_peak(p.runtime, acc, p.precision)
        # Bytes read per step: non-expert weights and the output projection always; routed
        # experts only as many distinct ones as the step's tokens select.
        self.nonexpert = p.nonexpert_body_bytes + p.head_bytes
        self.expert = p.expert_bytes
        self.moe_layers, self.n_experts = model.moe_layers, model.n_routed_experts
        self.top_k = model.num_experts_per_tok
        known: tuple[float, float, float, float, float] = p.memo.get(("decode", tp)) or (
            _decode_coefficients(p, model, build, workload, tp)
        )
        self.kv_per_seq, self.flops_per_token, decode_compute, fixed, attention = known
        # The early Triton MLA decode kernel prices its attention FLOPs apart (attention_s).
        self.attn_rate = triton_attention_rate(acc, model, workload, tp)
        self.attn_flops = attention if self.attn_rate < math.inf else 0.0
        self.flops_per_token -= self.attn_flops
        self.fixed = fixed + launch_s_without_graphs(p.runtime, build, model, workload)
        # Without CUDA graphs: a floor under the step (ggml) or a longer one (eager_step_factor).
        self.host_issue = host_issue_s_without_graphs(p.runtime, build, model, workload)
        self.eager = 1.0 if workload.cuda_graphs else p.runtime.eager_step_factor
        self.flops = peak * decode_compute * tp
        self.mmvq = mmvq_s_per_byte(p.runtime, build, p.precision, workload, tp)  # 0 off MMVQ
        self.overlap = efficiency(p.runtime, build).mmvq_overlap if any(self.mmvq) else 0.0
        layers = model.num_hidden_layers
        self.comm_fixed = self.comm_per_token = self.hop_fixed = self.hop_per_token = 0.0
        if tp > 1:
            link_bw, link_lat, _ = allreduce_link(build, tp)
            # Two all-reduces per layer (after attention and after the MLP); ring all-reduce
            # moves 2(tp-1)/tp of the message, latency grows with the ring steps.
            self.comm_fixed = 2 * layers * link_lat * (1.0 + math.log2(tp) / 2.0)
            message = 2.0 * (tp - 1) / tp * model.hidden_size * ACTIVATION_BYTES
            self.comm_per_token = 2 * layers * message / (link_bw * LINK_EFFICIENCY)
        if pp > 1:
            hop_bw, hop_lat = pipeline_hop(build, tp, pp)
            self.hop_fixed = (pp - 1) * hop_lat
            hop_bytes = (pp - 1) * model.hidden_size * ACTIVATION_BYTES
            self.hop_per_token = hop_bytes / (hop_bw * LINK_EFFICIENCY)

    def parts(self, batch: float) -> tuple[float, float, float, float]:
        """(memory, compute, communication, fixed) seconds for one pass of `batch` sequences."""
        weights = self.nonexpert
        if self.moe_layers:
            used = distinct_experts(self.n_experts, self.top_k, batch)
            weights += self.moe_layers * used * self.expert
        mem = weights / self.bw + self.attention_s(batch)
        comp = batch * self.flops_per_token / self.flops
        comp = max(comp, issue := mmvq_pass_s(self.mmvq, batch, self.nonexpert, weights))
        mem += self.overlap * min(mem, issue)  # overlapped, not wholly: the reads stretch
        comm = self.comm_fixed + self.hop_fixed + batch * (self.comm_per_token + self.hop_per_token)
        return mem, comp, comm, self.fixed

    def attention_s(self, batch: float) -> float:
        """Attention seconds over `batch` caches: the KV read, or the early Triton MLA kernel's
        FLOPs at its rate when longer (its own kernel: it hides under no weight read)."""
        return batch * max(self.kv_per_seq / self.bw, self.attn_flops / self.attn_rate)

    def step(self, batch: int) -> tuple[float, float, float, float, float]:
        """(step seconds, mem, comp, comm, fixed) to give every sequence one more token.

        With pp stages and batch >= pp, micro-batches keep all stages busy, so a step costs one
        pass of batch/pp sequences; with one sequence the stages simply run one after another."""
        micro = min(batch, self.pp)
        mem, comp, comm, fixed = self.parts(batch / micro)
        step, fixed = host_floor(max(mem, comp) + comm + fixed, fixed, self.host_issue, self.eager)
        return step, mem, comp, comm, fixed

    def compute_bound_batch(self) -> int | None:
        """Smallest batch whose compute time exceeds its memory time (closed form, refined)."""
        kv_t = self.attention_s(1.0)
        f_t = self.flops_per_token / self.flops
        if f_t <= kv_t:
            return None  # attention over the KV cache keeps it memory-bound at any batch
        b = self.nonexpert / self.bw / (f_t - kv_t)
        for _ in range(3):  # MoE: more tokens touch more experts; a few fixed-point steps
            if not self.moe_layers:
                break
            used = distinct_experts(self.n_experts, self.top_k, b)
            b = (self.nonexpert + self.moe_layers * used * self.expert) / self.bw / (f_t - kv_t)
        return max(1, math.ceil(b))


def _decode_coefficients(
    p: Prepared, model: ModelSpec, build: BuildSpec, workload: Workload, tp: int
) -> tuple[float, float, float, float, float]:
    """DecodeModel's (KV bytes per sequence, FLOPs per token, compute share, fixed seconds,
    attention FLOPs of those) at tensor-parallel size tp, from p (keyed by the build's device
    class): memoised on p."""
    rt = p.runtime
    weighted = kv_tokens_weighted(p, workload.context_tokens)
    # Attention FLOPs over cached tokens (a linear-attention state's bytes are in kv_per_seq).
    attended = weighted - p.state_layer_tokens
    reads = weighted * (share := workload.kv_share_per_token)  # <1: tokens share a cache
    if not workload.flash_attention and rt.ggml_layout and not model.kv_lora_rank:
        # ggml's unfused K*Q and KQ*V broadcast a KV head over its query heads: the cache
        # is read once per query head (llama.cpp's build_attn_mha without flash attention).
        reads += attended * share * (model.num_attention_heads / model.num_key_value_heads - 1)
    # KV bytes read per sequence, summed over the tp ranks (MLA is read whole by every rank).
    kv_per_seq = p.kv_token_layer_bytes * reads * kv_share(model, tp) * tp
    attention = model.attention_flops_per_context_token * attended
    flops_per_token = 2.0 * model.params_active_matmul + attention
    fixed = rt.fixed_s_per_step + p.fixed_pass_s
    known = kv_per_seq, flops_per_token, efficiency(rt, build).decode_compute, fixed, attention
    p.memo["decode", tp] = known
    return known


def packed_prompts(rt_chunk_tokens: int, prompt_tokens: int, waiting: int) -> int:
    """Prompts of this length one prefill pass of `rt_chunk_tokens` packs of `waiting` (>= 1)."""
    return max(1, min(waiting, rt_chunk_tokens // max(1, prompt_tokens)))


def prefill(
    p: Prepared,
    model: ModelSpec,
    build: BuildSpec,
    workload: Workload,
    tp: int,
    pp: int,
    prompts: int = 1,
    pipeline_full: bool = False,
) -> float:
    """Seconds to prefill `prompts` prompts of workload.prompt_tokens, packed into the
    runtime's prefill passes (a server batches short prompts up to its token budget: the
    weight reads and per-pass fixed costs are shared, the FLOPs and attention are not).

    `pipeline_full`: with pp stages, the seconds of pipeline the prompts occupy while other
    requests' micro-batches keep every stage busy (a serving stream), i.e. one stage's share
    and no fill or drain; otherwise the latency of the prompts alone in the pipeline."""
    acc = build.accelerator
    rt = p.runtime
    backend = None if workload.backend is None else foreign_backend(rt, build, workload)
    peak, half_peak = prefill_peak_flops(rt, build, matmul_compute(rt, acc, p.precision, backend))
    work = p.memo.get(("prefill", prompts)) or _prefill_work(p, model, build, workload, prompts)
    n, attention, scores, dense, routed, weight_bytes, chunks, eff = work
    if eff is None:  # a kernel backend named: its shares depend on the card's own (prep.py)
        eff = prefill_efficiency(rt, build, workload)
    # Weight matmuls run at the precision's rate; attention (QK^T, PV) at the bf16 rate unless
    # the KV cache, and with it FP8 attention, is chosen (vLLM/FlashAttention-3 FP8 path).
    attn_peak = peak if p.kv_precision == "fp8" else half_peak
    compute_s = (dense / peak + attention / attn_peak) / (eff.prefill_compute * tp)
    if routed:
        use = routed_tile_use(p, model, n)  # llama.cpp: whole MMQ tiles
        compute_s += routed / peak / (eff.routed_prefill_compute * tp * use)
    memory_s = weight_bytes / (acc.memory_bandwidth_gbs * 1e9 * p.bandwidth_efficiency * tp)
    layers = model.num_hidden_layers
    # Host launches run once per pass, ahead of the GPU: the later ends it (docs/engine.md 6).
    host_s = chunks * layers * eff.prefill_host_s_per_layer
    total = max(compute_s, memory_s * chunks, host_s) + chunks * p.fixed_pass_s
    if scores:  # unfused attention scores: bandwidth-bound, beside the GEMMs
        total += scores / (acc.memory_bandwidth_gbs * 1e9 * p.bandwidth_efficiency * tp)
    if tp > 1:
        bw, lat, _ = allreduce_link(build, tp)
        total += 2 * layers * (
            chunks * lat
            + 2.0 * (tp - 1) / tp * n * model.hidden_size * ACTIVATION_BYTES
            / (bw * LINK_EFFICIENCY)
        )
    if pp > 1 and pipeline_full:
        # Each stage spends total/pp on these prompts and works on other micro-batches the
        # rest of the time; the activations still cross every hop (concurrently).
        hop_bw, _ = pipeline_hop(build, tp, pp)
        total = total / pp + n * model.hidden_size * ACTIVATION_BYTES / hop_bw
    elif pp > 1:
        # Chunks flow through the stages: (chunks + pp - 1) stage-slots of total/pp each, the
        # pipeline refilled for every call when the runtime drains it between calls (llama.cpp).
        in_flight = chunks
        if rt.prefill_pipeline_tokens is not None:
            in_flight = min(chunks, -(-rt.prefill_pipeline_tokens // rt.prefill_chunk_tokens))
        total = total / pp * (in_flight + pp - 1) / in_flight
        hop_bw, hop_lat = pipeline_hop(build, tp, pp)
        total += (pp - 1) * (hop_lat + n * model.hidden_size * ACTIVATION_BYTES / hop_bw)
    return total + rt.fixed_s_per_step


def _prefill_work(
    p: Prepared, model: ModelSpec, build: BuildSpec, workload: Workload, prompts: int
) -> tuple[int, float, float, float, float, float, int, Efficiency | None]:
    """(tokens, attention FLOPs, unfused score bytes, matmul FLOPs dense and routed, weight
    bytes, passes, efficiency unless a backend is named) of a prefill of `prompts` prompts,
    from p alone (the build's device class keys p): memoised on p."""
    per_prompt = workload.prompt_tokens
    n = per_prompt * prompts
    w = p.window
    depth = workload.prefill_depth_tokens
    # Context each prompt token attends to: cached depth + causal triangle, capped by a window.
    causal = p.full_layers * per_prompt * (depth + per_prompt / 2.0)
    if p.windowed_layers:
        below = max(0, min(per_prompt, w - depth))  # tokens whose span is under the window
        causal += p.windowed_layers * (
            below * depth + below * below / 2.0 + (per_prompt - below) * w
        )
    causal *= prompts  # each prompt attends to itself (and its own cached depth) only
    # Routed experts run as grouped GEMMs of n x top_k / experts tokens each, at their own share.
    routed = 2.0 * model.moe_layers * model.num_experts_per_tok * model.expert_params * n
    dense = 2.0 * model.params_active_matmul * n - routed
    # Every weight is read at least once (all experts once the prompt is long enough).
    used = distinct_experts(model.n_routed_experts, model.num_experts_per_tok, n)
    weight_bytes = p.nonexpert_body_bytes + p.head_bytes + model.moe_layers * used * p.expert_bytes
    chunks = max(1, -(-n // p.runtime.prefill_chunk_tokens))
    eff = None if workload.backend is not None else prefill_efficiency(p.runtime, build, workload)
    attention = model.attention_flops_per_context_token * causal
    scores = 0.0
    if not workload.flash_attention and p.runtime.ggml_layout:
        scores = UNFUSED_SCORE_BYTES * model.num_attention_heads * causal
    known = n, attention, scores, dense, routed, weight_bytes, chunks, eff
    p.memo["prefill", prompts] = known
    return known
