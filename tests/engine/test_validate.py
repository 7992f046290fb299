"""Bad input is refused naming the field (validate.py)."""

from __future__ import annotations

import dataclasses

import pytest

from app.engine import CostAssumptions, EngineInputError, Workload, estimate

from .shapes import DESKTOP, LLAMA_8B, spec


@pytest.mark.parametrize(
    ("build", "workload", "costs", "field"),
    [
        (DESKTOP, Workload(precision="fp7"), CostAssumptions(), "precision"),
        (dataclasses.replace(DESKTOP, nodes=0), Workload(), CostAssumptions(), "nodes"),
        (DESKTOP, Workload(batch=0), CostAssumptions(), "batch"),
        (DESKTOP, Workload(mode="serving"), CostAssumptions(), "mode"),
        (DESKTOP, Workload(runtime="tgi"), CostAssumptions(), "runtime"),
        (DESKTOP, Workload(tensor_parallel=8), CostAssumptions(), "tensor_parallel"),
        (DESKTOP, Workload(memory_utilization=1.5), CostAssumptions(), "memory_utilization"),
        (DESKTOP, Workload(), CostAssumptions(pue=0.5), "pue"),
    ],
)
def test_invalid_inputs_name_their_field(build, workload, costs, field):
    with pytest.raises(EngineInputError) as err:
        estimate(build, spec(LLAMA_8B), workload, costs)
    assert err.value.field == field
