"""Engine inputs of a catalog measurement: the build, model and workload of the same run."""

from dataclasses import replace

from pydantic import ValidationError

from app.caching import Snapshot
from app.engine import PRECISIONS, RUNTIMES, BuildSpec, ModelSpec, Workload
from app.engine.runtime import device_class
from app.engine.token_budget import vllm_unchunked_budget
from app.errors import DomainError
from app.schemas.build import HostIn, InterNodeLinkIn, IntraNodeLinkIn
from app.schemas.estimate import WorkloadIn
from app.schemas.inline import InlineAccelerator, InlineAcceleratorGroup, InlineBuild
from app.schemas.measurement import MeasurementIn
from app.services.accelerators import accelerator_rows
from app.services.build_rows import build_rows
from app.services.engine_runs import inline_build_spec, workload_spec
from app.services.measurements import MeasurementRow, measurement_rows
from app.services.model_profiles import model_profile_rows

from .groups import (
    FIT_METRIC,
    MIXED_CLASS,
    OFFLOAD_CLASS,
    SERVING_METRICS,
    Case,
    Cases,
    Group,
    Skipped,
)
from .notes import (
    LLAMA_CPP_RUNTIMES,
    before_cuda_graphs,
    mla_kernel_flags,
    one_sequence_micro_batch,
    stated_flag,
    stated_tokens,
    stated_ubatch,
    unpredictable,
)
from .placement import needs_host_ram, offloads, published_placement
from .predictors import run_estimator

# Names sources use for one of the engine's formats (llama.cpp writes f16; AWQ and GPTQ
# checkpoints are the engine's int4 family). Formats without an exact counterpart stay unmodelled.
PRECISION_ALIASES = {"f16": "fp16", "f32": "fp32", "int4-awq": "int4", "int4-gptq": "int4"}
# llama-bench's default prompt (pp512): used for a prefill figure whose prompt is not published.
UNPUBLISHED_PROMPT_TOKENS = 512
MAX_BATCH_ATTEMPTS = 8

EXPERT_PARALLEL_SKIP = (
    "expert parallel with data-parallel attention is not modelled for a measurement row "
    "(the engine is asked for tensor / pipeline plans)"
)


class _Skip(Exception):
    """A measurement the engine cannot be asked about (the message says why)."""


def _hardware(snap: Snapshot, record: MeasurementIn, layers: int) -> tuple[BuildSpec, str]:
    hw = record.hardware
    offloaded = offloads(record.offload)  # a stated tensor split alone keeps RAM out of it
    host = (
        None
        if hw.host is None
        else HostIn(
            cpu=hw.host.cpu, ram_gb=hw.host.ram_gb, ram_bandwidth_gbs=hw.host.ram_bandwidth_gbs
        )
    )
    if hw.groups:
        try:
            mixed = InlineBuild(
                name=record.slug,
                nodes=hw.nodes,
                accelerators=[
                    InlineAcceleratorGroup(accelerator=g.accelerator, count=g.count)
                    for g in hw.groups
                ],
                host=host,
            )
        except ValidationError as exc:
            raise _Skip(f"hardware cannot be evaluated: {exc.errors()[0]['msg']}") from None
        return inline_build_spec(snap, mixed), OFFLOAD_CLASS if offloaded else MIXED_CLASS
    if needs_host_ram(record.metric, record.offload, layers) and not (host and host.ram_gb):
        raise _Skip("CPU offload run without the host's RAM size published")
    accelerators = accelerator_rows(snap)
    if hw.build is not None:
        row = build_rows(snap).by_slug.get(hw.build)
        if row is None:
            raise _Skip(f"build '{hw.build}' is no longer in the catalog")
        acc = accelerators[row.accelerator_slug].list_item
        kind = device_class(
            memory_kind=acc.memory_kind, vendor=acc.vendor, memory_type=acc.memory_type
        )
        return row.spec, kind
    spec = hw.accelerator_spec
    catalog_row = accelerators.get(str(hw.accelerator))
    accelerator: str | InlineAccelerator
    # An inline spec's memory system, for the engine's fitted constants of its device class.
    memory_system: tuple[str | None, str | None] | None = None
    if catalog_row is not None:
        # A catalog accelerator is the reviewed record: it wins over a spec carried by the row.
        acc = catalog_row.list_item
        accelerator = catalog_row.slug
        kind = device_class(
            memory_kind=acc.memory_kind, vendor=acc.vendor, memory_type=acc.memory_type
        )
    elif spec is not None:
        accelerator = InlineAccelerator(
            name=spec.name,
            memory_gb=spec.memory_gb,
            memory_bandwidth_gbs=spec.memory_bandwidth_gbs,
            fp16_tflops=spec.fp16_tflops,
            fp8_tflops=spec.fp8_tflops,
            int8_tops=spec.int8_tops,
            fp4_tflops=spec.fp4_tflops,
            tdp_w=spec.tdp_w,
            memory_kind="unified" if spec.memory_kind == "unified" else "discrete",
        )
        kind = device_class(memory_kind=spec.memory_kind, vendor=spec.vendor, memory_type=None)
        memory_system = (spec.vendor, "HBM" if spec.memory_kind == "hbm" else None)
    else:
        raise _Skip(f"accelerator '{hw.accelerator}' is no longer in the catalog")
    if hw.nodes > 1 and hw.inter_node_link is None:
        raise _Skip("several nodes but no inter_node_link published")
    try:
        build = InlineBuild(
            name=record.slug,
            nodes=hw.nodes,
            accelerators_per_node=hw.accelerators_per_node,
            accelerator=accelerator,
            intra_node_link=(
                None if hw.intra_node_link is None else IntraNodeLinkIn(kind=hw.intra_node_link)
            ),
            inter_node_link=(
                None if hw.inter_node_link is None else InterNodeLinkIn(kind=hw.inter_node_link)
            ),
            host=host,
        )
    except ValidationError as exc:
        raise _Skip(f"hardware cannot be evaluated: {exc.errors()[0]['msg']}") from None
    spec_out = inline_build_spec(snap, build)
    if memory_system is not None:
        vendor, memory_type = memory_system
        accelerator_out = replace(spec_out.accelerator, vendor=vendor, memory_type=memory_type)
        spec_out = replace(spec_out, accelerator=accelerator_out)
    return spec_out, OFFLOAD_CLASS if offloaded else kind


def _workload(record: MeasurementIn) -> Workload:
    if record.precision is None:
        raise _Skip("the source does not give the precision")
    precision = PRECISION_ALIASES.get(record.precision, record.precision)
    if precision not in PRECISIONS:
        raise _Skip(f"precision '{record.precision}' is not modelled by the engine")
    if record.runtime not in RUNTIMES:
        raise _Skip(f"runtime '{record.runtime}' is not modelled by the engine")
    depth = record.context_depth_tokens or 0
    prompt = record.prompt_tokens or 0
    output = record.output_tokens or 0
    metric = record.metric
    tensor_parallel = record.tensor_parallel
    if record.runtime in LLAMA_CPP_RUNTIMES and (tensor_parallel or 1) > 1:
        # llama.cpp's row split gathers every split matmul's result on the main GPU, several
        # round trips per layer: not the engine's two all-reduces, and not its layer split.
        if metric != FIT_METRIC:
            raise _Skip("llama.cpp row split is not modelled (the engine models its layer split)")
        tensor_parallel = None  # each card holds 1/N of the weights in both split modes
    if record.expert_parallel:
        # Attention runs data parallel and the experts are sharded: neither the memory per GPU
        # nor the traffic is a tensor-parallel plan's, and the engine's expert-parallel plan
        # (expert_parallel.py) has no pipeline stages nor an EP size the row could give.
        raise _Skip(EXPERT_PARALLEL_SKIP)
    if metric == "prefill_tokens_per_s":
        prompt = prompt or UNPUBLISHED_PROMPT_TOKENS
        context = depth + prompt
    elif metric == FIT_METRIC:
        # The KV cache must hold the whole run; with nothing published, the API's default.
        context = depth + prompt + output or WorkloadIn.model_fields["context_tokens"].default
    else:
        # Decode is quoted at the mean context over the generated tokens; serving figures
        # too (their KV cache holds requests part-way through their answers), with the time to
        # first token read from the prefill of `prompt_tokens`.
        if metric == "ttft_s":
            prompt = prompt or UNPUBLISHED_PROMPT_TOKENS
        context = depth + prompt + output // 2
    batch = record.batch or record.concurrency or 1
    work = workload_spec(
        WorkloadIn(
            precision=precision,
            context_tokens=max(1, context),
            prompt_tokens=min(prompt, max(1, context)) or None,
            batch=batch,
            runtime=record.runtime,
            tensor_parallel=tensor_parallel,
            pipeline_parallel=record.pipeline_parallel,
        )
    )
    if record.backend is not None and record.backend != "cpu":
        # The run's own kernel backend (llama.cpp's Vulkan and ROCm prefill differ from CUDA's).
        work = replace(work, backend=record.backend)
    if metric == "prefill_tokens_per_s" and depth:
        # llama-bench `-d N`: the prompt is prefilled after N tokens already in the KV cache.
        work = replace(work, prefill_depth_tokens=depth)
    ubatch = stated_ubatch(record)
    if ubatch is not None and record.runtime in LLAMA_CPP_RUNTIMES:
        # llama-bench `-ub N` as the note quotes it ("n_ubatch 2048"): N tokens per pass.
        work = replace(work, prefill_token_budget=ubatch)
    work = replace(
        work,
        flash_attention=stated_flag(record, "flash_attention", default=True),
        # A build of the CUDA-graph era whose graph ggml-cuda still refused to capture, as the
        # row's note states it (`cuda_graphs=off`, e.g. Qwen3-Next's unfused delta rule).
        cuda_graphs=not before_cuda_graphs(record) and stated_flag(record, "cuda_graphs", True),
        **mla_kernel_flags(record),
        decode_sequences=1 if one_sequence_micro_batch(record) else None,
    )
    try:
        return published_placement(work, record.offload)
    except ValueError as exc:
        raise _Skip(str(exc)) from None


def _with_token_budget(record: MeasurementIn, model: ModelSpec, workload: Workload) -> Workload:
    """The run's token budget per scheduler step: the one its note states (`token_budget=N`:
    vLLM's --max-num-batched-tokens, TensorRT-LLM's --max_num_tokens), else the one its vLLM
    release sets for an MLA model without chunked prefill (token_budget.vllm_unchunked_budget, from
    the stated `max_model_len=N` or the model's own length), else the runtime profile's."""
    budget = stated_tokens(record, "token_budget")
    if budget is None and record.runtime == "vllm":
        max_model_len = stated_tokens(record, "max_model_len")
        budget = vllm_unchunked_budget(record.runtime_version, model, max_model_len)
        if budget is not None:  # without chunked prefill its prefill steps run alone
            workload = replace(workload, mixed_prefill=False)
    return workload if budget is None else replace(workload, prefill_token_budget=budget)


def _max_throughput_batch(
    build: BuildSpec, model: ModelSpec, workload: Workload, dp_attention: bool
) -> Workload:
    """A serving figure published without its batch is a maximum-throughput run: quote it at
    the largest batch the engine says fits (the same batch for every predictor). The engine's
    `max_batch_that_fits` is read at one batch and re-checked at that batch, a few times, since
    activation memory grows with the batch too."""
    fitting = workload
    estimate = run_estimator(build, model, workload, dp_attention, cached=True)
    candidate = estimate(workload).max_batch_that_fits
    for _attempt in range(MAX_BATCH_ATTEMPTS):
        if candidate is None or candidate <= fitting.batch:
            break
        trial = replace(workload, batch=candidate)
        est = estimate(trial)
        if est.fits:
            fitting = trial
            break
        candidate = est.max_batch_that_fits
    return fitting


def _case(snap: Snapshot, row: MeasurementRow) -> Case:
    record = row.record
    model = model_profile_rows(snap).get(record.model)
    if model is None:
        raise _Skip(f"model '{record.model}' is no longer in the catalog")
    if record.backend == "cpu" and not offloads(record.offload):
        # The engine models the accelerator; a run on the host CPU alone (XiongjieDai's Apple
        # cells labelled "(CPU)") is reported as not predicted, never as a GPU miss.
        raise _Skip("llama.cpp's CPU backend is not modelled (the engine models the accelerator)")
    reason = unpredictable(record)
    if reason is not None:
        # A fact of the run the schema does not record, stated in the row's note: not a miss.
        raise _Skip(reason)
    build, kind = _hardware(snap, record, model.spec.num_hidden_layers)
    workload = _with_token_budget(record, model.spec, _workload(record))
    if record.metric in SERVING_METRICS and not (record.prompt_tokens or record.output_tokens):
        # A dataset run (ShareGPT) quoted without its token counts: no workload to model.
        raise _Skip("serving figure without prompt or output length")
    dp_attention = stated_flag(record, "dp_attention", default=False)
    unpublished_batch = record.batch is None and record.concurrency is None
    if record.metric in SERVING_METRICS and unpublished_batch:
        try:
            workload = _max_throughput_batch(build, model.spec, workload, dp_attention)
            # No more in flight than the run sent (a smaller batch fits where a larger did).
            sent = record.requests or workload.batch
            workload = replace(workload, batch=min(workload.batch, sent))
        except DomainError as exc:
            raise _Skip(f"the engine refuses the inputs: {exc.detail}") from None
    return Case(
        slug=row.slug,
        source_url=record.source_url,
        source_title=record.source_title,
        group=Group(record.metric, record.runtime, kind),
        measured=record.value,
        build=build,
        model=model.spec,
        workload=workload,
        output_tokens=record.output_tokens or 0,
        label=f"{row.list_item.model} on {row.list_item.accelerator_name}",
        arrival=record.arrival,
        requests=record.requests,
        concurrency=record.concurrency,
        data_parallel_attention=dp_attention,
    )


def measurement_cases(snap: Snapshot) -> Cases:
    """Every measurement of the catalog as a Case, or Skipped with the reason."""

    def compute() -> Cases:
        cases, skipped = [], []
        for row in measurement_rows(snap):
            try:
                cases.append(_case(snap, row))
            except _Skip as exc:
                skipped.append(Skipped(row.slug, str(exc)))
        return Cases(tuple(cases), tuple(skipped))

    return snap.memo("measurement_cases", compute)
