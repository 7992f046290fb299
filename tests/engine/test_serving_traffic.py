"""The request-time formula shared by the serving curve and the accuracy report."""

import pytest

from app.engine.serving_traffic import Traffic, burst_queue_s, request_times, wave_mean_step

# A toy replica: a decode step of 10 ms, and prefill that never hides under it (step + x), so
# the figures can be checked by hand. A 1,000-token prompt alone takes 0.5 s (2,000 tokens/s).
STEP_S = 0.01


def _times(batch: int, output: int = 100, *, shared: float = 0.5, **traffic: object):
    return request_times(
        lambda x: STEP_S + x,
        prompt_tokens=1000, output_tokens=output, chunk_tokens=8192, prefill_rate=2000.0,
        shared_prefill_s=shared, batch=batch, traffic=Traffic(**traffic),  # type: ignore[arg-type]
    )


def test_one_request_is_its_prefill_then_its_steps() -> None:
    t = _times(1)
    # Its prompt rides one step (0.5 s + 10 ms); 99 more tokens, each 10 ms: alone in a closed
    # loop, the next prompt is sent only once this answer is done, so no prefill rides beside.
    assert t.ttft_s == pytest.approx(0.51)
    assert t.itl_s == pytest.approx(STEP_S)
    assert t.e2e_s == pytest.approx(0.51 + 99 * t.itl_s)
    assert t.queue_wait_s == 0.0


def test_the_batch_turning_over_stalls_every_step_with_prefill() -> None:
    # 4 in flight, 100 tokens each: the other 3 slots each take a new prompt during a
    # request's 99 decode steps (its own prompt ran in its TTFT).
    t = _times(4)
    assert t.prefill_per_step_s == pytest.approx(3 * 0.5 / 99)
    assert t.itl_s == pytest.approx(STEP_S + 3 * 0.5 / 99)
    # Without a published output length there is no turnover to spread over the tokens.
    assert _times(4, output=0).itl_s == pytest.approx(STEP_S)


def test_short_prompts_of_other_requests_share_prefill_passes() -> None:
    packed, alone = _times(4, shared=0.1, arrival="burst"), _times(4, arrival="burst")
    assert packed.itl_s < alone.itl_s
    # Its own prompt still takes 0.5 s; the three ahead of it 0.1 s each.
    assert packed.ttft_s == pytest.approx(0.51 + 0.1 * 3 / 2)
    assert packed.e2e_s < alone.e2e_s
    assert _times(4, shared=0.1).itl_s == pytest.approx(STEP_S + 3 * 0.1 / 99)


def test_a_steady_arrival_waits_half_a_step_for_the_batch_to_take_it() -> None:
    steady = _times(4)
    step = STEP_S + 3 * 0.5 / 99  # a decode step with the turnover's prefill in it
    assert steady.ttft_s == pytest.approx(0.51 + step / 2)
    assert _times(1).ttft_s == pytest.approx(0.51)  # alone: nothing running to wait for


def test_a_burst_queues_a_prompt_behind_half_the_others_without_changing_the_lifetime() -> None:
    burst = _times(4, arrival="burst")
    assert burst.ttft_s == pytest.approx(0.51 + 0.5 * 3 / 2)
    # The prompts ahead ran before it: its decode is stalled by that much less, and its time
    # in a slot is its own prefill plus its 99 turnover-stalled steps, as in a steady stream.
    steady_itl = STEP_S + 3 * 0.5 / 99
    assert burst.e2e_s == pytest.approx(0.51 + 99 * steady_itl)
    assert burst.itl_s < steady_itl


def test_requests_beyond_the_batch_wait_for_slots() -> None:
    base = _times(4)
    # 8 in flight, 4 fit: each lives two slot times, one of them waiting.
    queued = _times(4, in_flight=8)
    assert queued.e2e_s == pytest.approx(2 * base.e2e_s)
    assert queued.ttft_s == pytest.approx(base.ttft_s + base.slot_s)
    assert queued.itl_s == pytest.approx(base.itl_s)
    assert _times(4, in_flight=2).e2e_s == pytest.approx(base.e2e_s)  # fewer: no queue


def test_an_uncapped_burst_runs_in_sub_waves_of_the_batch_that_fits() -> None:
    burst = _times(4, arrival="burst")
    waves = _times(4, arrival="burst", wave=20)
    # 20 at once, 4 fit: 5 sub-waves; on average a request waits (5 - 1) / 2 slot times.
    assert waves.queue_wait_s == pytest.approx(2 * burst.slot_s)
    assert waves.ttft_s == pytest.approx(burst.ttft_s + 2 * burst.slot_s)


def test_a_long_prompt_runs_in_chunks_each_sharing_a_step() -> None:
    long = request_times(
        lambda x: STEP_S + x, prompt_tokens=20_000, output_tokens=100, chunk_tokens=8192,
        prefill_rate=2000.0, shared_prefill_s=10.0, batch=1,
    )
    # 8,192 + 8,192 + 3,616 tokens: three steps, each with its chunk's prefill.
    assert long.ttft_s == pytest.approx(3 * STEP_S + 20_000 / 2000.0)


def test_no_step_carries_more_prefill_than_the_token_budget_leaves() -> None:
    # 1,000 at once, 128-token prompts of 1 ms each (packed 64 a pass), 4 tokens out: the
    # turnover (999 x 1 ms / 3) less the prompts ahead (burst_queue_s, 530.5 ms, / 3) leaves on
    # average 156 ms of the prompts behind a request in each of its steps, spread from 0 (the
    # last served) to 312 ms (the first); a 8,192-token budget less the 1,000 decode tokens leaves
    # room for 7,192 prompt tokens, 56 ms, in a step. The cap binds on the early requests
    # only: the mean over the queue of min(room, U), U uniform on [0, 2 m], is
    # room - room^2 / (4 m).
    def times(budget: int | None):
        return request_times(
            lambda x: STEP_S + x, prompt_tokens=128, output_tokens=4, chunk_tokens=8192,
            prefill_rate=128_000.0, shared_prefill_s=0.001, batch=1000,
            traffic=Traffic(arrival="burst"), token_budget=budget,
        )
    bounded, unbounded = times(8192), times(None)
    room = (8192 - 1000) * 0.001 / 128
    behind = (999 * 0.001 - burst_queue_s(1000, 0.001, 64.0)) / 3
    assert behind == pytest.approx(0.156, rel=1e-2)
    assert bounded.itl_s == pytest.approx(STEP_S + room - room**2 / (4 * behind), rel=1e-2)
    # Capping the mean instead (every request at the room) overstated it.
    assert bounded.itl_s < STEP_S + room - 0.004
    assert bounded.itl_s < unbounded.itl_s
    assert bounded.ttft_s == pytest.approx(unbounded.ttft_s)  # the prompts ahead still queue
    # The budget moves prefill to later steps, it does not remove it: the batch's cycle (its
    # throughput) is the unbounded one, and a request's own e2e is TTFT + 3 x ITL.
    assert bounded.slot_s == pytest.approx(unbounded.slot_s)
    assert bounded.e2e_s == pytest.approx(bounded.ttft_s + 3 * bounded.itl_s)


def test_a_budget_with_room_for_the_turnover_changes_nothing() -> None:
    kwargs = dict(prompt_tokens=1000, output_tokens=100, chunk_tokens=8192, prefill_rate=2000.0,
                  shared_prefill_s=0.5, batch=4)
    for traffic in (Traffic(), Traffic(arrival="burst")):
        a = request_times(lambda x: STEP_S + x, traffic=traffic, **kwargs)  # type: ignore[arg-type]
        b = request_times(lambda x: STEP_S + x, traffic=traffic, token_budget=8192,
                          **kwargs)  # type: ignore[arg-type]
        assert (a.ttft_s, a.itl_s, a.e2e_s, a.slot_s) == pytest.approx(
            (b.ttft_s, b.itl_s, b.e2e_s, b.slot_s))


def test_a_cycle_of_the_batch_prefills_each_slot_s_prompt_once() -> None:
    # 4 slots, 0.5 s prompts: a slot's cycle holds 4 x 0.5 s of prefill (its own in its TTFT,
    # the other three in its decode steps) beside its 100 steps of 10 ms.
    t = _times(4, arrival="burst")
    assert t.slot_s == pytest.approx(100 * STEP_S + 4 * 0.5)
    assert _times(1).slot_s == pytest.approx(100 * STEP_S + 0.5)


def test_a_burst_prefilled_one_prompt_a_pass_waits_for_half_the_others() -> None:
    assert burst_queue_s(9, 0.5, 1.0) == pytest.approx(0.5 * 8 / 2)
    assert burst_queue_s(1, 0.5, 4.0) == 0.0  # alone: nothing ahead


def test_prompts_packed_into_one_pass_all_wait_for_the_whole_pass() -> None:
    # A budget that holds the whole burst: every prompt's first token comes when all are done.
    assert burst_queue_s(4, 0.5, 10.0) == pytest.approx(0.5 * 3)
    # Two prompts a pass, four prompts: two finish at 2 T, two at 4 T; mean 3 T, less its own.
    assert burst_queue_s(4, 0.5, 2.0) == pytest.approx(0.5 * 2)


def test_a_burst_s_first_tokens_follow_the_runtime_s_prefill_passes() -> None:
    def ttft(pass_tokens: int | None) -> float:
        return request_times(
            lambda x: STEP_S + x, prompt_tokens=1000, output_tokens=100, chunk_tokens=8192,
            prefill_rate=2000.0, shared_prefill_s=0.5, batch=4,
            traffic=Traffic(arrival="burst"), prefill_pass_tokens=pass_tokens,
        ).ttft_s
    assert ttft(None) == pytest.approx(0.51 + 0.5 * 3 / 2)
    assert ttft(8192) == pytest.approx(0.51 + 0.5 * 3)  # all four prompts in one pass
    assert ttft(1000) == pytest.approx(ttft(None))


def test_later_waves_of_a_closed_loop_meet_the_whole_turnover() -> None:
    # 4 slots, 16 requests sent through them: a request of the first wave is stalled only by
    # the prompts behind it (the burst); each later one also by the replacements of those ahead
    # of it, which finish first: the whole turnover of a steady stream. The mean: 3/4 of them.
    one_wave = _times(4, arrival="burst", in_flight=4)
    looped = _times(4, arrival="burst", in_flight=4, requests=16)
    steady = _times(4)
    assert looped.itl_s == pytest.approx(one_wave.itl_s / 4 + steady.itl_s * 3 / 4)
    assert one_wave.itl_s < looped.itl_s < steady.itl_s
    # The first token still waits behind its wave's prompts.
    assert looped.ttft_s == pytest.approx(one_wave.ttft_s)
    assert _times(4, arrival="burst", in_flight=4, requests=4).itl_s == one_wave.itl_s


def test_a_closed_loop_s_first_wave_queues_as_a_burst_the_rest_arrive_steadily() -> None:
    steady, burst = _times(4), _times(4, arrival="burst")
    # 4 of 40 requests (a client capped at 4 in flight sending 40 at no request rate) start
    # together into an idle replica: a tenth of the requests queue as a burst does.
    opening = _times(4, requests=40)
    step = STEP_S + 3 * 0.5 / 99
    assert opening.ttft_s == pytest.approx(0.9 * steady.ttft_s + 0.1 * (0.51 + 0.5 * 3 / 2))
    assert steady.ttft_s < opening.ttft_s < burst.ttft_s
    assert opening.ttft_s - steady.ttft_s == pytest.approx(0.1 * (0.5 * 3 / 2 - step / 2))
    # The later requests meet a running batch: the per-token figure is the steady stream's.
    assert opening.itl_s == pytest.approx(steady.itl_s)
    assert opening.slot_s == pytest.approx(steady.slot_s)
    # Every request sent at once is the burst's wait; a lone request has no one to wait for.
    assert _times(4, requests=4).ttft_s == pytest.approx(burst.ttft_s)
    assert _times(1, requests=1).ttft_s == pytest.approx(_times(1).ttft_s)
    # Without the request count published, the stream is taken as steady throughout.
    assert _times(4, requests=None).ttft_s == pytest.approx(steady.ttft_s)


def test_the_wave_mean_step_averages_over_the_queue_not_the_mean_capped() -> None:
    # A step that hides 20 ms of prefill (flat, then + x): 0.1 s behind on average, room 0.15 s.
    def step(x: float) -> float:
        return STEP_S + max(0.0, x - 0.02)

    # Nothing behind: a bare step; a room above the whole spread: the mean step is the
    # step's mean over U uniform on [0, 0.2], (0.2 - 0.02)^2 / 2 / 0.2 = 81 ms above it.
    assert wave_mean_step(step, 0.0, 0.15) == pytest.approx(STEP_S)
    assert wave_mean_step(step, 0.1, 1.0) == pytest.approx(STEP_S + 0.081, rel=1e-2)
    # The room caps the first-served requests, below the uncapped mean.
    capped = wave_mean_step(step, 0.1, 0.15)
    assert capped < wave_mean_step(step, 0.1, 1.0)
    expected = (0.13**2 / 2 + 0.13 * 0.05) / 0.2  # U in [0.02, 0.15] rises, then flat at 0.13
    assert capped == pytest.approx(STEP_S + expected, rel=1e-2)
    assert capped < step(min(0.15, 0.1))  # the old cap of the mean
