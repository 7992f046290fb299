"""Expert parallel with data-parallel attention: a serving plan for mixture-of-experts models.

Every GPU of an EP group runs attention (and the dense layers, shared experts and output
head) for its own requests, with those weights replicated, while the routed experts are
sharded over the group; tokens reach their experts by an all-to-all dispatch and return by an
all-to-all combine in every MoE layer, in place of tensor parallel's all-reduces. Built on the
engine's own pieces (prepare, need_per_accel, DecodeModel, prefill); docs/engine.md, "Serving
curves and SLOs", states each formula and its source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .launch import launch_command, model_ref_for
from .memory import Need, max_batch_that_fits, need_per_accel
from .model_shape import distinct_experts
from .prep import GB, GIB, link_for
from .prepared import Prepared, prepare
from .results import Estimate, Finding, ParallelPlan, Throughput, bottleneck_name
from .runtime import COMM_BUFFER_GB, LINK_EFFICIENCY
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload
from .speed import DecodeModel, packed_prompts, prefill

# Runtimes with expert parallel over data-parallel attention: vLLM (--data-parallel-size N
# --enable-expert-parallel), SGLang (--enable-dp-attention --ep N), TensorRT-LLM (--ep_size N
# with enable_attention_dp). llama.cpp, Ollama and MLX have no expert parallel.
EP_RUNTIMES = ("vllm", "sglang", "trt-llm")
# Dispatch sends each token in FP8 when the weights are FP8 (DeepSeek-V3 technical report,
# section 3.3: FP8 dispatch, BF16 combine; DeepEP's benchmark setting); combine returns BF16.
COMBINE_BYTES = 2.0
OBJECTIVE_EP = "highest throughput at the SLO (expert parallel with data-parallel attention)"
# The base estimate's findings that describe its tensor-parallel plan, not this one.
_TP_PLAN_WORDS = ("tensor-parallel", "tensor parallel", "compute-bound", "Fixed per-layer")


def ep_sizes(build: BuildSpec, model: ModelSpec, runtime: str) -> tuple[int, ...]:
    """Expert-parallel group sizes worth a curve: one scale-up domain, and the whole build.

    Only for MoE models on runtimes that have EP; the routed experts must divide evenly over
    the group (each GPU holds E / N of them, as DeepEP's buffers assume).
    """
    if runtime not in EP_RUNTIMES or not model.is_moe or model.n_routed_experts < 2:
        return ()
    domain = max(build.pooled_domain_accelerators, 1)
    if domain == 1:
        domain = build.accelerators_per_node  # PCIe boxes still run EP inside the node
    experts = model.n_routed_experts
    sizes = []
    for span in (domain, build.accelerator_count):
        # The largest group within the span that the experts divide (an NVL72 domain runs
        # DeepSeek-V3's 256 experts as EP 64); the rest of the span holds further groups.
        n = min(span, experts)
        while n >= 2 and experts % n:
            n -= 1
        if n >= 2 and n not in sizes:
            sizes.append(n)
    return tuple(sizes)


def all_to_all_s(build: BuildSpec, model: ModelSpec, ep: int, tokens: float,
                 dispatch_bytes: float, calls: int) -> float:
    """Seconds of MoE dispatch + combine for `tokens` tokens on one rank, over every MoE layer.

    A token goes once to each rank holding one of its k experts: N(1 - (1 - 1/N)^k) ranks
    under uniform routing, (N - 1)/N of them remote. Ranks inside the scale-up domain are
    reached over its link, the others over the node's network share. `calls` passes (decode
    steps or prefill chunks) each pay the latency of two all-to-alls per MoE layer.
    """
    k = model.num_experts_per_tok
    ranks = ep * (1.0 - (1.0 - 1.0 / ep) ** k)
    copies = tokens * ranks * (ep - 1) / ep
    per_copy = model.hidden_size * (dispatch_bytes + COMBINE_BYTES)
    local_bw, local_lat, _ = link_for(build, min(ep, build.accelerators_per_node))
    domain = min(ep, max(build.pooled_domain_accelerators, build.accelerators_per_node))
    local_share = (domain - 1) / (ep - 1)
    seconds = copies * local_share * per_copy / (local_bw * LINK_EFFICIENCY)
    lat = local_lat
    if domain < ep:
        net_bw, net_lat, _ = link_for(build, ep)
        # The remote part runs concurrently with the local part; the slower one sets the pace.
        remote = copies * (1.0 - local_share) * per_copy / (net_bw * LINK_EFFICIENCY)
        seconds = max(seconds, remote)
        lat = max(lat, net_lat)
    # Latency per all-to-all grows with the group like a ring's steps (as the all-reduce in
    # speed.py): 2 calls (dispatch, combine) per MoE layer per pass.
    latency = 2 * calls * lat * (1.0 + math.log2(ep) / 2.0)
    return model.moe_layers * (seconds + latency)


@dataclass(frozen=True, slots=True)
class ExpertParallel:
    """An estimator for one EP group size (same signature as engine.estimate).

    `base` is the engine's own estimate of the build at batch 1: its cost, findings and
    assumptions carry over; fit, plan and speed are this plan's.
    """

    ep: int
    base: Estimate

    def __call__(self, build: BuildSpec, model: ModelSpec, workload: Workload,
                 costs: CostAssumptions) -> Estimate:
        """The estimate of this EP plan at workload.batch concurrent requests."""
        ep = self.ep
        groups = max(1, build.accelerator_count // ep)
        ranks = ep * groups
        wl = replace(workload, tensor_parallel=None, pipeline_parallel=None)
        p = prepare(build, model, wl)
        expert_total = model.moe_layers * model.n_routed_experts * p.expert_bytes
        # Attention, dense layers, shared experts and the head are replicated on every rank;
        # the routed experts are sharded E / N per rank.
        sharded = replace(p, body_bytes=p.nonexpert_body_bytes + expert_total / ep)
        raw = need_per_accel(sharded, model, build, wl, 1, 1, ranks)
        need = Need(raw.weights, raw.kv, raw.activations,
                    raw.overhead + COMM_BUFFER_GB * GB, 0.0, 0.0)
        fits = need.total <= p.usable_per_accel
        plan = self._plan(build, model, wl, p, groups)
        max_batch = max_batch_that_fits(sharded, model, 1, 1, ranks, need)
        # One replica is the whole group here: every component summed over its ranks.
        memory = replace(
            self.base.memory,
            total_gb=need.total * ranks / GB,
            per_accelerator_gb=need.total / GB,
            weights_gb=need.weights * ranks / GB,
            kv_cache_gb=need.kv * ranks / GB,
            activations_gb=need.activations * ranks / GB,
            overhead_gb=need.overhead * ranks / GB,
            spare_gb=(p.usable_per_accel - need.total) * ranks / GB
            + p.usable_per_accel * (build.accelerator_count - ranks) / GB,
        )
        findings = tuple(
            f for f in self.base.findings if not any(w in f.message for w in _TP_PLAN_WORDS)
        ) + (Finding("info", ep_words(model, self.ep)),)
        out = replace(self.base, fits=fits, plan=plan, memory=memory, findings=findings,
                      max_batch_that_fits=max_batch, throughput=None)
        if not fits:
            return out
        return replace(out, throughput=self._throughput(build, model, wl, p, sharded, groups))

    def _throughput(self, build: BuildSpec, model: ModelSpec, wl: Workload, p: Prepared,
                    sharded: Prepared, groups: int) -> Throughput:
        ep = self.ep
        local = -(-wl.batch // (ep * groups))  # requests on the busiest rank
        dm = DecodeModel(sharded, model, build, wl, 1, 1)
        # Every rank reads its replicated weights and its own requests' KV; of the experts,
        # its E / N share of those the whole group's tokens select.
        used = distinct_experts(model.n_routed_experts, model.num_experts_per_tok, local * ep)
        experts = model.moe_layers * used * p.expert_bytes / ep
        mem = (dm.nonexpert + experts) / dm.bw + dm.attention_s(local)
        comp = local * dm.flops_per_token / dm.flops
        dispatch = 1.0 if p.precision.compute in ("fp8", "fp4") else 2.0
        comm = all_to_all_s(build, model, ep, local, dispatch, 1)
        step = max(mem, comp) + comm + dm.fixed
        # Prefill of one prompt on one rank: attention and dense layers there, reading its
        # 1/N of the experts (their compute is the rank's share under steady load).
        pre = replace(p, expert_bytes=p.expert_bytes / ep)
        chunks = max(1, -(-wl.prompt_tokens // p.runtime.prefill_chunk_tokens))
        ttft = prefill(pre, model, build, wl, 1, 1)
        ttft += all_to_all_s(build, model, ep, wl.prompt_tokens, dispatch, chunks)
        # A rank packs its own waiting short prompts into one pass of the token budget, as the
        # tensor-parallel plan does (plan_throughput.PackedPrefill): a prompt's share of that pass.
        packed = None
        per_pass = packed_prompts(p.runtime.prefill_chunk_tokens, wl.prompt_tokens, local)
        if local > 1 and per_pass > 1:
            tokens = per_pass * wl.prompt_tokens
            passes = max(1, -(-tokens // p.runtime.prefill_chunk_tokens))
            packed = (prefill(pre, model, build, wl, 1, 1, per_pass)
                      + all_to_all_s(build, model, ep, tokens, dispatch, passes)) / per_pass
        return Throughput(
            decode_tokens_per_s=1.0 / step,
            aggregate_decode_tokens_per_s=wl.batch / step,
            prefill_tokens_per_s=wl.prompt_tokens / ttft,
            time_to_first_token_s=ttft,
            bottleneck=bottleneck_name(mem, comp, comm, dm.fixed),
            decode_memory_s=mem,
            decode_compute_s=comp,
            decode_communication_s=comm,
            decode_fixed_s=dm.fixed,
            decode_step_s=step,
            compute_bound_batch=None,
            batch_per_replica=local,
            packed_prefill_s=packed,
        )

    def _plan(self, build: BuildSpec, model: ModelSpec, wl: Workload, p: Prepared,
              groups: int) -> ParallelPlan:
        ep = self.ep
        runtime = p.runtime.name
        per_gpu = model.n_routed_experts // ep
        experts = f"{per_gpu} routed expert{'s' if per_gpu > 1 else ''}"
        words = (f"expert parallel {ep} with data-parallel attention ({experts} per GPU; "
                 "attention and shared weights on every GPU)")
        apn = build.accelerators_per_node
        nodes = min(build.nodes, -(-(ep * groups) // apn))
        usage = "single node" if build.nodes == 1 else (
            "spread over nodes" if ep > apn else "replicas per node")
        if groups > 1:
            words += f", {groups} copies of the group"
        if ep > apn:
            words += f", spread over {nodes} nodes"
        return replace(
            self.base.plan,
            tensor_parallel=1,
            pipeline_parallel=1,
            data_parallel=ep * groups,
            expert_parallel=ep,
            accelerators_used=ep * groups,
            layers_per_stage=model.num_hidden_layers,
            description=words,
            runtime=runtime,
            objective=OBJECTIVE_EP,
            launch_command=ep_launch_command(build, model, wl, p, ep),
            replicas_active=groups,
            nodes_used=nodes,
            node_usage=usage,
            plans_evaluated=1,
        )


def ep_words(model: ModelSpec, ep: int) -> str:
    """The finding that explains an expert-parallel plan."""
    return (
        f"Expert parallel {ep}: each GPU holds {model.n_routed_experts // ep} of the "
        f"{model.n_routed_experts} routed experts and a full copy of the attention, dense and "
        "shared weights, and serves its own requests' attention and KV cache (data-parallel "
        "attention); tokens reach their experts by an all-to-all dispatch and combine in "
        f"each of the {model.moe_layers} MoE layers instead of tensor parallel's all-reduces "
        "(an estimate: uniform routing, no expert load imbalance)"
    )


def ep_launch_command(build: BuildSpec, model: ModelSpec, wl: Workload, p: Prepared,
                      ep: int) -> str:
    """The runtime's documented command for EP N over data-parallel attention."""
    runtime = p.runtime.name
    util = p.usable_per_accel / (build.accelerator.memory_gb * GIB)
    common = dict(
        runtime=runtime, model_ref=model_ref_for(model.name, runtime, wl.precision),
        build=build, workload=wl, pp=1, expert_parallel=True, memory_utilization=util,
        kv_precision=p.kv_precision,
    )
    if runtime == "vllm":
        # vLLM: DP ranks own attention; --enable-expert-parallel makes the experts EP = DP x TP.
        return launch_command(tp=1, replicas=ep, **common)  # type: ignore[arg-type]
    command = launch_command(tp=ep, replicas=ep, **common)  # type: ignore[arg-type]
    if runtime == "sglang":
        # SGLang: --tp N --dp N --enable-dp-attention (attention DP inside the TP group).
        return command.replace(f"--ep {ep}", f"--ep {ep} --enable-dp-attention", 1)
    # TensorRT-LLM: attention DP is an LLM API option in the YAML file passed by --config
    # (--extra_llm_api_options in older releases), as NVIDIA's DeepSeek-R1 serving example.
    return command + " --config ep.yml  # ep.yml: enable_attention_dp: true"
