"""Requests and tokens per minute as a token bucket: the arithmetic, pure (no Django, no clock).

Providers quantise their limits: 60,000 requests a minute may be enforced as 1,000 a second.
A budget that hands out the minute's allowance at once is refused for most of it. So each
limit is a bucket that refills continuously and holds little:

- it refills at REFILL_SHARE of the limit's rate (the limit per minute / the minute's seconds);
- it holds at most `capacity`: BURST_FRACTION of what the limit allows over `burst` seconds
  (settings.LLM_BURST_SECONDS), or one call when a call is more than that;
- a call goes when the bucket holds its cost (one request; its estimated tokens), and takes it.

What is granted over any window of T seconds is then at most capacity + refill x T, and with
capacity = f x rate x burst and refill = (1 - f) x rate that is at most rate x T for every
window of `burst` seconds or more (or of capacity / (f x rate) when one call is more than a
burst's fraction): never above the window's share of the minute. The refill is what that costs:
a run at its limit goes at (1 - f) of it. And a window longer than the burst leaves room for
the moment between a grant and its send: over two bursts' seconds, a grant sent up to
f x burst / (1 - f) seconds late is still within the share (the gate drops credit older than
`credit_seconds`).

The bucket's level and the time it was last filled live in the budget's row (llm/budget.py),
read and written with the row locked: every worker draws from one bucket.
"""

from __future__ import annotations

from dataclasses import dataclass

# The bucket's capacity as a fraction of the burst's share; the refill is the rest of the rate,
# so a run at its limit goes at 13/14 of it. A grant may then go up to f / (1 - f) of a burst late
# (Pace.lateness) and still keep a provider's two-burst windows. The fraction trades those two:
# at a tenth, two and four workers took 1.17x the time a 2-second provider allows (the refill's
# 0.9 alone is 1.11x); at a fourteenth 1.13x on a quiet machine; at a twentieth, workers on a
# loaded machine (load 19) dropped so many late grants that a run took 1.77x.
BURST_FRACTION = 1 / 14
REFILL_SHARE = 1 - BURST_FRACTION
# How far ahead a worker books calls, as a fraction of the burst (half a second by default), and
# how far ahead of the next call's moment it asks again (a quarter): each ask then books at least
# a quarter burst of calls (about five at 1,200 a minute) instead of the one call that had just
# come within reach, and a worker that wakes late still asks before the bucket could overflow.
# At a quarter and asking as soon as one call came within reach, two workers at 1,200 a minute
# asked the database about twice per call.
BOOKING_FRACTION = 1 / 2
ASK_AHEAD_FRACTION = 1 / 4


# A grant is never dropped sooner than this after its moment (an event loop's wake-up).
MIN_LATENESS_SECONDS = 0.01


def booking_seconds(burst: float) -> float:
    return burst * BOOKING_FRACTION


def ask_ahead_seconds(burst: float) -> float:
    """How long before the next call's moment a worker that was not granted it asks again."""
    return burst * ASK_AHEAD_FRACTION


@dataclass(frozen=True)
class Bucket:
    """A bucket's level (requests or tokens) and when it was last filled (seconds, any epoch)."""

    level: float
    at: float


@dataclass(frozen=True)
class Pace:
    """One limit: `per_minute` over a minute of `minute` seconds, bursts of `burst` seconds."""

    per_minute: float
    minute: float
    burst: float

    @property
    def rate(self) -> float:
        """The limit per second."""
        return self.per_minute / self.minute

    @property
    def refill(self) -> float:
        return self.rate * REFILL_SHARE

    def capacity(self, cost: float) -> float:
        """What the bucket may hold when the next call costs `cost`."""
        return max(self.rate * self.burst * BURST_FRACTION, cost)

    def lateness(self, cost: float) -> float:
        """How late a grant may be sent and a window of two bursts still get no more than its
        share: capacity + refill x (2 bursts + lateness) <= rate x 2 bursts. BURST_FRACTION of a
        burst for calls within the bucket's fraction, less for a call larger than that (down to
        MIN_LATENESS_SECONDS, for a call larger than two bursts' share by itself)."""
        room = (2 * self.rate * self.burst - self.capacity(cost)) / self.refill - 2 * self.burst
        return min(self.burst * BURST_FRACTION, max(MIN_LATENESS_SECONDS, room))


def bucket_fill(bucket: Bucket, *, pace: Pace, now: float, cost: float) -> Bucket:
    """The bucket at `now`: refilled since it was last, up to its capacity. A clock behind the
    bucket's (another host's) adds nothing and never moves the bucket's time back."""
    elapsed = max(0.0, now - bucket.at)
    return Bucket(level=min(pace.capacity(cost), bucket.level + elapsed * pace.refill), at=max(now, bucket.at))


@dataclass(frozen=True)
class Take:
    """What a set of buckets granted: how many of the calls asked (in order), when each may be
    sent (seconds from now, 0 for at once), the buckets after, and, when not every call was
    granted, how long until it is worth asking again (0: all were)."""

    calls: int
    buckets: tuple[Bucket, ...]
    wait: float
    offsets: tuple[float, ...] = ()
    # How late after its moment a granted call may still be sent (Pace.lateness of the largest).
    late: float = 0.0


def buckets_take(
    buckets: tuple[Bucket, ...],
    *,
    paces: tuple[Pace, ...],
    now: float,
    costs: list[tuple[float, ...]],
    horizon: float = 0.0,
) -> Take:
    """Grant calls in order (`costs[i][j]`: call i's cost in bucket j, e.g. (1 request, its
    tokens)), each at the moment every bucket holds its cost: at once while they hold it, or up
    to `horizon` seconds ahead, booked against the refill (the level goes below zero: the
    moments a bucket would have held them). A booked call is sent at its moment, never before,
    so what goes out is what a bucket taken at those moments allows; a worker asks once for the
    next `horizon` seconds instead of once per call, and a late ask loses nothing of the refill.
    A call costing more than a minute's limit is counted as the whole limit."""
    if not costs:
        return Take(calls=0, buckets=buckets, wait=0.0)
    costs = [tuple(min(cost, pace.per_minute) for cost, pace in zip(call, paces, strict=True)) for call in costs]
    filled = [
        bucket_fill(bucket, pace=pace, now=now, cost=cost)
        for bucket, pace, cost in zip(buckets, paces, costs[0], strict=True)
    ]
    start = max((bucket.at for bucket in filled), default=now)  # after a provider's wait: from its end
    levels = [bucket.level for bucket in filled]
    offsets: list[float] = []
    wait = 0.0
    for call in costs:
        # When every bucket holds this call's cost, counting the refill from `start`.
        due = start + max(
            (max(0.0, cost - level) / pace.refill for level, cost, pace in zip(levels, call, paces, strict=True)),
            default=0.0,
        )
        if due - now > horizon + 1e-9:
            wait = max(1e-3, due - now - horizon)
            break
        offsets.append(max(0.0, due - now))
        levels = [level - cost for level, cost in zip(levels, call, strict=True)]
    after = tuple(Bucket(level=level, at=bucket.at) for level, bucket in zip(levels, filled, strict=True))
    late = 0.0
    if offsets:
        granted = costs[: len(offsets)]
        late = min((pace.lateness(max(call[j] for call in granted)) for j, pace in enumerate(paces)), default=0.0)
    return Take(calls=len(offsets), buckets=after, wait=wait, offsets=tuple(offsets), late=late)


def credit_seconds(burst: float) -> float:  # the most a grant may be late, calls within the fraction
    """How long a stream may hold a grant before sending it: a grant sent later is dropped (see
    the module's text: over two bursts' seconds this lateness is within the share)."""
    return burst * BURST_FRACTION
