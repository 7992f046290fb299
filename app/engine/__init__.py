"""tierline's calculation engine: fit, parallel plan, speed and cost. Standard library only."""

from .errors import EngineInputError
from .estimate import estimate
from .failover import failover
from .launch import launch_command
from .params import model_spec_from_hf_config
from .precision import KV_BITS, PRECISIONS, Precision, rule_of_thumb_gb
from .prep import resolve_runtime
from .results import (
    CostFigures,
    Estimate,
    FailoverCase,
    Finding,
    MemoryBreakdown,
    ParallelPlan,
    Throughput,
    TrainingFigures,
)
from .runtime import INFERENCE_RUNTIMES, RUNTIMES
from .search import OBJECTIVE_AGGREGATE, OBJECTIVE_LATENCY
from .specs import (
    PCIE_GBS_PER_LANE,
    AcceleratorGroup,
    AcceleratorSpec,
    BuildSpec,
    CostAssumptions,
    HostSpec,
    InterNodeLink,
    IntraNodeLink,
    ModelSpec,
    Workload,
    ram_bandwidth_gbs,
)
from .tiers import derive_tier

__all__ = [
    "INFERENCE_RUNTIMES",
    "KV_BITS",
    "OBJECTIVE_AGGREGATE",
    "OBJECTIVE_LATENCY",
    "FailoverCase",
    "failover",
    "launch_command",
    "resolve_runtime",
    "PRECISIONS",
    "RUNTIMES",
    "PCIE_GBS_PER_LANE",
    "AcceleratorGroup",
    "AcceleratorSpec",
    "HostSpec",
    "ram_bandwidth_gbs",
    "BuildSpec",
    "CostAssumptions",
    "CostFigures",
    "EngineInputError",
    "Estimate",
    "Finding",
    "InterNodeLink",
    "IntraNodeLink",
    "MemoryBreakdown",
    "ModelSpec",
    "ParallelPlan",
    "Precision",
    "Throughput",
    "TrainingFigures",
    "Workload",
    "derive_tier",
    "estimate",
    "model_spec_from_hf_config",
    "rule_of_thumb_gb",
]
