"""Serialising engine results into API answers: the shallow copy says what asdict said."""

import math
from dataclasses import asdict, replace

from app.engine import (
    AcceleratorSpec,
    BuildSpec,
    IntraNodeLink,
    Workload,
    estimate,
    model_spec_from_hf_config,
)
from app.services import estimate_answers

_CONFIG = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "intermediate_size": 14336,
    "vocab_size": 128256,
}
_BUILD = BuildSpec("2x", AcceleratorSpec("card", 24, 936, 71), 1, 2, IntraNodeLink("pcie", 25))


def test_answer_parts_match_dataclasses_asdict() -> None:
    """Field for field and in order, what dataclasses.asdict gave before."""
    est = estimate(_BUILD, model_spec_from_hf_config(_CONFIG, name="m"), Workload(precision="int4"))
    for part in (est.memory, est.plan, est.cost):
        assert list(estimate_answers._flat(part).items()) == list(asdict(part).items())
        assert list(estimate_answers.clean_result(part)) == list(asdict(part))


def test_non_finite_figures_become_null_and_the_rest_stay() -> None:
    est = estimate(_BUILD, model_spec_from_hf_config(_CONFIG, name="m"), Workload(precision="int4"))
    broken = replace(est.cost, joules_per_token=math.inf, usd_per_hour=math.nan)
    cleaned = estimate_answers.clean_result(broken)
    assert cleaned["joules_per_token"] is None and cleaned["usd_per_hour"] is None
    assert cleaned["pue"] == est.cost.pue and cleaned["price_usd"] == est.cost.price_usd
    assert broken.joules_per_token == math.inf  # the engine result itself is left alone
