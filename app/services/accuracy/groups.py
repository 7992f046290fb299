"""What accuracy is reported by, and the records it passes around: groups, cases, results."""

from dataclasses import dataclass

from app.engine import BuildSpec, ModelSpec, Workload
from app.engine.runtime import DEVICE_CLASSES as ENGINE_DEVICE_CLASSES

# Runs on mixed cards, and runs with weights in host RAM, form their own groups (issue 14); a
# mixed rig that also offloads counts as offload (its host RAM sets the pace).
MIXED_CLASS = "mixed cards"
OFFLOAD_CLASS = "CPU offload"
DEVICE_CLASSES = (*ENGINE_DEVICE_CLASSES, MIXED_CLASS, OFFLOAD_CLASS)
SPEED_METRICS = (
    "decode_tokens_per_s",
    "prefill_tokens_per_s",
    "ttft_s",
    "itl_ms",
    "e2e_latency_s",
    "output_tokens_per_s_total",
)
FIT_METRIC = "out_of_memory"
# Figures of a serving benchmark: one published without batch or concurrency is a run with an
# unbounded request rate (vllm bench serve --request-rate inf), i.e. at the largest batch.
SERVING_METRICS = ("ttft_s", "itl_ms", "e2e_latency_s", "output_tokens_per_s_total")
METRIC_LABELS = {
    "decode_tokens_per_s": "decode tokens/s",
    "prefill_tokens_per_s": "prefill tokens/s",
    "ttft_s": "time to first token",
    "itl_ms": "inter-token latency",
    "e2e_latency_s": "end-to-end latency",
    "output_tokens_per_s_total": "serving output tokens/s",
    "out_of_memory": "fits or not",
}
POOLED = "all"  # runtime and device class of the by-metric table

Predicted = float | bool | None


@dataclass(frozen=True)
class Group:
    """What accuracy is reported by."""

    metric: str
    runtime: str
    device_class: str

    @property
    def label(self) -> str:
        """ "decode tokens/s, llama.cpp, Apple unified"."""
        if self.runtime == POOLED:
            return f"{METRIC_LABELS[self.metric]}, all runtimes and devices"
        return f"{METRIC_LABELS[self.metric]}, {self.runtime}, {self.device_class}"


@dataclass(frozen=True)
class Case:
    """One measurement with the engine inputs for the same run."""

    slug: str
    source_url: str
    source_title: str | None
    group: Group
    measured: float | bool
    build: BuildSpec
    model: ModelSpec
    workload: Workload
    output_tokens: int
    label: str
    # How a serving benchmark sent its requests (burst / steady / poisson) and how many in all.
    arrival: str | None = None
    requests: int | None = None
    concurrency: int | None = None  # the benchmark's cap on requests in flight, as published


@dataclass(frozen=True)
class Skipped:
    """A measurement no prediction is made for, and why."""

    slug: str
    reason: str


@dataclass(frozen=True)
class Cases:
    """Every catalog measurement, resolved or skipped."""

    cases: tuple[Case, ...]
    skipped: tuple[Skipped, ...]


@dataclass(frozen=True)
class RowResult:
    """A predictor's figure for one case and its error (None for fit facts)."""

    case: Case
    predicted: Predicted
    error: float | None
    agrees: bool | None = None
    note: str = ""
