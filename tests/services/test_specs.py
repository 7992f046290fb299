"""Inline request objects as engine specs (services/specs.py)."""

from dataclasses import fields

from app.engine import AcceleratorSpec
from app.schemas.inline import InlineAccelerator
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
