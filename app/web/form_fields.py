"""The calculator's form fields: which estimate-request path each fills, what each is called on
the page, and refusals turned into notices beside the field they came from."""

from typing import Any

from app.errors import FieldError
from app.formatting import link_name
from app.models import INTER_NODE_LINK_KINDS, INTRA_NODE_LINK_KINDS, MEMORY_KINDS
from app.web.common import Notice

# Form field -> path in the estimate request. Custom-build fields are used when
# build_source=custom, the pasted config when model_source=config.
CUSTOM_BUILD_FIELDS = {
    "b_name": "build.name",
    "b_nodes": "build.nodes",
    "b_intra_kind": "build.intra_node_link.kind",
    "b_intra_gbs": "build.intra_node_link.bandwidth_gbs",
    "b_inter_kind": "build.inter_node_link.kind",
    "b_inter_gbps": "build.inter_node_link.bandwidth_gbps",
    "b_power_w": "build.power_w",
    "b_price_usd": "build.price_usd",
}
# A described build is always sent as accelerator groups: the first group is the card chosen
# (or described with the a_* fields) x b_per_node; groups 2..GROUP_ROWS are catalog cards.
FIRST_GROUP = "build.accelerators.0"
CUSTOM_ACCELERATOR_FIELDS = {
    "a_name": f"{FIRST_GROUP}.accelerator.name",
    "a_memory_gb": f"{FIRST_GROUP}.accelerator.memory_gb",
    "a_bandwidth_gbs": f"{FIRST_GROUP}.accelerator.memory_bandwidth_gbs",
    "a_fp16_tflops": f"{FIRST_GROUP}.accelerator.fp16_tflops",
    "a_fp8_tflops": f"{FIRST_GROUP}.accelerator.fp8_tflops",
    "a_tdp_w": f"{FIRST_GROUP}.accelerator.tdp_w",
    "a_memory_kind": f"{FIRST_GROUP}.accelerator.memory_kind",
}
GROUP_ROWS = 4
GROUP_PARTS = {"count": "count", "pcie_gen": "pcie_generation", "pcie_lanes": "pcie_lanes"}


def group_prefix(row: int) -> str:
    """Form-field prefix of group row 1..GROUP_ROWS (row 1 keeps the original b_ names)."""
    return "b_" if row == 1 else f"g{row}_"


def _group_fields() -> dict[str, str]:
    """Form field -> request path for every group row."""
    fields = {"b_accelerator": f"{FIRST_GROUP}.accelerator"}
    for row in range(1, GROUP_ROWS + 1):
        prefix = group_prefix(row)
        if row > 1:
            fields[f"{prefix}accelerator"] = f"build.accelerators.{row - 1}.accelerator"
        for part, name in GROUP_PARTS.items():
            field = "b_per_node" if (row, part) == (1, "count") else f"{prefix}{part}"
            fields[field] = f"build.accelerators.{row - 1}.{name}"
    return fields


GROUP_FIELDS = _group_fields()
HOST_FIELDS = {
    "h_cpu": "build.host.cpu",
    "h_cores": "build.host.cpu_cores",
    "h_ram_gb": "build.host.ram_gb",
    "h_channels": "build.host.ram_channels",
    "h_speed_mts": "build.host.ram_speed_mts",
    "h_bandwidth_gbs": "build.host.ram_bandwidth_gbs",
}
# What each form field is called on the page, so an error beside it reads in words.
FIELD_LABELS = {
    "build": "Catalog build",
    "model": "Catalog model",
    "config": "config.json",
    "b_name": "Build name",
    "b_nodes": "Nodes",
    "b_per_node": "Cards of the first kind per node",
    "b_accelerator": "First card",
    "b_intra_kind": "GPU-to-GPU link",
    "b_intra_gbs": "Link GB/s per GPU",
    "b_inter_kind": "Node-to-node network",
    "b_inter_gbps": "Network Gb/s per node",
    "b_power_w": "System power",
    "b_price_usd": "Price",
    "a_name": "Accelerator name",
    "a_memory_gb": "Memory per accelerator",
    "a_bandwidth_gbs": "Memory bandwidth",
    "a_fp16_tflops": "Dense FP16 TFLOPS",
    "a_fp8_tflops": "Dense FP8 TFLOPS",
    "a_tdp_w": "Accelerator power",
    "a_memory_kind": "Memory kind",
    "b_pcie_gen": "PCIe generation of the first cards",
    "b_pcie_lanes": "PCIe lanes of the first cards",
    **{
        f"g{row}_{part}": f"{label} of card kind {row}"
        for row in range(2, GROUP_ROWS + 1)
        for part, label in (
            ("accelerator", "Card"),
            ("count", "Count"),
            ("pcie_gen", "PCIe generation"),
            ("pcie_lanes", "PCIe lanes"),
        )
    },
    "h_cpu": "Host CPU",
    "h_cores": "CPU cores",
    "h_ram_gb": "Host RAM",
    "h_channels": "RAM channels",
    "h_speed_mts": "RAM speed",
    "h_bandwidth_gbs": "RAM bandwidth",
    "offload": "Offload to host RAM",
}
WORKLOAD_FIELDS = (
    "mode",
    "precision",
    "kv_cache_precision",
    "context_tokens",
    "prompt_tokens",
    "batch",
    "parallelism",
    "runtime",
    "training_tokens",
    "zero_stage",
    "activation_recomputation",
    "lora_rank",
    "memory_utilization",
    "tensor_parallel",
    "pipeline_parallel",
    "offload",
)
COST_FIELDS = ("amortization_years", "electricity_usd_per_kwh", "pue", "utilization")
FORM_FIELDS: dict[str, str] = {
    "build": "build",
    "model": "model",
    "config": "model.config",
    "model_name": "model.name",
    **CUSTOM_BUILD_FIELDS,
    **CUSTOM_ACCELERATOR_FIELDS,
    **GROUP_FIELDS,
    **HOST_FIELDS,
    **{f: f"workload.{f}" for f in WORKLOAD_FIELDS},
    **{f: f"costs.{f}" for f in COST_FIELDS},
}
FIELD_FOR_PATH = {path: name for name, path in FORM_FIELDS.items()}
def form_field(path: str, field_for_path: dict[str, str] = FIELD_FOR_PATH) -> str:
    """The form field that a request path came from (its nearest known ancestor)."""
    parts = path.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in field_for_path:
            return field_for_path[candidate]
        parts.pop()
    return path


def form_notices(errors: list[FieldError]) -> list[Notice]:
    """Field errors as notices beside the form field they came from, in words."""
    out = []
    for e in errors:
        field = form_field(e.field)
        label = FIELD_LABELS.get(field, field.replace("_", " "))
        out.append(Notice(f"{label}: {_in_words(e.message)}", field=field))
    return out


def _in_words(message: str) -> str:
    """A schema message without pydantic's "Value error, " prefix."""
    return message.removeprefix("Value error, ")


def build_model_context(raw: dict[str, str], options: Any) -> dict[str, Any]:
    """What templates/partials/_build_model_fields.html needs besides `raw` and `notices`."""
    return {
        "options": options,
        "build_source": raw.get("build_source", "catalog"),
        "model_source": raw.get("model_source", "catalog"),
        "intra_kinds": [(k, link_name(k)) for k in INTRA_NODE_LINK_KINDS],
        "inter_kinds": [(k, link_name(k)) for k in INTER_NODE_LINK_KINDS],
        "memory_kinds": [(k, k) for k in MEMORY_KINDS],
        "group_rows": range(2, GROUP_ROWS + 1),
        "pcie_generations": [(str(g), f"PCIe {g}.0") for g in range(3, 7)],
        "pcie_lanes": [(str(n), f"x{n}") for n in (16, 8, 4, 1)],
    }
