"""How many calls to keep in flight: an adaptive window. Pure: no Django, no asyncio.

Why a window and not just a limit: a client cannot see a server's queue. llama.cpp with one
slot accepts sixteen connections and answers them one at a time; the fifteen others wait in
its queue, and their timeouts run while they wait (a timeout can only count from when a call
is sent). So the client itself must keep calls from queueing, from what it can observe:

- overload (429, 503, 504 and timeouts): multiplicative decrease, the window halves, at most
  once per window of calls (the calls of one burst report the same congestion);
- success: additive increase, one more call per window of successes, up to the ceiling (the
  run's share of its stated concurrency);
- with `auto` (no stated limit), the latency tells what the server's queue hides: a call that
  waited behind others takes longer per token than one served at once. Per window of calls the
  mean cost (seconds per completion token) is compared with the unqueued cost (measured at a
  window of one, or the lowest seen), which estimates how many calls are waiting
  (TCP Vegas's estimate: window x (1 - unqueued / now)). Under 0.5: grow (doubling at
  first, like TCP slow start); over 1.5: shrink to what the server serves plus one.
  A server with N slots thus settles at N or N + 1 calls in flight: its slots stay busy and
  no call waits long enough to time out.
- a call behind the others waits for their service before its own, and its deadline runs while
  it waits (a client cannot start it when the server does). The window never holds more calls
  than would let the last of them end within half its deadline: a one-slot local server
  writing 2,048 tokens at 10 a second (200 s a call, against a deadline of about 340 s) settles
  at one call in flight, not two, and no queued call times out while the server still computes it.

Every call is tagged with the window's epoch when it is sent; only calls sent under the current
window count towards the next decision, so a change is judged by its own effect.
"""

from __future__ import annotations

import math

# Calls per decision at least (a window of one would otherwise decide on a single call).
ROUND_MIN = 4
# Estimated calls waiting at the server (see above): below GROW_BELOW grow, above SHRINK_ABOVE shrink.
GROW_BELOW = 0.5
SHRINK_ABOVE = 1.5
# The share of a call's deadline that its time queued behind the window's other calls, plus its
# own service, may take.
DEADLINE_SHARE = 0.5


class AdaptiveWindow:
    """The number of calls a sender may have in flight, adjusted by what the calls report."""

    def __init__(self, *, ceiling: int, auto: bool = False, start: int | None = None):
        self.ceiling = max(1, int(ceiling))
        self.auto = auto
        self.limit = float(max(1, min(self.ceiling, start if start is not None else (1 if auto else self.ceiling))))
        self.slow_start = auto
        self.epoch = 0
        self.unqueued_cost: float | None = None
        self.overloads = 0
        self._costs: list[float] = []
        self._seconds: list[float] = []
        self._deadline: float | None = None

    @property
    def size(self) -> int:
        """Calls allowed in flight now: at least one, at most the ceiling."""
        return max(1, min(self.ceiling, int(self.limit)))

    def set_ceiling(self, ceiling: int) -> None:
        """A new bound (another worker joined or left the run); the window follows at once."""
        ceiling = max(1, int(ceiling))
        if ceiling == self.ceiling:
            return
        self.ceiling = ceiling
        if self.limit > ceiling or not self.auto:
            # A stated limit is what the researcher asked for: fill the new share at once.
            self.limit = float(ceiling) if not self.auto else min(self.limit, float(ceiling))
            self._next_epoch()

    def on_success(
        self, *, epoch: int, seconds: float, completion_tokens: int | None = None, deadline: float | None = None
    ) -> None:
        """A call sent under window `epoch` came back after `seconds`; `deadline` is the seconds it
        was allowed, all told (None: no deadline to keep queued calls within)."""
        if epoch != self.epoch:
            return
        tokens = completion_tokens if completion_tokens and completion_tokens > 0 else 1
        self._costs.append(max(seconds, 1e-6) / tokens)
        self._seconds.append(seconds)
        if deadline:
            self._deadline = min(self._deadline or deadline, deadline)
        if len(self._costs) < max(ROUND_MIN, self.size):
            return
        # The mean, not the median: by Little's law the mean time in the system is what grows
        # with the calls queued (a median jumps between the waves of a busy server).
        mean = sum(self._costs) / len(self._costs)
        if self.auto:
            self._decide_by_delay(mean, sum(self._seconds) / len(self._seconds))
        elif self.limit < self.ceiling:
            self.limit = min(float(self.ceiling), self.limit + 1)
        self._next_epoch()

    def on_overload(self, *, epoch: int) -> None:
        """A call sent under window `epoch` met a 429, 503, 504 or a timeout: halve, once per window."""
        self.overloads += 1
        if epoch != self.epoch:
            return
        self.limit = max(1.0, self.limit / 2)
        self.slow_start = False
        self._next_epoch()

    def _decide_by_delay(self, cost: float, seconds: float) -> None:
        size = self.size
        if size <= 1 or self.unqueued_cost is None:
            # One call in flight queues behind nothing of ours: its cost is the unqueued cost
            # (re-measured whenever the window is back at one, so a server that slows down
            # for everyone is not mistaken for a queue forever).
            self.unqueued_cost = cost
        self.unqueued_cost = min(self.unqueued_cost, cost)
        ratio = min(1.0, self.unqueued_cost / cost)
        waiting = size * (1 - ratio)
        if waiting < GROW_BELOW:
            self.limit = min(float(self.ceiling), self.limit * 2 if self.slow_start else self.limit + 1)
        elif waiting > SHRINK_ABOVE:
            self.slow_start = False
            self.limit = max(1.0, size * ratio + 1)
        else:
            self.slow_start = False
        # The calls the server serves at once, and how long one takes unqueued.
        served, service = max(1.0, size * ratio), seconds * ratio
        if self._deadline and not self._within_deadline(int(self.limit), served, service):
            self.slow_start = False
            fits = max(1, math.floor(served))
            while fits > 1 and not self._within_deadline(fits, served, service):
                fits -= 1
            self.limit = float(min(self.limit, fits))

    def _within_deadline(self, calls: int, served: float, service: float) -> bool:
        """Would the last of `calls` in flight, served `served` at a time, end within its share of
        the deadline?"""
        assert self._deadline is not None
        return math.ceil(calls / served) * service <= DEADLINE_SHARE * self._deadline

    def _next_epoch(self) -> None:
        self.epoch += 1
        self._costs = []
        self._seconds = []


def in_flight_resolve(requested: int | str | None, *, stated: int | None, auto_ceiling: int) -> tuple[int, bool]:
    """(calls in flight at most, auto?): the one rule for `auto` concurrency.

    `requested` is a whole number of at least 1 (checked by the caller), "auto", or None. None
    means the endpoint's `stated` limit, else auto; auto means the window finds the server's
    capacity by itself, bounded by `auto_ceiling` (settings.LLM_AUTO_MAX_IN_FLIGHT)."""
    if not requested:
        requested = stated or "auto"
    if requested == "auto":
        return int(auto_ceiling), True
    return int(requested), False
