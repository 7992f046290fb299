"""The engine's entry point: fit, plan, speed, cost, verdict, findings, assumptions."""

from __future__ import annotations

from dataclasses import replace

from .cost import billed_tokens_per_s, cost_figures
from .errors import EngineInputError
from .layout import Layout
from .memory import capacity
from .parts import needs_parts, with_parts
from .plan_throughput import throughput
from .precision import rule_of_thumb_gb
from .prep import GB, GIB
from .prepared import Prepared, prepare
from .published import published_finding, smaller_published
from .results import (
    Estimate,
    Finding,
    Throughput,
    TrainingFigures,
    fill_estimate,
    fill_memory,
    fill_plan,
)
from .runtime import RUNTIMES
from .search import search
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload
from .tiers import derive_tier, serves_in_production
from .training import training_figures
from .validate import validate
from .words import EstimateWords

_DEFAULT_COSTS = CostAssumptions()


def estimate(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    costs: CostAssumptions = _DEFAULT_COSTS,
    *,
    model_ref: str | None = None,
) -> Estimate:
    """Estimate fit, parallel plan, speed and cost of running `model` on `build`.

    `model_ref` (a Hugging Face repository id) names the weights in the launch command; by
    default a slug of the model's name. Mixed cards and host-RAM offload are re-derived by
    engine/parts.py from the estimate of the build's first card kind.
    """
    answer = _estimate_build(build, model, workload, costs, model_ref=model_ref)
    if answer.fits or not smaller_published(model, workload):
        return answer
    published = model.published_precision
    assert published is not None  # smaller_published is False without one
    # Once more at the published format, where smaller_published is False: no recursion.
    try:
        other = _estimate_build(
            build, model, replace(workload, precision=published), costs, model_ref=model_ref
        )
    except EngineInputError:
        return answer  # the runtime or build does not take that format
    return _with_finding(answer, published_finding(model, other))


def _estimate_build(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    costs: CostAssumptions,
    *,
    model_ref: str | None,
) -> Estimate:
    """estimate() at the precision asked for."""
    result = _estimate(build, model, workload, costs, model_ref=model_ref)
    if not needs_parts(build, workload, result):
        return result
    # A desktop's owner who states no runtime runs llama.cpp where the serving runtime cannot
    # hold the model: llama.cpp offloads to host RAM (-ngl / --n-cpu-moe; vLLM would stream
    # weights) and splits whole layers over mixed cards. A datacenter build keeps its serving
    # runtime. The choice is made on what the whole build holds. With one card kind that is
    # the estimate above. Mixed cards hold what the first kind's estimate does not (a smaller
    # first kind, a layer split), so their serving runtime's parts answer is derived first, and
    # host RAM, which it never uses, cannot change it; only weights beyond every card's usable
    # memory together are known here not to fit. Where the cards do not hold the model and
    # there is RAM, llama.cpp is asked for at once (no serving-runtime parts answer is derived).
    desktop = workload.runtime is None and not serves_in_production(build)
    short = _weights_exceed_cards(build, result) if build.is_mixed else not result.fits
    chosen = desktop and build.host is not None and short
    serving = RUNTIMES[result.runtime].split != "layers"  # the runtime resolved for the build
    work = replace(workload, runtime="llama.cpp") if chosen else workload
    single = replace(build, groups=(), host=None) if build.is_mixed else build
    stated_plan = work.tensor_parallel is not None or work.pipeline_parallel is not None
    if build.is_mixed and serving and not chosen and not stated_plan:
        # The parts plan of a serving runtime is a pipeline of whole layers over every card
        # (TP needs identical cards): the first card kind's estimate is asked for that plan,
        # so its launch command and findings are this build's, not its own best split's.
        work = replace(work, tensor_parallel=1, pipeline_parallel=build.accelerators_per_node)
    if single is not build or work is not workload:
        result = _estimate(single, model, work, costs, model_ref=model_ref)
    p = prepare(single, model, work)
    answer = with_parts(build, model, work, costs, result, p, model_ref or model.name)
    auto = workload.offload == "auto"
    if not answer.fits and (auto or desktop) and RUNTIMES[answer.runtime].split != "layers":
        alternative = _estimate_build(
            build, model, replace(workload, runtime="llama.cpp"), costs, model_ref=model_ref
        )
        # A desktop takes llama.cpp's answer where it holds the model (a layer split over mixed
        # cards needs no RAM, so offload=none does not stop it), and with RAM even where it
        # does not (it says how much RAM it would need), as one card kind does above.
        holds = alternative.fits and alternative.placement is not None
        if not (desktop and (holds or build.host is not None)):
            if not auto:
                return answer
            finding = offload_alternative(answer.runtime, alternative)
            if workload.runtime is None and serves_in_production(build):
                # The choice is stated: a datacenter build keeps its serving runtime.
                finding = Finding(finding.severity, DATACENTER_RUNTIME_KEPT + finding.message)
            return _with_finding(answer, finding)
        # Else it is known only here: the serving runtime's pipeline over the parts does not
        # hold the model, and llama.cpp's answer is the desktop's.
        answer, chosen = alternative, True
    # One finding states the choice, whichever of the two ways it was made, in the words of the
    # placement it led to. A GGUF precision runs in llama.cpp anyway: unless llama.cpp's own
    # placement (not -ngl / --n-cpu-moe given by hand) needed the RAM, nothing was chosen.
    offloaded = answer.offloaded
    forced = workload.gpu_layers is not None or workload.cpu_moe_layers is not None
    says = (chosen and (serving or offloaded)) or (offloaded and not forced)
    if answer.fits and desktop and says:
        return _with_finding(answer, Finding("info", _why_llama_cpp(build, offloaded)))
    return answer


def _weights_exceed_cards(build: BuildSpec, result: Estimate) -> bool:
    """True when the weights alone exceed the usable memory of all the cards together (each at
    the runtime's usable share, as parts.with_parts gives them): no pipeline over them holds the
    model, so the serving runtime's parts answer need not be derived to know it."""
    memory = result.memory
    usable_gb = memory.available_per_accelerator_gb / build.accelerator.memory_gb
    return memory.weights_gb > usable_gb * build.total_memory_gb


def _why_llama_cpp(build: BuildSpec, offloaded: bool) -> str:
    """Why a desktop's automatic runtime is llama.cpp, from where its placement put the weights."""
    if offloaded:
        return RUNTIME_CHOSEN_FOR_OFFLOAD
    return RUNTIME_CHOSEN_FOR_SPLIT if build.accelerators_per_node > 1 else RUNTIME_CHOSEN_FOR_CARD


RUNTIME_CHOSEN_FOR_OFFLOAD = (
    "Runtime llama.cpp chosen automatically: the model does not fit in the cards' memory, and "
    "llama.cpp keeps the rest in host RAM (vLLM and SGLang need every weight on the cards)"
)

RUNTIME_CHOSEN_FOR_SPLIT = (
    "Runtime llama.cpp chosen automatically: the serving runtime's pipeline does not hold the "
    "model on these cards, and llama.cpp's layer split does"
)

RUNTIME_CHOSEN_FOR_CARD = (
    "Runtime llama.cpp chosen automatically: the serving runtime does not hold the model on this "
    "card, and llama.cpp holds every layer on it (nothing offloaded to host RAM)"
)

DATACENTER_RUNTIME_KEPT = (
    "Runtime chosen automatically for a datacenter build: its serving runtime, not llama.cpp. "
)


def offload_alternative(runtime: str, alternative: Estimate) -> Finding:
    """What llama.cpp with host-RAM offload would do where the chosen runtime does not fit."""
    if not alternative.fits:
        return Finding(
            "info",
            f"{runtime} keeps every weight in accelerator memory, so offload=auto does not "
            "apply; llama.cpp with host RAM would not fit either",
        )
    where = alternative.placement.description if alternative.placement else "offloaded"
    speed = alternative.throughput.decode_tokens_per_s if alternative.throughput else 0.0
    return Finding(
        "info",
        f"{runtime} keeps every weight in accelerator memory, so offload=auto does not apply; "
        f"llama.cpp with host RAM would run it ({where}) at ~{speed:,.1f} tokens/s per "
        "sequence (runtime=llama.cpp, an estimate): a single-user setup, not production serving",
    )


def _with_finding(answer: Estimate, finding: Finding) -> Estimate:
    return replace(answer, findings=answer.findings + (finding,))


_REPORT = ("report",)  # Prepared.memo key of _report


def _report(p: Prepared, model: ModelSpec, build: BuildSpec) -> tuple[float, float, float, float]:
    """(weight bytes on the cards beside the layers, usable share of a card's memory, rule of
    thumb GB, KV GB per token): what every estimate reports from p alone, memoised on it."""
    # On the accelerators: llama.cpp keeps the input embedding in host RAM (memory.stages).
    edges = p.head_bytes if p.runtime.ggml_layout else p.embed_bytes + p.head_params_bytes
    util = p.usable_per_accel / (build.accelerator.memory_gb * GIB)
    rule_of_thumb = rule_of_thumb_gb(model.params_total, p.precision)
    kv_per_token = p.kv_token_layer_bytes * model.cached_attention_layers / GB
    known = p.memo[_REPORT] = edges, util, rule_of_thumb, kv_per_token
    return known


def _estimate(
    build: BuildSpec,
    model: ModelSpec,
    workload: Workload,
    costs: CostAssumptions,
    *,
    model_ref: str | None,
) -> Estimate:
    """The estimate for a build of one card kind, everything in accelerator memory."""
    validate(build, model, workload, costs)
    p = prepare(build, model, workload)
    choice = search(p, model, build, workload)
    fits, tp, pp, need = choice.fits, choice.tp, choice.pp, choice.need
    layout = Layout(choice, model, build, workload, p.mode)
    dp, ep, group, active = layout.dp, layout.ep, layout.group, layout.active
    n = build.accelerator_count
    inference = p.mode == "inference"
    runtime = p.runtime.name
    usable = p.usable_per_accel
    edges, util, rule_of_thumb, kv_per_token = p.memo.get(_REPORT) or _report(p, model, build)
    weights_total = p.body_bytes + edges
    if not inference:
        weights_total = need.weights * group if workload.zero_stage < 3 else need.weights * n
    kv_total = need.kv * group
    act_total = need.activations * group
    overhead_total = need.overhead * group
    optim_total = need.optimizer * (group * dp if workload.zero_stage >= 1 else group)
    grads_total = need.gradients * group
    if p.mode == "training" and workload.zero_stage >= 1:
        optim_total = model.params_total * 12.0
    total = weights_total + kv_total + act_total + overhead_total + optim_total + grads_total
    available_total = usable * n
    memory = fill_memory(
        total_gb=total / GB,
        per_accelerator_gb=need.total / GB,
        available_per_accelerator_gb=usable / GB,
        available_total_gb=available_total / GB,
        weights_gb=weights_total / GB,
        kv_cache_gb=kv_total / GB,
        activations_gb=act_total / GB,
        overhead_gb=overhead_total / GB,
        optimizer_gb=optim_total / GB,
        gradients_gb=grads_total / GB,
        rule_of_thumb_gb=rule_of_thumb,
        # Spare: usable memory that no running replica uses.
        spare_gb=(available_total - need.total * group * (active if fits else 1)) / GB,
        build_memory_gb=build.total_memory_gb * GIB / GB,
        kv_cache_gb_per_token=kv_per_token,
    )
    tput: Throughput | None = None
    training: TrainingFigures | None = None
    max_ctx: int | None = None
    max_batch: int | None = None
    billed: float | None = None
    if inference:
        max_ctx, max_batch = capacity(p, model, workload, tp, pp, dp, need)
        if fits:
            tput = throughput(p, model, build, workload, tp, pp, dp, choice.dm, choice.parts)
            billed = billed_tokens_per_s(
                per_sequence=tput.decode_tokens_per_s,
                batch=workload.batch,
                batch_per_replica=tput.batch_per_replica,
                ttft_s=tput.time_to_first_token_s,
                generated=max(1, workload.context_tokens - workload.prompt_tokens),
            )
    cost = cost_figures(build, costs, billed)
    if not inference and fits:
        training = training_figures(p, model, build, workload, cost, tp, pp, dp)
    # Texts are computed when read (results.Deferred): a sweep reading fit, speed and cost
    # does not pay for them.
    words = EstimateWords(
        p, model, build, workload, costs, need.total, util, model_ref or model.name
    )
    plan = fill_plan(
        tensor_parallel=tp,
        pipeline_parallel=pp,
        data_parallel=dp,
        expert_parallel=ep,
        accelerators_used=min(group * dp, n),  # occupied by the plan, idle replicas too
        layers_per_stage=layout.lps,
        runtime=runtime,
        _words=words,  # description, objective, launch_command
        replicas_active=active,
        nodes_used=layout.nodes_used,
        node_usage=layout.node_usage,
        plans_evaluated=choice.evaluated,
    )
    return fill_estimate(
        fits=fits,
        _words=words,  # verdict, findings, assumptions
        memory=memory,
        plan=plan,
        throughput=tput,
        cost=cost,
        training=training,
        max_context_tokens_that_fit=max_ctx,
        max_batch_that_fits=max_batch,
        tier=derive_tier(build),
        runtime=runtime,
        placement=None,
    )
