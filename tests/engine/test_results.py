"""Result objects: deferred words read like ordinary fields (results.py, words.py)."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from app.engine import Workload, estimate
from app.engine.results import fill_memory, fill_plan

from .shapes import DESKTOP, LLAMA_70B, MIXTRAL, TWO_DGX_H200, spec

WORK = Workload(precision="int4", context_tokens=8192, batch=4)


def _words_first(build, model, workload):
    e = estimate(build, model, workload)
    e.findings, e.verdict, e.assumptions, e.plan.launch_command  # noqa: B018
    return e


def test_words_are_the_same_whichever_field_is_read_first():
    for build, model in ((DESKTOP, spec(LLAMA_70B)), (TWO_DGX_H200, spec(MIXTRAL))):
        words_first = dataclasses.asdict(_words_first(build, model, WORK))
        figures_first = estimate(build, model, WORK)
        figures_first.memory.total_gb, figures_first.cost.usd_per_hour  # noqa: B018
        assert dataclasses.asdict(figures_first) == words_first


def test_an_estimate_equals_its_copy_built_field_by_field():
    e = estimate(DESKTOP, spec(LLAMA_70B), WORK)
    rebuilt = dataclasses.replace(e)  # every field through the ordinary __init__
    assert rebuilt == e
    assert hash(rebuilt) == hash(e)
    assert rebuilt.plan.launch_command == e.plan.launch_command


def test_an_unread_estimate_survives_pickle_and_deepcopy():
    for clone in (pickle.loads(pickle.dumps(estimate(DESKTOP, spec(LLAMA_70B), WORK))),
                  copy.deepcopy(estimate(DESKTOP, spec(LLAMA_70B), WORK))):  # fmt: skip
        assert clone == _words_first(DESKTOP, spec(LLAMA_70B), WORK)


def test_words_state_the_plan():
    e = estimate(DESKTOP, spec(LLAMA_70B), WORK)
    assert e.fits
    # 4 x 24 GB cards over PCIe: vLLM's tensor parallel over all four, at batch 4.
    assert e.plan.launch_command == (
        "vllm serve test --tensor-parallel-size 4 --max-model-len 8192 "
        "--gpu-memory-utilization 0.9 --max-num-seqs 4"
    )
    assert e.verdict.startswith("Yes — ")
    assert any(f.message.startswith("Tensor parallel 4 over ") for f in e.findings)


def test_a_result_stays_frozen():
    e = estimate(DESKTOP, spec(LLAMA_70B), WORK)
    for obj, name in ((e, "verdict"), (e.plan, "launch_command"), (e.memory, "total_gb")):
        try:
            setattr(obj, name, "x")
        except dataclasses.FrozenInstanceError:
            continue
        raise AssertionError(f"{type(obj).__name__}.{name} could be set")


def test_inputs_hash_once_without_a_hash_field():
    w = Workload(precision="fp8", batch=8)
    assert "_hash" not in dataclasses.asdict(w)
    assert "_hash" not in dataclasses.asdict(spec(LLAMA_70B))
    same = Workload(precision="fp8", batch=8)
    assert hash(same) == hash(w) and same == w
    assert hash(dataclasses.replace(w, batch=8)) == hash(w)
    clone = pickle.loads(pickle.dumps(w))
    assert clone == w and hash(clone) == hash(w)
    assert {w: 1}[Workload(precision="fp8", batch=8)] == 1


def test_the_engine_fills_every_field_of_a_result():
    # A field added to a result class must be given where the engine builds it.
    with pytest.raises(TypeError):
        fill_memory(total_gb=1.0)
    with pytest.raises(TypeError):
        fill_plan(tensor_parallel=1)  # and the plan's words come from _words=
