"""The choices the calculator and the pages that judge fit or speed offer: modes, runtimes,
parallelism and offload."""

from pydantic import BaseModel, ConfigDict

from app.engine import INFERENCE_RUNTIMES
from app.schemas.listing import Parallelism, RuntimeName

MODES = (
    ("inference", "Inference"),
    ("training", "Full training / fine-tuning"),
    ("lora", "LoRA fine-tuning"),
    ("qlora", "QLoRA fine-tuning (4-bit base)"),
)
PARALLELISM = (
    ("auto", "Automatic"),
    ("tensor", "Tensor parallel"),
    ("pipeline", "Pipeline parallel"),
)
OFFLOAD_CHOICES = (
    ("auto", "When it does not fit: layers or MoE experts in host RAM"),
    ("none", "Never: accelerator memory only"),
)
# Runtimes a page offers (the training loop, pytorch, is not an inference choice).
RUNTIME_OPTIONS = tuple((r, r) for r in INFERENCE_RUNTIMES)


class PlanChoice(BaseModel):
    """A page's runtime and parallelism parameters (?runtime=vllm&parallelism=tensor); None =
    each build's default runtime."""

    model_config = ConfigDict(extra="ignore")

    runtime: RuntimeName | None = None
    parallelism: Parallelism = "auto"

    def state(self) -> dict[str, str | None]:
        """The non-default choices, for shareable links."""
        return {
            "runtime": self.runtime,
            "parallelism": None if self.parallelism == "auto" else self.parallelism,
        }
