"""A No at the precision asked for names the answer at the precision the model is published in
(config.json quantization_config), e.g. gpt-oss-120b (MXFP4) asked for at fp8."""

from __future__ import annotations

from app.engine import (
    AcceleratorSpec,
    BuildSpec,
    HostSpec,
    Workload,
    estimate,
    model_spec_from_hf_config,
    ram_bandwidth_gbs,
)
from app.engine.params import published_precision

from .shapes import GPT_OSS_120B, LLAMA_8B

MXFP4 = {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]}
PUBLISHED = model_spec_from_hf_config(
    {**GPT_OSS_120B, "quantization_config": MXFP4}, name="gpt-oss-120b"
)
PLAIN = model_spec_from_hf_config(GPT_OSS_120B, name="gpt-oss-120b")
RTX4090 = AcceleratorSpec(
    "NVIDIA GeForce RTX 4090", 24, 1008, 165.2, fp8_tflops=330.3, tdp_w=450, price_usd=1599
)
HOST_64 = HostSpec("Ryzen 9 7950X", 16, 64, ram_bandwidth_gbs(2, 5600))
ONE_4090 = BuildSpec("4090 + 64 GB", RTX4090, host=HOST_64, price_usd=3000)


def _published(findings: tuple) -> list[str]:
    return [f.message for f in findings if "is published in" in f.message]


def test_quant_method_maps_onto_a_known_precision_or_none():
    assert PUBLISHED.published_precision == "mxfp4" and PLAIN.published_precision is None
    assert published_precision({"quantization_config": {"quant_method": "fp8"}}) == "fp8"
    assert published_precision({"text_config": {"quantization_config": MXFP4}}) == "mxfp4"
    assert published_precision({"quantization_config": {"quant_method": "awq"}}) is None


def test_fp8_no_on_a_24_gb_card_names_the_mxfp4_answer_from_its_own_estimate():
    answer = estimate(ONE_4090, PUBLISHED, Workload(precision="fp8"))
    assert not answer.fits
    at_mxfp4 = estimate(ONE_4090, PUBLISHED, Workload(precision="mxfp4"))
    assert at_mxfp4.fits and at_mxfp4.throughput is not None
    (message,) = _published(answer.findings)
    speed = f"{at_mxfp4.throughput.decode_tokens_per_s:,.1f} tokens/s"
    assert "published in MXFP4" in message and "at precision=mxfp4: Yes, with offload" in message
    assert speed in message and "(estimate)" in message
    # The answer itself is the fp8 one, unchanged but for the one finding.
    assert answer.memory.total_gb > at_mxfp4.memory.total_gb


def test_no_finding_when_it_fits_when_mxfp4_is_asked_for_or_nothing_is_published():
    assert not _published(estimate(ONE_4090, PUBLISHED, Workload(precision="mxfp4")).findings)
    small = model_spec_from_hf_config({**LLAMA_8B, "quantization_config": MXFP4}, name="8B")
    fitting = estimate(ONE_4090, small, Workload(precision="fp8"))
    assert fitting.fits and not _published(fitting.findings)
    plain = estimate(ONE_4090, PLAIN, Workload(precision="fp8"))
    assert not plain.fits and not _published(plain.findings)


def test_no_finding_when_the_published_format_is_not_smaller():
    # Asked for at q2_k (3.16 bits/weight) on a card without host RAM: MXFP4 (4.25) would not help.
    card_only = BuildSpec("4090", RTX4090, price_usd=1599)
    answer = estimate(card_only, PUBLISHED, Workload(precision="q2_k"))
    assert not answer.fits and not _published(answer.findings)
    # At bf16 on the same card neither fits: the finding says MXFP4 does not fit either.
    (message,) = _published(estimate(card_only, PUBLISHED, Workload(precision="bf16")).findings)
    assert "at precision=mxfp4: No, needs " in message
