"""POST /api/v1/estimate: the request (slug or inline build/model, workload, costs).

Inline objects are in `app.schemas.inline`, the answer in `app.schemas.estimate_answer`.
"""

from typing import TYPE_CHECKING, Literal

from pydantic import (
    Field,
    model_validator,
)

from app.engine import KV_BITS
from app.schemas.common import StrictModel
from app.schemas.inline import BuildRef, ModelRef
from app.schemas.listing import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_PRECISION,
    MAX_BATCH,
    MAX_CONTEXT_TOKENS,
    RUNTIME_DESCRIPTION,
    Parallelism,
    PrecisionName,
    RuntimeName,
)

if TYPE_CHECKING:
    KvPrecisionName = str
else:  # an enum of the engine's names, so OpenAPI lists them and unknown ones are 422
    KvPrecisionName = Literal[tuple(KV_BITS)]
Mode = Literal["inference", "training", "lora", "qlora"]
Offload = Literal["auto", "none"]
OFFLOAD_DESCRIPTION = (
    "auto: when the model does not fit in accelerator memory, keep layers or MoE experts in "
    "host RAM (llama.cpp -ngl / --n-cpu-moe) where the runtime can; none: never"
)
DEFAULT_PROMPT_TOKENS = 2048
MAX_BATCH_REQUESTS = 100


class WorkloadIn(StrictModel):
    """What to run. Every field has a default; `{}` is a valid workload."""

    mode: Mode = "inference"
    precision: PrecisionName = Field(default=DEFAULT_PRECISION, description="weight precision")
    kv_cache_precision: KvPrecisionName | None = Field(
        default=None, description="KV-cache format; null = the weight precision's default"
    )
    context_tokens: int = Field(
        strict=True,
        default=DEFAULT_CONTEXT_TOKENS,
        ge=1,
        le=MAX_CONTEXT_TOKENS,
        description="tokens each sequence holds in its KV cache (prompt plus generated); "
        "decode speed is quoted at this length",
    )
    prompt_tokens: int | None = Field(
        strict=True,
        default=None,
        ge=1,
        le=MAX_CONTEXT_TOKENS,
        description=f"prompt length for prefill and time to first token; null = "
        f"min({DEFAULT_PROMPT_TOKENS}, context_tokens)",
    )
    batch: int = Field(
        strict=True, default=1, ge=1, le=MAX_BATCH, description="concurrent sequences"
    )
    parallelism: Parallelism = "auto"
    runtime: RuntimeName | None = Field(default=None, description=RUNTIME_DESCRIPTION)
    tensor_parallel: int | None = Field(
        strict=True,
        default=None,
        ge=1,
        le=1024,
        description="explicit tensor-parallel size; one the runtime would refuse (not dividing "
        "the attention heads, ...) is a 422",
    )
    pipeline_parallel: int | None = Field(strict=True, default=None, ge=1, le=1024)
    memory_utilization: float | None = Field(
        strict=True,
        default=None,
        gt=0,
        le=1,
        description="usable share of each accelerator's memory",
    )
    zero_stage: int = Field(
        strict=True, default=0, ge=0, le=3, description="training: ZeRO/FSDP stage"
    )
    activation_recomputation: bool | None = Field(
        default=None,
        strict=True,
        description="training: null = the mode's standard recipe (on for LoRA/QLoRA, off for "
        "full training)",
    )
    training_tokens: int = Field(strict=True, default=0, ge=0, le=10**15)
    lora_rank: int = Field(strict=True, default=16, ge=1, le=65_536)
    model_flops_utilization: float | None = Field(strict=True, default=None, gt=0, le=1)
    offload: Offload = Field(default="auto", description=OFFLOAD_DESCRIPTION)

    @model_validator(mode="after")
    def _prompt_within_context(self) -> "WorkloadIn":
        if self.prompt_tokens is not None and self.prompt_tokens > self.context_tokens:
            raise ValueError("prompt_tokens exceeds context_tokens (the context holds the prompt)")
        return self


class CostsIn(StrictModel):
    """Overrides of the server's cost assumptions (see GET /docs for the defaults)."""

    amortization_years: float | None = Field(
        strict=True, default=None, gt=0, le=100, allow_inf_nan=False
    )
    electricity_usd_per_kwh: float | None = Field(
        strict=True, default=None, ge=0, le=100, allow_inf_nan=False
    )
    pue: float | None = Field(strict=True, default=None, ge=1, le=3, allow_inf_nan=False)
    utilization: float | None = Field(
        strict=True,
        default=None,
        gt=0,
        le=1,
        description="share of wall-clock hours the build is busy",
    )


class EstimateRequest(StrictModel):
    """One engine run: a build and a model (each a catalog slug or inline) and a workload."""

    build: BuildRef = Field(description="a build slug, or an inline build object")
    model: ModelRef = Field(description="a model slug, or {name, config: <config.json>}")
    workload: WorkloadIn = Field(default_factory=WorkloadIn)
    costs: CostsIn | None = None

    model_config = {
        "extra": "forbid",
        "json_schema_extra": {
            "examples": [
                {
                    "build": "2x-dgx-h200-cluster",
                    "model": "deepseek-v3",
                    "workload": {"precision": "fp8", "context_tokens": 8192, "batch": 8},
                },
                {
                    "build": {
                        "name": "2x RTX 3090",
                        "accelerators_per_node": 2,
                        "accelerator": {
                            "name": "RTX 3090",
                            "memory_gb": 24,
                            "memory_bandwidth_gbs": 936,
                            "fp16_tflops": 71,
                        },
                        "intra_node_link": {"kind": "pcie", "bandwidth_gbs": 25},
                        "price_usd": 2500,
                    },
                    "model": "llama-3-1-8b",
                    "workload": {"precision": "bf16"},
                },
            ]
        },
    }
