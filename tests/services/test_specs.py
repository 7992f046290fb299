"""Request objects as engine specs (services/specs.py, services/engine_runs.workload_spec)."""

from dataclasses import fields

from app.engine import AcceleratorSpec, Workload
from app.schemas.estimate import WorkloadIn
from app.schemas.inline import InlineAccelerator
from app.services.engine_runs import workload_spec
from app.services.specs import accelerator_spec


def test_an_inline_accelerator_states_every_spec_field_but_vendor_and_memory_type() -> None:
    # accelerator_spec passes an inline card's stored fields to the spec as they are.
    spec_fields = {f.name for f in fields(AcceleratorSpec)}
    assert set(InlineAccelerator.model_fields) == spec_fields - {"vendor", "memory_type"}


def test_an_inline_accelerator_spec_keeps_its_values_and_leaves_the_rest_unknown() -> None:
    card = InlineAccelerator.model_validate(
        {"name": "card", "memory_gb": 24, "memory_bandwidth_gbs": 936.0, "fp16_tflops": 71,
         "fp8_tflops": 142, "tdp_w": 350, "memory_kind": "unified"}
    )  # fmt: skip
    spec = accelerator_spec(card)
    assert spec == AcceleratorSpec(
        name="card", memory_gb=24.0, memory_bandwidth_gbs=936.0, fp16_tflops=71.0,
        memory_kind="unified", fp8_tflops=142.0, tdp_w=350.0,
    )  # fmt: skip
    assert spec.vendor is None and spec.memory_type is None


def test_every_api_workload_field_is_an_engine_workload_field() -> None:
    # workload_spec passes the API workload's stored fields to Workload as they are.
    assert set(WorkloadIn.model_fields) <= {f.name for f in fields(Workload)}


def test_a_workload_spec_keeps_the_stated_values_and_defaults_the_prompt() -> None:
    stated = WorkloadIn.model_validate({"precision": "fp8", "context_tokens": 1024, "batch": 4})
    assert workload_spec(stated) == Workload(
        precision="fp8", context_tokens=1024, prompt_tokens=1024, batch=4
    )
    long = WorkloadIn.model_validate({"context_tokens": 8192, "prompt_tokens": 512})
    assert workload_spec(long).prompt_tokens == 512
    assert workload_spec(WorkloadIn.model_validate({"context_tokens": 8192})).prompt_tokens == 2048
