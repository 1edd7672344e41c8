"""A stream's side of the shared budgets (llm/budget.py): what it may send now without asking.

A stream holds a lease of slots and credits for calls granted from the requests and tokens
buckets, each from the moment the buckets booked it for (at once, or up to half a burst ahead);
it sends while they last and asks the database for more only when they run out (one round trip
for all the calls it could start), or, holding calls booked ahead, when the last of them is a
quarter burst away (llm/pacing.py, ASK_AHEAD_FRACTION): each ask then books several calls. A
credit is used at its moment, counted from when the buckets were read: one later than the
pacing allows (llm/pacing.py, `credit_seconds`) is dropped rather than sent late. Every few seconds the lease is renewed,
and slots the stream does not use (its window shrank, its share fell because another worker
joined, it has nothing left to send) go back to the others.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import math
import os
import time
import uuid
from collections import deque
from collections.abc import Callable, Sequence

from asgiref.sync import sync_to_async

from llm.budget import (
    BudgetLimits,
    budget_acquire,
    budget_hold_back,
    budget_leave,
    budget_renew,
    budget_row,
    burst_seconds,
    lease_seconds,
)
from llm.config import EndpointConfig
from llm.pacing import ask_ahead_seconds, credit_seconds

logger = logging.getLogger(__name__)

# A stream that asked for slots and got none asks again after this (or when a call of its own
# ends): not once per call while other workers hold the limit.
STARVED_SECONDS = 0.25


def account_key(base_url: str, api_key_env: str) -> str:
    """One provider account: a base URL and the variable of its key (never the key itself)."""
    return f"endpoint:{base_url.rstrip('/').lower()}|{api_key_env}"


def endpoint_budget(endpoint: EndpointConfig) -> BudgetLimits:
    """The budget every worker and run on this endpoint shares: its base URL and key variable."""
    return BudgetLimits(
        key=account_key(endpoint.base_url, endpoint.api_key_env),
        in_flight=endpoint.max_in_flight,
        requests_per_minute=endpoint.requests_per_minute,
        tokens_per_minute=endpoint.tokens_per_minute,
    )


class _Budget:
    def __init__(self, limits: BudgetLimits):
        self.limits = limits
        self.credit_seconds = credit_seconds(burst_seconds())
        self.id: int | None = None
        self.slots = 0
        self.share: int | None = None
        # When each credit granted may be used (monotonic seconds), earliest first.
        self.credits: deque[float] = deque()
        self.wait_until = 0.0
        self.starved_until = 0.0
        # When the lease was last written (an ask or a renewal) and with how many slots wanted.
        self.leased_at = -math.inf
        self.wanted = -1
        self.dropped = 0  # credits dropped unsent, too late for the pacing

    def room(self, in_use: int, now: float, *, booked: bool = False) -> float:
        """Calls that may start now; with `booked`, counting the credits booked for later too
        (what a stream need not ask for again)."""
        if now < self.wait_until:
            return 0
        room: float = math.inf
        if self.limits.in_flight:
            held = self.slots if self.share is None else min(self.slots, self.share)
            room = max(0, held - in_use)
        if self.limits.paced:
            while self.credits and now - self.credits[0] > self.credit_seconds:
                self.credits.popleft()  # too late to send: dropped
                self.dropped += 1
            room = min(room, len(self.credits) if booked else bisect.bisect_right(self.credits, now))
        return room


class Gates:
    """The shared budgets a stream's calls draw from (none: nothing is asked of the database)."""

    def __init__(self, endpoint: BudgetLimits, on_change: Callable[[], None], others: Sequence[BudgetLimits] = ()):
        # The endpoint's budget comes first, even with no limit: a provider's "wait" is kept there.
        self.budgets = [_Budget(endpoint), *(_Budget(limits) for limits in others if limits.active)]
        self.on_change = on_change
        self.holder = f"{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self.asking: asyncio.Task | None = None
        self.renewed_at = time.monotonic()
        self._background: set[asyncio.Task] = set()
        self.asked = 0  # transactions on a budget's row (asks and renewals), for the logs
        self.missed = False  # an ask came while another was under way

    def room(self, in_use: int) -> float:
        """Calls that may start now without asking the database."""
        now = time.monotonic()
        return min((budget.room(in_use, now) for budget in self.budgets), default=math.inf)

    def take(self, tokens: int) -> None:
        """A call starts: it spends one granted request and its tokens."""
        for budget in self.budgets:
            if budget.limits.paced:
                if budget.credits:
                    budget.credits.popleft()

    def ask(self, in_use: int, estimates: list[int]) -> None:
        """Ask for what the next `estimates` calls need (one at a time: a stream asks once)."""
        if not estimates:
            return
        if self.asking is None:
            self.asking = asyncio.create_task(self._ask(in_use, estimates))
        else:
            self.ask_again()

    def ask_again(self) -> None:
        """The stream wanted to ask while an ask was under way: it is woken when that one ends."""
        self.missed = True

    async def _ask(self, in_use: int, estimates: list[int]) -> None:
        # An ask that asks the database nothing changes nothing: it does not wake the stream. It
        # found a budget waiting (the provider's wait, or starved a moment ago: the timer set when
        # the wait began wakes it), or every budget already covering the calls (credits booked
        # for later: the timer set for each wakes it). Woken at once, the stream would ask again
        # at once, and so on until a timer: a worker waiting at its limit, or holding calls
        # booked a moment ahead, spun a core doing nothing.
        asked_database = False
        self.missed = False
        try:
            now = time.monotonic()
            # Budgets that only count calls in flight are asked first: a request or token of the
            # minute, once granted, is spent whether it is sent or not, while a slot that goes
            # unused is given back. Asked the other way round, a worker granted the minute's
            # calls by the endpoint could then get fewer slots from its run and waste the rest.
            if any(now < budget.wait_until for budget in self.budgets):
                estimates = []  # woken when the wait is over (call_later)
            for budget in sorted(self.budgets, key=lambda budget: budget.limits.paced):
                if not estimates:
                    break
                room = budget.room(in_use, now, booked=True)
                if room >= len(estimates):
                    continue
                if now < budget.starved_until:
                    estimates = estimates[: int(room)]
                    break
                asked_database = True
                if budget.id is None:
                    budget.id = await sync_to_async(budget_row)(budget.limits.key)
                # Calls its credits already cover are not asked for again: only the ones after them.
                covered = len(budget.credits) if budget.limits.paced else 0
                self.asked += 1
                asked_at = time.monotonic()
                grant = await sync_to_async(budget_acquire)(
                    budget_id=budget.id,
                    limits=budget.limits,
                    holder=self.holder,
                    in_use=in_use,
                    want=len(estimates),
                    estimates=estimates[covered:],
                )
                now = time.monotonic()
                # The lease was renewed: it holds for at least three quarters of its time from now.
                budget.leased_at, budget.wanted = asked_at, in_use + len(estimates)
                budget.slots, budget.share = grant.slots, grant.share
                if budget.limits.paced:
                    offsets = grant.offsets or (0.0,) * grant.calls
                    if grant.calls:
                        # A large call may be sent less late than a small one (llm/pacing.py).
                        most = credit_seconds(burst_seconds())
                        budget.credit_seconds = min(most, grant.late or most)
                    # The moments the buckets booked, on this clock (the offsets count from when
                    # the buckets were read, not from when the answer came back).
                    base = now + (grant.at - time.time()) if grant.at else now
                    budget.credits.extend(base + offset for offset in offsets)
                    if any(a > b for a, b in zip(budget.credits, list(budget.credits)[1:], strict=False)):
                        budget.credits = deque(sorted(budget.credits))
                    loop = asyncio.get_running_loop()
                    for offset in sorted({offset for offset in offsets if base + offset > now}):
                        loop.call_later(base + offset - now, self.on_change)  # the stream wakes when a credit is due
                if grant.wait:
                    budget.wait_until = now + grant.wait
                    asyncio.get_running_loop().call_later(grant.wait, self.on_change)
                elif budget.limits.paced and (grant.again or grant.calls):
                    # The buckets hold the next call after `again`; and while the calls booked
                    # reach further ahead than the ask's lead, the stream has calls to send and
                    # asks when the last of them is near: then it books several at once, where
                    # asking as each call ended booked them one by one (a transaction per call).
                    ahead = budget.credits[-1] - now - ask_ahead_seconds(burst_seconds()) if budget.credits else 0.0
                    pause = max(grant.again, ahead)
                    if pause > 0:
                        budget.starved_until = now + pause
                        asyncio.get_running_loop().call_later(pause, self.on_change)
                elif budget.room(in_use, now, booked=True) < len(estimates):
                    budget.starved_until = now + STARVED_SECONDS
                    asyncio.get_running_loop().call_later(STARVED_SECONDS, self.on_change)
                # What a later budget is asked for is what this one allows.
                allowed = budget.room(in_use, now, booked=True)
                if allowed < len(estimates):
                    estimates = estimates[: int(allowed)]
                if not estimates:
                    break
        finally:
            self.asking = None
            if asked_database or self.missed:
                self.on_change()

    async def renew(self, *, in_use: int, wanted: int) -> None:
        """Renew the leases (a few times per lease), giving back the slots not needed now."""
        now = time.monotonic()
        if now - self.renewed_at < min(1.0, lease_seconds() / 4):
            return
        self.renewed_at = now
        for budget in self.budgets:
            if budget.id is None or not budget.limits.in_flight:
                continue
            keep = max(in_use, min(budget.slots, wanted, budget.share or budget.slots))
            if (keep, wanted) == (budget.slots, budget.wanted) and now - budget.leased_at < lease_seconds() / 4:
                continue  # an ask renewed it a moment ago, holding as much
            # Given back only after the database says so; taken back at once, so never over.
            self.asked += 1
            await sync_to_async(budget_renew)(budget_id=budget.id, holder=self.holder, slots=keep, wanted=wanted)
            budget.slots, budget.leased_at, budget.wanted = keep, now, wanted

    def hold_back(self, seconds: float) -> None:
        """The provider said to wait: this stream waits at once, every worker once it is written."""
        if seconds <= 0:
            return
        until = time.monotonic() + seconds
        for budget in self.budgets[:1]:  # the endpoint's budget: a run's has no provider behind it
            if until <= budget.wait_until + 0.05:
                return
            budget.wait_until = until
            asyncio.get_running_loop().call_later(seconds, self.on_change)
            task = asyncio.create_task(self._hold_back(budget, seconds))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _hold_back(self, budget: _Budget, seconds: float) -> None:
        if budget.id is None:
            budget.id = await sync_to_async(budget_row)(budget.limits.key)
        await sync_to_async(budget_hold_back)(budget_id=budget.id, seconds=seconds)

    async def close(self) -> None:
        """Give every slot back."""
        if self.asking is not None:
            await asyncio.wait([self.asking])
        if self._background:
            await asyncio.wait(list(self._background))
        for budget in self.budgets:
            if budget.id is not None:
                await sync_to_async(budget_leave)(budget_id=budget.id, holder=self.holder)
        if self.asked:
            logger.info(
                "shared budgets: %d transactions, %d grants dropped too late to send",
                self.asked,
                sum(budget.dropped for budget in self.budgets),
            )
