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
