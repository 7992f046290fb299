"""How to run a plan: the launch command for the chosen runtime and split."""

from __future__ import annotations

import re
from functools import lru_cache

from .precision import PRECISIONS, gguf_file_type
from .specs import BuildSpec, Workload

# Flags are each runtime's documented CLI: `vllm serve --help`, `python -m
# sglang.launch_server --help`, `trtllm-serve serve --help`, llama.cpp tools/server/README.md,
# Ollama docs/faq.md (OLLAMA_CONTEXT_LENGTH, OLLAMA_NUM_PARALLEL), `mlx_lm.server --help`.


def _fmt_share(x: float) -> str:
    return f"{round(x, 2):g}"


def launch_command(
    *,
    runtime: str,
    model_ref: str,
    build: BuildSpec,
    workload: Workload,
    tp: int,
    pp: int,
    replicas: int,
    expert_parallel: bool,
    memory_utilization: float,
    kv_precision: str,
    layer_partition: tuple[int, ...] = (),
) -> str:
    """The command line that runs this plan (model_ref: a Hugging Face id or a file name).

    `layer_partition`: the layers of each pipeline stage, where they are not even (mixed
    cards, engine/parts.py). vLLM splits layers evenly over the stages unless
    VLLM_PP_LAYER_PARTITION gives the counts (vllm envs.py, read by
    distributed/utils.get_pp_indices), so its command sets that variable."""
    ctx = workload.context_tokens
    batch = workload.batch
    if runtime == "vllm":
        parts = [f"vllm serve {model_ref}", f"--tensor-parallel-size {tp}"]
        if pp > 1 and layer_partition:
            parts.insert(0, "VLLM_PP_LAYER_PARTITION=" + ",".join(map(str, layer_partition)))
        if pp > 1:
            parts.append(f"--pipeline-parallel-size {pp}")
        if replicas > 1:
            parts.append(f"--data-parallel-size {replicas}")
        if expert_parallel:
            parts.append("--enable-expert-parallel")
        parts += [
            f"--max-model-len {ctx}",
            f"--gpu-memory-utilization {_fmt_share(memory_utilization)}",
        ]
        if batch > 1:
            parts.append(f"--max-num-seqs {batch}")
        if kv_precision == "fp8":
            parts.append("--kv-cache-dtype fp8")
        return " ".join(parts)
    if runtime == "sglang":
        parts = [f"python -m sglang.launch_server --model-path {model_ref}", f"--tp {tp}"]
        if pp > 1:
            parts.append(f"--pp-size {pp}")
        if replicas > 1:
            parts.append(f"--dp {replicas}")
        if expert_parallel:
            parts.append(f"--ep {tp}")
        parts += [
            f"--context-length {ctx}",
            f"--mem-fraction-static {_fmt_share(memory_utilization)}",
        ]
        if kv_precision == "fp8":
            parts.append("--kv-cache-dtype fp8_e4m3")
        return " ".join(parts)
    if runtime == "trt-llm":
        parts = [f"trtllm-serve {model_ref}", f"--tp_size {tp}", f"--pp_size {pp}"]
        if expert_parallel:
            parts.append(f"--ep_size {tp}")
        parts += [f"--max_seq_len {ctx}", f"--max_batch_size {batch}"]
        return " ".join(parts)
    if runtime == "llama.cpp":
        parts = [f"llama-server -m {model_ref}", "-ngl 99"]
        gpus = max(tp, pp)
        if gpus > 1:
            if tp > 1:
                parts.append("--split-mode row")
            share = f"{build.accelerator.memory_gb:g}"
            parts.append("--tensor-split " + ",".join([share] * gpus))
        parts.append(f"-c {ctx * batch}")  # the context is shared by the -np slots
        if batch > 1:
            parts.append(f"-np {batch}")
        if kv_precision in ("q8_0", "q4_0"):
            parts.append(f"-fa on -ctk {kv_precision} -ctv {kv_precision}")
        return " ".join(parts)
    if runtime == "ollama":
        env = f"OLLAMA_CONTEXT_LENGTH={ctx}"
        if batch > 1:
            env += f" OLLAMA_NUM_PARALLEL={batch}"
        return f"{env} ollama serve  # then: ollama run {model_ref}"
    if runtime == "mlx":
        return f"mlx_lm.server --model {model_ref}"
    # Training and fine-tuning: one process per accelerator on every node.
    return (
        f"torchrun --nnodes {build.nodes} --nproc-per-node {build.accelerators_per_node} "
        f"<your training script>  # tensor {tp} x pipeline {pp} x data {replicas}"
    )


# Characters a model reference may keep in a command line. Names come from users (pasted
# configs, shared calculator links), so anything a shell would interpret ($, ;, `, quotes,
# spaces, ...) is replaced: a copied launch command must never run more than the runtime.
_UNSAFE = re.compile(r"[^A-Za-z0-9._/-]+")


@lru_cache(maxsize=1024)
def model_ref_for(model: str, runtime: str, precision: str) -> str:
    """What the command names: the repository id (or a slug of the model's name), and for
    llama.cpp a GGUF file name at the chosen quantisation (the closest GGUF type for a format
    GGUF lacks, as the finding says); shell-safe characters only."""
    base = model if "/" in model else model.lower()
    base = _UNSAFE.sub("-", base).strip("-/") or "model"
    if runtime == "llama.cpp":
        known = PRECISIONS.get(precision)
        file_type = gguf_file_type(known) if known else _UNSAFE.sub("-", precision.upper())
        return f"{base.rsplit('/', 1)[-1]}-{file_type}.gguf"
    return base
