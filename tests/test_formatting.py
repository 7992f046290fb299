"""app.formatting: how every page, chart, Markdown export and CLI line writes a figure.

Expected strings are literals, never built with the formatters under test.
"""

import math
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

import pytest

from app import formatting as f

Formatter = Callable[[Any], str]


@pytest.mark.parametrize(
    ("value", "text"),
    [(12.3, "12.3 GB"), (96, "96 GB"), (2256.4, "2,256 GB"), (0.52, "0.52 GB")],
)
def test_gb_keeps_three_significant_digits_below_100(value: float, text: str) -> None:
    assert f.gb(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(2.41, "$2.41"), (1599, "$1,599"), (0.0032, "$0.0032"), (0, "$0.00"), (-5.5, "-$5.50")],
)
def test_usd_keeps_cents_under_100_dollars(value: float, text: str) -> None:
    assert f.usd(value) == text


@pytest.mark.parametrize(
    ("func", "value", "text"),
    [
        (f.int_commas, 1234567.4, "1,234,567"),
        (f.number, 0.012345, "0.0123"),
        (f.number, 123456.7, "123,457"),
        (f.number, 1.5, "1.5"),
        (f.number, 0, "0"),
        (f.tb, 1.23, "1.23 TB"),
        (f.tps, 41.27, "41.3 tokens/s"),
        (f.gbs, 3350, "3,350 GB/s"),
        (f.gbps, 400, "400 Gb/s"),
        (f.watts, 1050, "1,050 W"),
        (f.watts, 10200, "10.2 kW"),
        (f.params, 671e9, "671B"),
        (f.params, 8.03e9, "8.03B"),
        (f.params, 560e6, "560M"),
        (f.params, 1.2e12, "1.2T"),
        (f.bytes_si, 160_000, "160 kB"),
        (f.bytes_si, 1.3e6, "1.3 MB"),
        (f.bytes_si, 512, "512 B"),
        (f.microseconds, 1.5, "1.5 µs"),
        (f.joules, 0.42, "0.42 J"),
        (f.percent, 0.125, "12.5 %"),
        (f.tokens, 131072, "131,072 tokens"),
    ],
)
def test_figures_with_their_units(func: Formatter, value: float, text: str) -> None:
    assert func(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.035, "35 ms"),
        (1.234, "1.23 s"),
        (18.45, "18.4 s"),
        (18.449999, "18.4 s"),
        (5400, "90 min"),
        (12600, "3.5 h"),
        (259200, "3 days"),
    ],
)
def test_seconds_pick_a_readable_unit_and_three_significant_digits(
    value: float, text: str
) -> None:
    assert f.seconds(value) == text


def test_hours_read_like_seconds() -> None:
    assert f.hours(2.5) == "2.5 h"


@pytest.mark.parametrize(
    "func", [f.gb, f.usd, f.tps, f.seconds, f.watts, f.params, f.number, f.percent, f.tokens]
)
@pytest.mark.parametrize("value", [None, math.nan, math.inf])
def test_missing_and_non_finite_values_are_an_em_dash(func: Formatter, value: Any) -> None:
    assert func(value) == "—"


@pytest.mark.parametrize(
    ("func", "value", "text"),
    [
        (f.yes_no, True, "yes"),
        (f.yes_no, False, "no"),
        (f.yes_no, None, "—"),
        (f.humanize, "tensor_parallel", "tensor parallel"),
        (f.link_name, "nvlink", "NVLink"),
        (f.tier_name, "dgx", "DGX-class server"),
        (f.precision_label, "fp8", "FP8"),
        (f.precision_label, "q4_k_m", "Q4_K_M"),
        (f.precision_label, None, "—"),
        (f.iso_date, date(2025, 3, 1), "2025-03-01"),
        (f.iso_date, datetime(2025, 3, 1, 12, 0), "2025-03-01"),
    ],
)
def test_words_and_dates(func: Formatter, value: Any, text: str) -> None:
    assert func(value) == text


@pytest.mark.parametrize(
    ("func", "value", "text"),
    [
        (f.axis_number, 2000, "2,000"),
        (f.axis_number, 0.5, "0.5"),
        (f.axis_gb, 500, "500 GB"),
        (f.axis_gb, 2000, "2 TB"),
        (f.axis_usd, 20_000, "$20k"),
        (f.axis_usd, 1_500_000, "$1.5M"),
        (f.axis_usd, 500, "$500"),
    ],
)
def test_axis_ticks_are_plain(func: Formatter, value: float, text: str) -> None:
    assert func(value) == text


def test_vendor_gb_marks_the_label_and_converts_binary_gb_to_bytes() -> None:
    assert f.vendor_gb(96) == "96 GB (vendor)"
    assert f.vendor_gb_in_bytes(24) == "25.8 GB"  # 24 GiB = 25.77 x 10^9 bytes
    assert f.vendor_gb(None) == f.vendor_gb_in_bytes(None) == "—"
