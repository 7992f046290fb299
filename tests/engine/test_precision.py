"""Number formats: bits per weight and the rule of thumb (precision.py)."""

from __future__ import annotations

import pytest

from app.engine import PRECISIONS, rule_of_thumb_gb


def test_rule_of_thumb_deepseek_fp8_is_805_gb():
    assert rule_of_thumb_gb(671_000_000_000, "fp8") == pytest.approx(805, abs=1)


@pytest.mark.parametrize(
    ("name", "bits"),
    [
        ("q8_0", 34 * 8 / 32),  # 34 bytes per block of 32 weights (ggml-common.h)
        ("q4_0", 18 * 8 / 32),
        ("q6_k", 210 * 8 / 256),
    ],
)
def test_gguf_bits_per_weight_follow_block_layouts(name, bits):
    assert PRECISIONS[name].bits_per_weight == pytest.approx(bits, abs=0.01)


def test_q4_k_m_mixes_q4_k_and_q5_k_blocks():
    assert 144 * 8 / 256 < PRECISIONS["q4_k_m"].bits_per_weight < 176 * 8 / 256


@pytest.mark.parametrize(
    ("name", "bits"),
    [
        ("q4_1", 20 * 8 / 32),  # block_q4_1: fp16 delta + fp16 min + 16 nibble bytes per 32
        ("iq1_s", 50 * 8 / 256),  # block_iq1_s: fp16 d + 32 B qs + 8 uint16 qh per 256
        ("int4-mlx", 4 + (16 + 16) / 64),  # MLX affine: 16-bit scale and bias per 64 weights
    ],
)
def test_pure_formats_follow_their_block_layouts(name, bits):
    assert PRECISIONS[name].bits_per_weight == pytest.approx(bits)


@pytest.mark.parametrize(
    ("small", "medium", "block_bits"),
    [("q5_k_s", "q5_k_m", 176 * 8 / 256), ("q3_k_s", "q3_k_m", 110 * 8 / 256)],
)
def test_k_s_mixes_sit_between_their_block_and_the_k_m_mix(small, medium, block_bits):
    # _S keeps fewer tensors at a higher type than _M, more than the pure block.
    assert block_bits < PRECISIONS[small].bits_per_weight < PRECISIONS[medium].bits_per_weight


def test_every_format_names_a_source_and_a_known_compute_rate():
    for p in PRECISIONS.values():
        assert p.source, p.name
        assert p.compute in ("fp32", "fp16", "fp8", "int8", "fp4"), p.name
