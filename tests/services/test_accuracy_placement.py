"""Issue 14: the placement a measurement row states, as the accuracy service reads it."""

import pytest

from app.engine import Workload
from app.services.accuracy.placement import (
    needs_host_ram,
    offloads,
    published_placement,
    tensor_split,
)


def test_a_tensor_split_alone_is_not_offload():
    assert not offloads({"ts": "11,1"})
    assert not offloads(None) and not offloads({})
    assert offloads({"ngl": 25}) and offloads({"ts": "1,1", "n_cpu_moe": 12})


def test_tensor_split_reads_llama_cpp_separators():
    assert tensor_split("11,1") == (11.0, 1.0)
    assert tensor_split("19/20") == (19.0, 20.0)
    with pytest.raises(ValueError, match="not a list of numbers"):
        tensor_split("fast,slow")
    with pytest.raises(ValueError, match="no positive share"):
        tensor_split("0,0")


def test_the_published_placement_reaches_the_workload():
    work = published_placement(Workload(), {"ngl": 25, "ts": "2,1", "ot": "exps=CPU"})
    assert work.gpu_layers == 25 and work.cpu_moe_layers is None
    assert work.tensor_split == (2.0, 1.0)
    assert published_placement(Workload(), None) == Workload()


def test_the_prefill_of_an_experts_only_placement_needs_no_host():
    # Routed experts in RAM and every layer on the GPU: a micro-batch copies them over PCIe.
    prefill, decode = "prefill_tokens_per_s", "decode_tokens_per_s"
    assert not needs_host_ram(prefill, {"ngl": 99, "n_cpu_moe": 26}, 36)
    assert not needs_host_ram(prefill, {"ot_expert_layers_on_cpu": 80, "ot": "ffn=CPU"}, 94)
    assert needs_host_ram(decode, {"ngl": 99, "n_cpu_moe": 26}, 36)  # reads RAM every token


def test_whole_layers_or_unmodelled_keys_on_the_cpu_still_need_the_host():
    prefill = "prefill_tokens_per_s"
    assert needs_host_ram(prefill, {"ngl": 30}, 40)  # attention and KV of 10 layers on the CPU
    assert needs_host_ram(prefill, {"ngl": 20, "n_cpu_moe": 4}, 36)
    assert needs_host_ram(prefill, {"ngl": "auto (ollama)", "n_cpu_moe": 4}, 36)
    assert needs_host_ram(prefill, {"ngl": 99, "n_cpu_moe": 4, "no_kv_offload": True}, 36)
    assert not needs_host_ram(prefill, {"ts": "11,1"}, 48)  # a split alone keeps RAM out of it
