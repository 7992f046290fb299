"""Recommend's service-level answer in words: the limits asked, and why a build misses them."""

from typing import Any

from app.formatting import int_commas, number, seconds


def _limit_texts(at_slo: dict[str, Any]) -> dict[str, str]:
    """Each latency limit given, in words, by its query parameter."""
    texts = {}
    if at_slo["ttft_s_max"] is not None:
        texts["ttft_s_max"] = f"time to first token ≤ {seconds(at_slo['ttft_s_max'])}"
    if at_slo["itl_ms_max"] is not None:
        texts["itl_ms_max"] = f"inter-token latency ≤ {number(at_slo['itl_ms_max'])} ms"
    if at_slo["tokens_per_s_per_user_min"] is not None:
        texts["tokens_per_s_per_user_min"] = (
            f"≥ {number(at_slo['tokens_per_s_per_user_min'])} tokens/s per user"
        )
    return texts


def slo_summary(at_slo: dict[str, Any]) -> str:
    """The service level asked: "time to first token ≤ 2 s, ≥ 20 tokens/s per user, for 50
    concurrent users"."""
    parts = list(_limit_texts(at_slo).values())
    text = ", ".join(parts) if parts else "no latency limit"
    if at_slo["concurrent_users"] is not None:
        text += f", for {int_commas(at_slo['concurrent_users'])} concurrent users"
    return text


def _measured(name: str, point: dict[str, Any]) -> str:
    if name == "ttft_s_max":
        return f"its first token takes {seconds(point['ttft_s'])}"
    if name == "itl_ms_max":
        return f"each token takes {number(point['itl_ms'])} ms"
    return f"it generates {number(point['tokens_per_s_per_user'])} tokens/s"


def miss_reason(miss: dict[str, Any], at_slo: dict[str, Any]) -> str:
    """Why a build meets the service level at no concurrency, naming the limit."""
    point = miss["one_request"]
    if point is None:
        return (
            "holds no request of these lengths in accelerator memory (the engine draws no "
            "serving curve for a model partly in host RAM)"
        )
    texts = _limit_texts(at_slo)
    limits = miss["limits"]
    missed = " and ".join(texts[name] for name in limits)
    alone = [name for name in limits if not _met(name, point, at_slo)]
    if not alone:
        return f"meets each limit alone but not {missed} together"
    evidence = "; ".join(_measured(name, point) for name in alone)
    return f"misses {missed}: even with one request, {evidence}"


def _met(name: str, point: dict[str, Any], at_slo: dict[str, Any]) -> bool:
    if name == "ttft_s_max":
        return bool(point["ttft_s"] <= at_slo["ttft_s_max"])
    if name == "itl_ms_max":
        return bool(point["itl_ms"] <= at_slo["itl_ms_max"])
    return bool(point["tokens_per_s_per_user"] >= at_slo["tokens_per_s_per_user_min"])
