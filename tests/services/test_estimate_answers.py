"""Engine results read into the typed answers: every figure as the engine gave it, non-finite
figures null, and the answer valid as its response model."""

import json
import math
from dataclasses import asdict, replace

import pytest

from app.engine import (
    AcceleratorSpec,
    BuildSpec,
    Estimate,
    FailoverCase,
    IntraNodeLink,
    Workload,
    estimate,
    model_spec_from_hf_config,
)
from app.schemas.estimate_answer import EstimateOut
from app.services import estimate_answers

from ..engine.shapes import LLAMA_8B as _CONFIG

_BUILD = BuildSpec("2x", AcceleratorSpec("card", 24, 936, 71), 1, 2, IntraNodeLink("pcie", 25))
_WORKLOAD = Workload(precision="int4")


def _answer(est: Estimate) -> EstimateOut:
    spec = model_spec_from_hf_config(_CONFIG, name="m")
    return estimate_answers.estimate_answer(
        est,
        build=_BUILD,
        model=spec,
        workload=_WORKLOAD,
    )


@pytest.fixture(scope="module")
def est() -> Estimate:
    return estimate(_BUILD, model_spec_from_hf_config(_CONFIG, name="m"), _WORKLOAD)


def test_the_answer_is_the_response_model_with_the_engine_figures(est: Estimate) -> None:
    answer = _answer(est)
    assert type(answer) is EstimateOut
    for part in ("memory", "plan", "cost", "throughput"):
        engine = asdict(getattr(est, part))
        typed = getattr(answer, part).model_dump()
        assert typed == {name: engine[name] for name in typed}  # the documented fields
    assert [(f.severity, f.message) for f in answer.findings] == [
        (f.severity, f.message) for f in est.findings
    ]
    assert answer.assumptions == list(est.assumptions)


def test_the_answer_round_trips_through_its_json(est: Estimate) -> None:
    answer = _answer(est)
    assert EstimateOut.model_validate_json(answer.model_dump_json()) == answer


def test_parts_built_by_their_constructors_answer_as_the_engine_built_ones(est: Estimate) -> None:
    # The answer reads memory, throughput and cost from their __dict__ (the engine's fill_*
    # stores only some fields there): copies made by the ordinary dataclass __init__ (replace)
    # hold every field, and must still give the same answer, byte for byte.
    rebuilt = replace(
        est, memory=replace(est.memory), throughput=replace(est.throughput), cost=replace(est.cost)
    )
    assert _answer(rebuilt).model_dump_json() == _answer(est).model_dump_json()


def test_non_finite_figures_become_null_and_the_rest_stay(est: Estimate) -> None:
    broken = replace(est, cost=replace(est.cost, joules_per_token=math.inf, usd_per_hour=math.nan))
    answer = _answer(broken)
    assert answer.cost.joules_per_token is None and answer.cost.usd_per_hour is None
    assert answer.cost.pue == est.cost.pue and answer.cost.price_usd == est.cost.price_usd
    assert answer.memory.total_gb == est.memory.total_gb
    assert json.loads(answer.model_dump_json())["cost"]["joules_per_token"] is None
    assert broken.cost.joules_per_token == math.inf  # the engine result itself is left alone


def test_a_non_finite_failover_speed_becomes_null() -> None:
    cases = [
        FailoverCase("one accelerator", 1, True, math.inf, 12.5, "TP1"),
        FailoverCase("one node", 0, False, None, None, "-"),
    ]
    out = estimate_answers.failover_out(cases)
    assert [c.decode_tokens_per_s for c in out] == [None, None]
    assert [c.aggregate_decode_tokens_per_s for c in out] == [12.5, None]
    assert [c.lost for c in out] == ["one accelerator", "one node"]
