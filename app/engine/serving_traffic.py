"""How requests reach a replica and one request's times there (the request-time formula).

`request_times` is shared by the serving curve's points (a steady closed loop) and the accuracy
report's published runs (their benchmark's traffic); docs/engine.md, "Serving curves and SLOs".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Traffic:
    """How requests reach a replica. The curve's points are a steady closed loop of
    `concurrency` users; a published benchmark may instead send a burst, or keep more requests
    in flight than the KV cache holds (the runtime then queues the rest)."""

    # steady: arrivals spread over a request's lifetime, so a prompt meets only its own
    # prefill; burst / poisson: prompts arrive together and queue behind each other's prefill.
    arrival: str = "steady"
    in_flight: float | None = None  # requests in flight per replica, when more than its batch
    wave: float | None = None  # per replica: a burst sent with no cap on the requests in flight
    # per replica: every request the benchmark sent through its cap (None: one wave only). Those
    # beyond the first wave replace finished ones and meet the whole turnover (refill_share);
    # in a steady loop the first wave, sent at once, queues as a burst does.
    requests: float | None = None


STEADY = Traffic()


@dataclass(frozen=True, slots=True)
class RequestTimes:
    """One request's times at a replica's batch (seconds)."""

    ttft_s: float  # waiting for a slot and for the prompts ahead included
    itl_s: float
    e2e_s: float  # waiting included: TTFT + (output - 1) x ITL, as vllm bench serve reads it
    queue_wait_s: float  # waiting for a slot (requests beyond the batch)
    slot_s: float  # a slot's cycle: the batch runs `batch` requests per cycle (throughput)
    prefill_per_step_s: float  # other requests' prefill riding in each decode step


def request_times(
    step: Callable[[float], float],
    *,
    prompt_tokens: int,
    output_tokens: int,
    chunk_tokens: int,
    prefill_rate: float,
    shared_prefill_s: float,
    batch: int,
    gain: float = 1.0,
    traffic: Traffic = STEADY,
    token_budget: int | None = None,
    prefill_pass_tokens: int | None = None,
) -> RequestTimes:
    """A request's times under continuous batching with chunked prefill, from `step(x)`: a
    decode step of the replica's `batch` with `x` seconds of prefill riding in it.

    The batch turns over: while a request decodes, each of the other `batch - 1` slots finishes
    and takes a new prompt, so its decode steps carry `(batch - 1) x gain / (output - 1)`
    prompts each at `shared_prefill_s` (a prompt's share of a prefill pass the runtime packs
    with other prompts up to its token budget; `turnover_prefill_s`). The request's own prompt
    runs in chunks of `chunk_tokens`, each sharing a step with the running batch. A burst
    queues a prompt behind half the others' prefills, which then do not stall its decode (those
    behind it do, averaged over its place in the queue: `wave_mean_step`);
    requests beyond the batch wait for slots (closed loop: each lives in_flight / batch slot
    times; an uncapped burst runs in sub-waves of the batch, so a request waits for half the
    others). `output_tokens` 0 (unpublished): no turnover.

    `token_budget` (None: unbounded) is the most tokens one step processes, decode and prefill
    together (vLLM's max_num_batched_tokens): the scheduler runs the decode tokens first and
    fills what is left of the budget with waiting prompts, so no step carries more prefill.
    `prefill_pass_tokens` (None: one prompt a pass) is how many prompt tokens the runtime packs
    into one prefill pass of a burst (`burst_queue_s`)."""
    out = max(1, output_tokens)
    turnover = turnover_prefill_s(batch, gain, shared_prefill_s, output_tokens)
    room = prefill_room_s(token_budget, batch, prompt_tokens, shared_prefill_s)
    per_step = min(turnover, room)
    itl = step(per_step) / gain
    full, rest = divmod(prompt_tokens, chunk_tokens)
    first = full * step(chunk_tokens / prefill_rate)
    if rest or not full:
        first += step(rest / prefill_rate)
    per_pass = (prefill_pass_tokens or prompt_tokens) / max(1, prompt_tokens)
    opening = 0.0
    if traffic.arrival == "steady" and batch > 1:
        # Iteration-level scheduling (Orca): a prompt arriving while the batch decodes joins
        # at the next step boundary, on average half a step later.
        joins = step(per_step) / 2.0
        first += joins
        if traffic.requests is not None:
            # A closed loop's client sends its first wave (its cap, `in_flight`, of the
            # `requests`) at once, into an idle replica: those prompts queue behind each
            # other's prefill (burst_queue_s) instead of meeting a running batch; the later
            # ones (refill_share) arrive as slots free.
            share = 1.0 - refill_share(traffic.in_flight or batch, traffic.requests)
            opening = share * (burst_queue_s(batch, shared_prefill_s, per_pass) - joins)
    # The batch's whole turnover is prefilled within its cycle whatever the budget (a bound on
    # one step's prefill moves prompts to later steps, it does not remove them): throughput
    # and the wait for a slot run on this cycle, a request's own times on its tokens.
    cycle = first + (out - 1) * step(turnover) / gain
    first += opening
    if traffic.arrival != "steady":
        # The prompts ahead, and those packed into the same prefill pass, ran before its first
        # token, in its TTFT: they no longer stall its decode steps. The rest of the turnover's
        # prefill still rides in them, each step carrying at most what the token budget leaves
        # beside the decode tokens; with few output tokens that bound, not the turnover, sets
        # the ITL.
        queued = burst_queue_s(batch, shared_prefill_s, per_pass)
        first += queued
        if out > 1:
            behind = max(0.0, turnover - queued / (out - 1))
            itl = wave_mean_step(step, behind, room) / gain
            refill = refill_share(traffic.in_flight or batch, traffic.requests)
            if refill > 0.0:
                # A closed loop of more requests than its cap: a request of a later wave is
                # sent when one ahead of it finishes. Its decode is stalled by the prompts behind
                # it in its wave and by the replacements of those ahead of it, which finish
                # first: the whole turnover, as in a steady stream, while its first token
                # still waits behind its wave's prompts. Only the first wave has no
                # predecessors. The ITL is the mean over the requests.
                itl = (1.0 - refill) * itl + refill * step(per_step) / gain
    own = first + (out - 1) * itl
    # The opening wave happens once a run, not every cycle: the slot's cycle leaves it out.
    cycle = max(cycle, own - opening)
    waiting = 0.0
    if traffic.wave is not None and traffic.wave > batch:
        waiting = (traffic.wave / batch - 1.0) / 2.0 * cycle
    elif traffic.in_flight is not None and traffic.in_flight > batch:
        waiting = (traffic.in_flight / batch - 1.0) * cycle
    return RequestTimes(
        ttft_s=waiting + first, itl_s=itl, e2e_s=waiting + own, queue_wait_s=waiting,
        slot_s=cycle, prefill_per_step_s=per_step,
    )


# Midpoints over a burst's queue positions (wave_mean_step): the mean of a piecewise-linear
# step over a uniform spread, exact to well under a percent.
WAVE_POSITIONS = 16


def wave_mean_step(step: Callable[[float], float], behind_s: float, room_s: float) -> float:
    """The mean over a burst's requests of their decode step, when on average `behind_s`
    seconds of the prompts queued behind a request ride in each of its decode steps.

    The first prompt served has every other prompt behind it, the last none: what rides in a
    request's steps spreads evenly from 0 to `2 behind_s` over the queue, and each step carries
    at most `room_s` (the token budget's room). The cap binds on the early requests only, so
    capping the mean (min(room, behind)) overstated the ITL of a long queue in a small budget;
    the step is averaged over the queue instead."""
    if behind_s <= 0.0:
        return step(0.0)
    total = 0.0
    for i in range(WAVE_POSITIONS):
        total += step(min(room_s, 2.0 * behind_s * (i + 0.5) / WAVE_POSITIONS))
    return total / WAVE_POSITIONS


def refill_share(first_wave: float, requests: float | None) -> float:
    """The share of a closed loop's requests sent after its first wave (`first_wave` requests,
    the cap on those in flight); 0 without more requests than that."""
    if requests is None or requests <= first_wave:
        return 0.0
    return 1.0 - first_wave / requests


def burst_queue_s(batch: int, shared_prefill_s: float, prompts_per_pass: float) -> float:
    """Mean prefill seconds of the other prompts of a burst before a prompt's first token.

    The runtime packs waiting prompts into prefill passes of its token budget (vLLM's
    max_num_batched_tokens, SGLang's chunked_prefill_size, TensorRT-LLM's max_num_tokens),
    `k = budget / prompt` prompts a pass (at least one), and every prompt of a pass gets its
    first token when the pass ends. Of `b` prompts in `n = ceil(b / k)` passes, `k` finish at
    `j k T` (pass `j < n`) and the rest at `b T`: the mean is `T (k^2 n (n - 1) / 2 + (b - (n -
    1) k) b) / b`, less the prompt's own `T`. One prompt a pass gives `T (b - 1) / 2` (half the
    others ahead); a pass holding the whole burst `T (b - 1)` (every prompt waits for all)."""
    if batch <= 1:
        return 0.0
    k = min(max(1.0, prompts_per_pass), float(batch))
    n = math.ceil(batch / k)
    done = (k * k * n * (n - 1) / 2.0 + (batch - (n - 1) * k) * batch) / batch
    return shared_prefill_s * max(0.0, done - 1.0)


def turnover_prefill_s(
    batch: int, gain: float, shared_prefill_s: float, output_tokens: int
) -> float:
    """Prefill seconds in each of a request's decode steps from the other slots turning over.

    In a cycle of the batch every slot prefills one prompt: the request's own runs in its TTFT,
    the other `batch - 1` ride in its `(output - 1) / gain` decode steps. (Counting `batch`
    prompts there counted its own twice: alone in a closed loop, the next prompt is only sent
    once this answer is done, so nothing is prefilled beside its decode.) No decode steps, or
    no published output length: no turnover."""
    if output_tokens <= 1 or batch <= 1:
        return 0.0
    return (batch - 1) * gain * shared_prefill_s / (output_tokens - 1)


def prefill_room_s(
    token_budget: int | None, batch: int, prompt_tokens: int, shared_prefill_s: float
) -> float:
    """Seconds of prefill one step can carry: the token budget less the batch's decode tokens,
    at a packed prompt's seconds per token (vLLM's scheduler, docs.vllm.ai/en/v0.9.1
    "Optimization and Tuning", chunked prefill: decode requests are scheduled first, then
    pending prefills while max_num_batched_tokens has room). Unbounded without a budget."""
    if token_budget is None or prompt_tokens <= 0:
        return math.inf
    return max(0, token_budget - batch) * shared_prefill_s / prompt_tokens
