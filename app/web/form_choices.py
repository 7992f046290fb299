"""The choices the calculator and the pages that judge fit or speed offer: modes, runtimes,
parallelism and offload."""

from app.engine import INFERENCE_RUNTIMES

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
