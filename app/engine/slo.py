"""The service level: which points meet it, M/M/c queueing, and the copies a load needs."""

from __future__ import annotations

import math
from dataclasses import replace

from .serving_inputs import ServiceLevel
from .serving_results import ServingPoint, SloPoint

# With a load but no TTFT limit, copies are sized to keep each below this utilisation, so the
# queue stays finite (M/M/c waits grow without bound as utilisation approaches 1).
DEFAULT_MAX_UTILIZATION = 0.9
# Under a requests/s load, a point whose TTFT leaves room for waiting only below this utilisation
# is not an operating point: copies would sit nearly idle (a lower concurrency serves better).
MIN_UTILIZATION = 0.05


def meets(point: ServingPoint, slo: ServiceLevel) -> bool:
    """True when the point is within every latency limit set."""
    if slo.ttft_s_max is not None and point.ttft_s > slo.ttft_s_max:
        return False
    if slo.itl_ms_max is not None and point.itl_ms > slo.itl_ms_max:
        return False
    return not (
        slo.tokens_per_s_per_user_min is not None
        and point.tokens_per_s_per_user < slo.tokens_per_s_per_user_min
    )


def mmc_wait_s(utilization: float, servers: int, service_s: float) -> float:
    """Mean wait for a slot in an M/M/c queue (Sakasegawa's approximation)."""
    if utilization >= 1.0:
        return math.inf
    if utilization <= 0.0:
        return 0.0
    exponent = math.sqrt(2.0 * (servers + 1)) - 1.0
    return service_s / servers * utilization**exponent / (1.0 - utilization)


def _max_utilization(point: ServingPoint, slo: ServiceLevel) -> float:
    """Highest utilisation whose queueing keeps TTFT within its limit (bisection)."""
    if slo.ttft_s_max is None:
        return DEFAULT_MAX_UTILIZATION
    slack = slo.ttft_s_max - point.ttft_s
    service_s = point.concurrency / point.requests_per_s
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if mmc_wait_s(mid, point.concurrency, service_s) <= slack:
            lo = mid
        else:
            hi = mid
    return lo


def size(point: ServingPoint, slo: ServiceLevel, accelerators: int) -> SloPoint | None:
    """Copies of the build a target load needs at this operating point.

    Concurrent users: each copy holds at most `concurrency` of them, so none waits for a slot.
    Requests per second: Poisson arrivals into `concurrency` slots per copy; copies are added
    until the mean wait for a slot fits inside the TTFT limit. None when the point leaves so
    little TTFT slack that copies would run below MIN_UTILIZATION (a lower concurrency fits).
    """
    copies: int | None = None
    utilization: float | None = None
    wait = 0.0
    if slo.concurrent_users is not None:
        copies = math.ceil(slo.concurrent_users / point.concurrency)
    if slo.requests_per_s is not None:
        cap = _max_utilization(point, slo)
        if cap < MIN_UTILIZATION:
            return None
        by_rate = max(1, math.ceil(slo.requests_per_s / (point.requests_per_s * cap) - 1e-9))
        copies = max(copies or 0, by_rate)
        utilization = slo.requests_per_s / (copies * point.requests_per_s)
        service_s = point.concurrency / point.requests_per_s
        wait = mmc_wait_s(utilization, point.concurrency, service_s)
    if wait > 0:
        point = replace(point, ttft_s=point.ttft_s + wait, queue_wait_s=wait,
                        e2e_latency_s=point.e2e_latency_s + wait)
    return SloPoint(
        point=point,
        copies_needed=copies,
        accelerators_needed=copies * accelerators if copies is not None else None,
        utilization=utilization,
    )


def better(a: SloPoint, b: SloPoint | None) -> bool:
    """Fewer copies first (when sized), then more throughput per copy."""
    if b is None:
        return True
    a_copies, b_copies = a.copies_needed, b.copies_needed
    if a_copies is not None and b_copies is not None and a_copies != b_copies:
        return a_copies < b_copies
    return a.point.tokens_per_s_total > b.point.tokens_per_s_total


def pick(points: tuple[ServingPoint, ...], slo: ServiceLevel, accelerators: int
         ) -> SloPoint | None:
    """The best point meeting the limits (highest throughput; fewest copies under a load)."""
    best: SloPoint | None = None
    for point in points:
        if meets(point, slo):
            candidate = size(point, slo, accelerators)
            if candidate is not None and better(candidate, best):
                best = candidate
    return best
