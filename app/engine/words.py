"""The words of one estimate (verdict, findings, assumptions, plan text), on demand.

`estimate()` hands this object to its Estimate and ParallelPlan as `_words`; each text is
computed the first time its field is read (results.Deferred), from the result's own figures
and the few inputs kept here. It holds no reference back to the results (no cycle for the
garbage collector) and no per-estimate scratch objects."""

from __future__ import annotations

from typing import Any

from .assumptions import assumptions
from .findings import estimate_findings, estimate_verdict
from .launch import launch_command, model_ref_for
from .layout import plan_description
from .prepared import Prepared
from .results import Estimate, Finding, ParallelPlan
from .search import objective_for
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload


class EstimateWords:
    """The inputs of an estimate's texts that its results do not carry."""

    __slots__ = (
        "p", "model", "build", "workload", "costs", "need_total", "util", "model_ref", "texts",
    )  # fmt: skip

    def __init__(
        self,
        p: Prepared,
        model: ModelSpec,
        build: BuildSpec,
        workload: Workload,
        costs: CostAssumptions,
        need_total: float,  # bytes on the fullest accelerator
        util: float,  # usable share of each accelerator's memory
        model_ref: str,  # a Hugging Face id or the model's name
    ) -> None:
        self.p, self.model, self.build, self.workload = p, model, build, workload
        self.costs, self.need_total, self.util, self.model_ref = costs, need_total, util, model_ref
        self.texts: dict[str, Any] | None = None  # computed so far, by field name

    def text(self, name: str, result: Estimate | ParallelPlan) -> Any:
        """The field `name` of `result` (an Estimate or its ParallelPlan), computed once."""
        texts = self.texts
        if texts is None:
            texts = self.texts = {}
        elif name in texts:
            return texts[name]
        value = texts[name] = getattr(self, name)(result)
        return value

    def verdict(self, e: Estimate) -> str:
        """Estimate.verdict."""
        plan = e.plan
        return estimate_verdict(
            e.fits, self.build, e.memory, plan.tensor_parallel, plan.pipeline_parallel,
            self.need_total,
        )  # fmt: skip

    def findings(self, e: Estimate) -> tuple[Finding, ...]:
        """Estimate.findings."""
        plan = e.plan
        return estimate_findings(
            self.p, e.fits, self.model, self.build, self.workload, plan.tensor_parallel,
            plan.pipeline_parallel, e.memory, e.throughput, e.max_context_tokens_that_fit,
            plan.data_parallel,
        )  # fmt: skip

    def assumptions(self, e: Estimate) -> tuple[str, ...]:
        """Estimate.assumptions."""
        return assumptions(self.p, self.costs, self.util, self.build, self.workload)

    def description(self, plan: ParallelPlan) -> str:
        """ParallelPlan.description."""
        return plan_description(
            plan.tensor_parallel, plan.pipeline_parallel, plan.replicas_active,
            plan.expert_parallel, plan.layers_per_stage, plan.nodes_used, plan.node_usage,
            self.build,
        )  # fmt: skip

    def objective(self, plan: ParallelPlan) -> str:
        """ParallelPlan.objective."""
        return objective_for(self.p.mode, self.workload.batch)

    def launch_command(self, plan: ParallelPlan) -> str:
        """ParallelPlan.launch_command."""
        runtime = self.p.runtime.name
        return launch_command(
            runtime=runtime,
            model_ref=model_ref_for(self.model_ref, runtime, self.workload.precision),
            build=self.build,
            workload=self.workload,
            tp=plan.tensor_parallel,
            pp=plan.pipeline_parallel,
            replicas=plan.replicas_active,
            expert_parallel=plan.expert_parallel > 1,
            memory_utilization=self.util,
            kv_precision=self.p.kv_precision,
        )
