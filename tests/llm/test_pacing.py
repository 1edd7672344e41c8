"""The token buckets' arithmetic (llm/pacing.py), on a clock the test moves: what is granted over
any window of the burst's seconds or more stays within that window's share of the minute."""

import math
import random

import pytest

from llm.pacing import BURST_FRACTION, Bucket, Pace, bucket_fill, buckets_take, credit_seconds

RPM = Pace(per_minute=600, minute=60, burst=1.0)  # 10 a second
TPM = Pace(per_minute=480_000, minute=60, burst=1.0)  # 8,000 a second


def test_a_bucket_refills_at_the_rest_of_the_rate_up_to_a_bursts_fraction():
    empty = Bucket(level=0.0, at=100.0)
    assert BURST_FRACTION == 1 / 14
    assert RPM.capacity(1) == 1  # a fourteenth of 10 is less than a call: one call
    assert TPM.capacity(100) == pytest.approx(8000 / 14)  # a fourteenth of 8,000
    assert TPM.capacity(1000) == 1000  # one call more than that: the call
    half = bucket_fill(empty, pace=TPM, now=100.025, cost=100)
    assert half.level == pytest.approx(0.025 * 8000 * (1 - BURST_FRACTION))
    assert bucket_fill(empty, pace=TPM, now=200.0, cost=100).level == pytest.approx(8000 / 14)
    # A clock behind the bucket's (another host's) adds nothing and does not move it back.
    assert bucket_fill(empty, pace=TPM, now=99.0, cost=100) == empty


def test_calls_go_in_order_while_every_bucket_holds_them_and_the_wait_is_for_the_next():
    buckets = (Bucket(level=1.0, at=0.0), Bucket(level=500.0, at=0.0))
    take = buckets_take(buckets, paces=(RPM, TPM), now=0.0, costs=[(1, 100), (1, 100)])
    # One request in the bucket: the first call goes, the second when the next request is in.
    assert take.calls == 1
    assert [bucket.level for bucket in take.buckets] == [0.0, 400.0]
    assert take.wait == pytest.approx(1 / (10 * (1 - BURST_FRACTION)))
    # Tokens short: the wait is for them (100 more at the refill's 13/14 of 8,000 a second).
    take = buckets_take(
        (Bucket(level=5.0, at=0.0), Bucket(level=0.0, at=0.0)), paces=(RPM, TPM), now=0.0, costs=[(1, 100)]
    )
    assert (take.calls, take.wait) == (0, pytest.approx(100 / (8000 * (1 - BURST_FRACTION))))
    assert buckets_take(buckets, paces=(RPM, TPM), now=0.0, costs=[]).calls == 0


def test_calls_are_booked_ahead_up_to_the_horizon_at_the_moments_the_bucket_would_hold_them():
    full = (Bucket(level=1.0, at=0.0),)  # one request in the bucket, 10 x 13/14 a second after it
    take = buckets_take(full, paces=(RPM,), now=0.0, costs=[(1,)] * 8, horizon=0.25)
    step = 1 / (10 * (1 - BURST_FRACTION))
    assert take.calls == 3  # at once, then two more within the quarter second
    assert take.offsets == pytest.approx([0.0, step, 2 * step])
    assert take.buckets[0].level == pytest.approx(-2.0)
    assert take.wait == pytest.approx(3 * step - 0.25)
    # Asked again later, the booked calls are still counted: the next goes after the last booked.
    later = buckets_take(take.buckets, paces=(RPM,), now=0.1, costs=[(1,)], horizon=0.25)
    assert later.offsets == pytest.approx([3 * step - 0.1])
    # After a provider's wait (the bucket's clock ahead of now), bookings start at its end.
    held = buckets_take((Bucket(level=0.0, at=5.0),), paces=(RPM,), now=4.9, costs=[(1,)] * 3, horizon=0.25)
    assert held.offsets == pytest.approx([0.1 + step])
    assert held.wait == pytest.approx(0.1 + 2 * step - 0.25)


def test_a_call_above_the_minutes_limit_is_counted_as_the_whole_limit():
    small = Pace(per_minute=1000, minute=60, burst=1.0)
    take = buckets_take((Bucket(level=math.inf, at=0.0),), paces=(small,), now=0.0, costs=[(5000,)])
    assert take.calls == 1 and take.buckets[0].level == 0


def simulate(paces, costs_of, *, workers: int, seconds: float, seed: int):
    """Workers asking at random moments (each for up to 8 calls, when its last ask's wait is
    over, or sooner, or later) from one set of buckets, booking up to a quarter second ahead:
    every call granted, with the moment it may go."""
    chance = random.Random(seed)
    buckets = tuple(Bucket(level=math.inf, at=0.0) for _ in paces)
    grants: list[tuple[float, tuple[float, ...]]] = []
    asks = sorted((chance.uniform(0, 0.05), n) for n in range(workers))
    serial = 0
    while asks:
        now, worker = asks.pop(0)
        if now > seconds:
            continue
        wanted = [costs_of(serial + k) for k in range(chance.randint(1, 8))]
        take = buckets_take(buckets, paces=paces, now=now, costs=wanted, horizon=0.25)
        buckets = take.buckets
        # A booked call goes at its moment (never before: the gate holds its credit until then).
        grants += [(now + offset, cost) for offset, cost in zip(take.offsets, wanted, strict=False)]
        serial += take.calls
        # Asked again when the wait says, or a little later (a busy worker), or sooner (a call ended).
        again = take.wait * chance.choice([1.0, 1.0, 1.7, 0.3]) if take.wait else chance.uniform(0, 0.3)
        asks.append((now + max(again, 1e-4), worker))
        asks.sort()
    return grants


def worst_window(grants, length: float, dimension: int) -> float:
    """The most granted over any window [t, t + length) (the worst windows start at a grant)."""
    times = [at for at, _cost in grants]
    worst, end, inside = 0.0, 0, 0.0
    for start, (at, _cost) in enumerate(grants):
        while end < len(grants) and times[end] < at + length:
            inside += grants[end][1][dimension]
            end += 1
        worst = max(worst, inside)
        inside -= grants[start][1][dimension]
    return worst


@pytest.mark.parametrize("workers", [1, 2, 4, 16])
def test_no_window_of_a_burst_or_more_gets_more_than_its_share(workers):
    """Requests per minute and tokens per minute at once, calls of uneven size, any number of
    workers asking at any moment: over windows of 1, 1.5, 2, 10 and 60 seconds, what was granted
    is within the window's share, exactly, while the run goes at most 5 % under the limits."""
    sizes = random.Random(7)
    tokens = [sizes.choice([180, 250, 320]) for _ in range(200_000)]
    paces = (Pace(per_minute=1200, minute=60, burst=1.0), Pace(per_minute=240_000, minute=60, burst=1.0))
    # Tokens bind, at about 16 calls a second; requests could go at 20.

    def costs_of(n):
        return (1, tokens[n])

    grants = sorted(simulate(paces, costs_of, workers=workers, seconds=120.0, seed=workers))
    for length in (1.0, 1.5, 2.0, 10.0, 60.0):
        for dimension, pace in enumerate(paces):
            # Over a burst or more the share holds (over capacity / (fraction x rate) when one
            # call costs more than a burst's fraction); shorter windows get capacity + refill.
            share = pace.rate * length
            if length >= max(pace.burst, pace.capacity(320) / (pace.rate * BURST_FRACTION)):
                assert worst_window(grants, length, dimension) <= share + 1e-6, (length, dimension)
            else:
                assert worst_window(grants, length, dimension) <= pace.capacity(320) + pace.refill * length + 1e-6
    # Booked ahead, a late ask loses nothing of the refill: the run goes at its 90 %.
    granted_tokens = sum(cost[1] for _at, cost in grants if 10 <= _at < 110)
    assert granted_tokens >= (1 - BURST_FRACTION - 0.01) * 4000 * 100


def test_a_grant_sent_late_by_its_credit_time_is_within_two_bursts_share():
    """The gate drops a grant not sent within `credit_seconds`: the latest a grant goes out. Over
    two bursts' seconds, grants shifted that late still make at most the window's share."""
    paces = (RPM,)
    grants = sorted(simulate(paces, lambda n: (1,), workers=4, seconds=60.0, seed=3))
    late = credit_seconds(RPM.burst)
    # Each grant sent anywhere up to `late` after it: the worst is a window that catches the
    # late end of one stretch and the early start of the next, i.e. grants over 2 s + late.
    assert worst_window(grants, 2.0 + late, 0) <= RPM.rate * 2.0
