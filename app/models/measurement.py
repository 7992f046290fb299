"""A published measurement: one figure a runtime reached on some hardware with some model.

The hardware is either a catalog build or an inline description (kept whole in `hardware`); the
model is a catalog model slug. References are stored as slugs, checked when a record is written,
so a measurement survives the edit of a build it names (and the accuracy page says when a
reference no longer resolves) instead of blocking that edit.
"""

from typing import Any

from sqlalchemy import JSON, Boolean, CheckConstraint, Float, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models._mixins import SHORT_TEXT_LENGTH, SLUG_LENGTH, CatalogRecord

METRICS = (
    "decode_tokens_per_s",
    "prefill_tokens_per_s",
    "ttft_s",
    "itl_ms",
    "e2e_latency_s",
    "output_tokens_per_s_total",
    "out_of_memory",
)
# The one unit each metric is published in (a value in another unit is converted by hand first).
METRIC_UNITS = {
    "decode_tokens_per_s": "tokens/s",
    "prefill_tokens_per_s": "tokens/s",
    "ttft_s": "s",
    "itl_ms": "ms",
    "e2e_latency_s": "s",
    "output_tokens_per_s_total": "tokens/s",
    "out_of_memory": "bool",
}
# How a serving benchmark sent its requests (the accuracy predictor's queueing depends on it):
# burst = all at once (an offline run; in waves of `concurrency` when capped), steady = a closed
# loop keeping `concurrency` in flight whose requests fall out of step, poisson = random arrivals.
ARRIVALS = ("burst", "steady", "poisson")
MEASUREMENT_RUNTIMES = (
    "llama.cpp",
    "ollama",
    "mlx",
    "vllm",
    "sglang",
    "trt-llm",
    "exllamav2",
    "ktransformers",
    "ik_llama.cpp",
    "lmdeploy",
)


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Measurement(CatalogRecord, Base):
    __tablename__ = "measurement"
    __table_args__ = (
        CheckConstraint(_in("metric", METRICS), name="metric"),
        CheckConstraint("accelerator_count >= 1", name="accelerator_count_positive"),
        CheckConstraint("nodes >= 1", name="nodes_positive"),
        CheckConstraint("batch IS NULL OR batch >= 1", name="batch_positive"),
        CheckConstraint("value >= 0", name="value_not_negative"),
        CheckConstraint(f"arrival IS NULL OR {_in('arrival', ARRIVALS)}", name="arrival"),
        CheckConstraint("requests IS NULL OR requests >= 1", name="requests_positive"),
    )

    # The hardware block as written (build or inline accelerator, count, links, host, groups);
    # the columns below repeat what lists filter on.
    hardware: Mapped[dict[str, Any]] = mapped_column(JSON)
    build_slug: Mapped[str | None] = mapped_column(String(SLUG_LENGTH), index=True)
    accelerator_slug: Mapped[str | None] = mapped_column(String(SLUG_LENGTH), index=True)
    accelerator_count: Mapped[int] = mapped_column(Integer, default=1)
    nodes: Mapped[int] = mapped_column(Integer, default=1)
    model_slug: Mapped[str] = mapped_column(String(SLUG_LENGTH), index=True)
    model_hf_id: Mapped[str | None] = mapped_column(String(SHORT_TEXT_LENGTH))
    runtime: Mapped[str] = mapped_column(String(32), index=True)
    runtime_version: Mapped[str | None] = mapped_column(String(SHORT_TEXT_LENGTH))
    backend: Mapped[str | None] = mapped_column(String(32))
    # Null when the source does not say (MLPerf rows often do not): such rows are not predicted.
    precision: Mapped[str | None] = mapped_column(String(32))
    batch: Mapped[int | None] = mapped_column(Integer)
    concurrency: Mapped[int | None] = mapped_column(Integer)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer)
    output_tokens: Mapped[int | None] = mapped_column(Integer)
    context_depth_tokens: Mapped[int | None] = mapped_column(Integer)
    tensor_parallel: Mapped[int | None] = mapped_column(Integer)
    pipeline_parallel: Mapped[int | None] = mapped_column(Integer)
    # The run sharded a mixture-of-experts model's routed experts over its GPUs with
    # data-parallel attention (not tensor parallel's all-reduces); None: not stated.
    expert_parallel: Mapped[bool | None] = mapped_column(Boolean)
    offload: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    arrival: Mapped[str | None] = mapped_column(String(16))
    requests: Mapped[int | None] = mapped_column(Integer)  # requests the run sent in all
    metric: Mapped[str] = mapped_column(String(32), index=True)
    # out_of_memory is stored as 1.0 (failed) / 0.0 (ran); the document shape says true/false.
    value: Mapped[float] = mapped_column(Float)
    unit: Mapped[str] = mapped_column(String(16))
    source_title: Mapped[str | None] = mapped_column(String(SHORT_TEXT_LENGTH))
    read_from_chart: Mapped[bool] = mapped_column(default=False)
