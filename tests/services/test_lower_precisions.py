"""The precisions offered when the chosen one does not fit (recommend, estimate page)."""

from app.engine import PRECISIONS
from app.services.recommend import lower_precisions


def test_lower_precisions_have_fewer_bits_most_bits_first():
    names = lower_precisions("bf16")
    bits = [PRECISIONS[n].bits_per_weight for n in names]
    assert names and all(b < 16 for b in bits)
    assert bits == sorted(bits, reverse=True)


def test_mlx_weights_are_offered_only_to_someone_using_mlx():
    assert "int4-mlx" not in lower_precisions("bf16")
    assert "q4_0" in lower_precisions("bf16")
    assert lower_precisions("int4-mlx") == [
        n for n in lower_precisions("q4_k_m") if PRECISIONS[n].bits_per_weight < 4.5
    ]
