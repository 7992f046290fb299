"""A plan's decode and prefill figures (Throughput) from its step and prefill models (speed.py)."""

from __future__ import annotations

from .plan import Prepared
from .results import Throughput, bottleneck_name, fill_throughput
from .specs import BuildSpec, ModelSpec, Workload
from .speed import DecodeModel, packed_prompts, prefill


def throughput(
    p: Prepared,
    model: ModelSpec,
    build: BuildSpec,
    workload: Workload,
    tp: int,
    pp: int,
    dp: int,
    dm: DecodeModel | None = None,
    step_parts: tuple[float, float, float, float, float] | None = None,
) -> Throughput:
    """Decode and prefill figures for a split that fits.

    The aggregate counts only replicas that hold sequences: every one of the batch's
    sequences gets the per-sequence rate, so aggregate = per-sequence x batch (at batch 1 the
    idle replicas add nothing). `dm` and `step_parts` (its step at the per-replica batch)
    reuse what the plan search already computed."""
    if dm is None:
        dm = DecodeModel(p, model, build, workload, tp, pp)
    batch_r = -(-workload.batch // dp)
    step, mem, comp, comm, fixed = step_parts or dm.step(batch_r)
    per_seq = 1.0 / step
    aggregate = per_seq * workload.batch
    bottleneck = bottleneck_name(mem, comp, comm, fixed)
    ttft = prefill(p, model, build, workload, tp, pp)
    return fill_throughput(
        decode_tokens_per_s=per_seq,
        aggregate_decode_tokens_per_s=aggregate,
        prefill_tokens_per_s=workload.prompt_tokens / ttft,
        time_to_first_token_s=ttft,
        bottleneck=bottleneck,
        decode_memory_s=mem,
        decode_compute_s=comp,
        decode_communication_s=comm,
        decode_fixed_s=fixed,
        decode_step_s=step,
        compute_bound_batch=dm.compute_bound_batch(),
        batch_per_replica=batch_r,
        _words=PackedPrefill(p, model, build, workload, tp, pp, ttft, batch_r),
    )


class PackedPrefill:
    """Throughput.packed_prefill_s, computed on first read (results.Deferred): only the
    accuracy report reads it, and one more prefill pass was a tenth of a sweep's time."""

    __slots__ = ("p", "model", "build", "workload", "tp", "pp", "ttft", "batch_r", "value")

    def __init__(
        self, p: Prepared, model: ModelSpec, build: BuildSpec, workload: Workload,
        tp: int, pp: int, ttft: float, batch_r: int,
    ) -> None:
        self.p, self.model, self.build, self.workload = p, model, build, workload
        self.tp, self.pp, self.ttft, self.batch_r = tp, pp, ttft, batch_r
        self.value: tuple[float | None] | None = None  # (seconds,) once computed

    def text(self, name: str, result: Throughput) -> float | None:
        """The packed prefill seconds per prompt (None at one sequence per replica: no other
        prompt shares its pass); `name` is always "packed_prefill_s"."""
        if self.value is None:
            self.value = (self._packed_prefill_s(),)
        return self.value[0]

    def _packed_prefill_s(self) -> float | None:
        if self.batch_r <= 1:
            return None
        rt, w = self.p.runtime, self.workload
        packed = packed_prompts(rt.prefill_chunk_tokens, w.prompt_tokens, self.batch_r)
        # A runtime that keeps pp micro-batches in flight (vLLM, SGLang, TensorRT-LLM: no
        # per-call drain, prefill_pipeline_tokens None) overlaps this prompt's stages with the
        # other requests' work, so its share is one stage's time (docs/engine.md 6).
        full = self.pp > 1 and rt.prefill_pipeline_tokens is None
        if packed <= 1 and not full:
            return self.ttft
        args = (self.p, self.model, self.build, self.workload, self.tp, self.pp)
        return prefill(*args, packed, pipeline_full=full) / packed
