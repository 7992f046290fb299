"""The words of one estimate (verdict, findings, assumptions, plan text), on demand.

`estimate()` hands this object to its result as `_words`; each text is computed the first time
its field is read (results.Deferred), from the same inputs the estimate used."""

from __future__ import annotations

from .assumptions import assumptions
from .findings import estimate_findings, estimate_verdict
from .launch import launch_command, model_ref_for
from .layout import Layout
from .prepared import Prepared
from .results import Finding, MemoryBreakdown, Throughput
from .specs import BuildSpec, CostAssumptions, ModelSpec, Workload


class EstimateWords:
    """The inputs of an estimate's texts, kept until they are read."""

    __slots__ = (
        "p", "fits", "model", "build", "workload", "costs", "tp", "pp", "layout", "memory",
        "tput", "max_ctx", "need_total", "util", "model_ref",
    )  # fmt: skip

    def __init__(
        self,
        p: Prepared,
        fits: bool,
        model: ModelSpec,
        build: BuildSpec,
        workload: Workload,
        costs: CostAssumptions,
        tp: int,
        pp: int,
        layout: Layout,
        memory: MemoryBreakdown,
        tput: Throughput | None,
        max_ctx: int | None,
        need_total: float,
        util: float,
        model_ref: str,  # a Hugging Face id or the model's name
    ) -> None:
        self.p, self.fits, self.model, self.build, self.workload = p, fits, model, build, workload
        self.costs, self.tp, self.pp, self.layout = costs, tp, pp, layout
        self.memory, self.tput, self.max_ctx = memory, tput, max_ctx
        self.need_total, self.util, self.model_ref = need_total, util, model_ref

    def verdict(self) -> str:
        """Estimate.verdict."""
        return estimate_verdict(
            self.fits, self.build, self.memory, self.tp, self.pp, self.need_total
        )

    def findings(self) -> tuple[Finding, ...]:
        """Estimate.findings."""
        return estimate_findings(
            self.p, self.fits, self.model, self.build, self.workload, self.tp, self.pp,
            self.memory, self.tput, self.max_ctx, self.layout.dp,
        )  # fmt: skip

    def assumptions(self) -> tuple[str, ...]:
        """Estimate.assumptions."""
        return assumptions(self.p, self.costs, self.util)

    def description(self) -> str:
        """ParallelPlan.description."""
        return self.layout.description()

    def launch_command(self) -> str:
        """ParallelPlan.launch_command."""
        return launch_command(
            runtime=self.p.runtime.name,
            model_ref=model_ref_for(self.model_ref, self.p.runtime.name, self.workload.precision),
            build=self.build,
            workload=self.workload,
            tp=self.tp,
            pp=self.pp,
            replicas=self.layout.active,
            expert_parallel=self.layout.ep > 1,
            memory_utilization=self.util,
            kv_precision=self.p.kv_precision,
        )
