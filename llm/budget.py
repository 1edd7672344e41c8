"""An endpoint's limits as one budget in the database, shared by every worker and every run.

Providers count calls in flight, requests per minute and tokens per minute per account, not
per process: two workers that each keep to the limits send twice them. So the limits live in
the database every worker already shares, one `SharedBudget` row per endpoint (its base URL
and key variable) or per run (its concurrency), and a worker takes from it before it sends:

- calls in flight are leased (`BudgetLease`): a worker holds a number of slots and sends at
  most that many calls at once; it asks for more only when its window has room, gets only
  slots no other live lease holds, and gives back what it does not use. A lease lapses unless
  renewed, so a worker killed with its slots out gives them back within LLM_BUDGET_LEASE_SECONDS.
  When holders want more than the limit, each is capped at an even share.
- requests and tokens per minute are token buckets (llm/pacing.py) whose levels and refill
  clock are in the row: they refill continuously and hold little, so that over any window of
  LLM_BURST_SECONDS or more the workers together send at most the window's share of the
  minute, as providers that quantise their limits count them. A worker sends what it was
  granted at once (llm/gate.py drops a grant held longer than the pacing allows).
- `not_before` holds every worker back after the provider said to wait (a 429's Retry-After,
  `x-ratelimit-remaining-*` at zero until its `x-ratelimit-reset-*`); the buckets are emptied
  then and refill only from that time.

Every change happens with the budget's row locked (PostgreSQL's row lock; SQLite's one writer,
IMMEDIATE transactions): two workers never both see the same free slot. A worker asks for all
the calls it can start at once, one transaction for many calls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from llm.calls import ChatRequest
from llm.models import BudgetLease, SharedBudget
from llm.pacing import Bucket, Pace, ask_ahead_seconds, booking_seconds, buckets_take

# Characters per token of ASCII text (other characters count one token each): an estimate
# that is never below what OpenAI-style tokenizers count for English or Chinese text.
ASCII_CHARS_PER_TOKEN = 4
# Tokens a message costs beyond its text (role and separators), as OpenAI documents.
TOKENS_PER_MESSAGE = 4


def window_seconds() -> float:
    """The provider's minute (settings.LLM_RATE_WINDOW_SECONDS, 60)."""
    return float(settings.LLM_RATE_WINDOW_SECONDS)


def burst_seconds() -> float:
    """The shortest window over which the minute's share is kept (settings.LLM_BURST_SECONDS, 1)."""
    return float(settings.LLM_BURST_SECONDS)


def lease_seconds() -> float:
    return float(settings.LLM_BUDGET_LEASE_SECONDS)


def text_tokens(text: str) -> int:
    """Tokens a text counts at most: a quarter per ASCII character, one per other character."""
    # Counted in C: a character loop in Python was a fifth of a waiting worker's CPU, as a
    # stream estimates its next calls on every wake.
    ascii_chars = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / ASCII_CHARS_PER_TOKEN) + (len(text) - ascii_chars)


def request_tokens(request: ChatRequest) -> int:
    """What a call counts against tokens per minute before it is sent: its prompt, estimated,
    plus the max_tokens it asks for (providers count both when the call arrives)."""
    prompt = sum(text_tokens(content) + TOKENS_PER_MESSAGE for _role, content in request.messages)
    return prompt + (request.max_tokens or 0)


@dataclass(frozen=True)
class BudgetLimits:
    """What a budget allows; None: no such limit."""

    key: str
    in_flight: int | None = None
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None

    @property
    def paced(self) -> bool:
        return bool(self.requests_per_minute or self.tokens_per_minute)

    @property
    def active(self) -> bool:
        return bool(self.in_flight or self.paced)


@dataclass(frozen=True)
class Grant:
    """What a worker got: the slots its lease holds now, how many of the calls it asked about
    it may send now (in order), its fair share of the in-flight limit (None: no cap), when it
    got none, how long to wait before asking again and, when the buckets granted some of the
    calls but not all, how long until the next one could be (`again`)."""

    slots: int
    calls: int
    share: int | None
    wait: float
    again: float = 0.0
    offsets: tuple[float, ...] = ()
    # How late after its moment a call granted may still be sent (llm/pacing.py, Pace.lateness).
    late: float = 0.0
    # The clock time (seconds since the epoch) the offsets count from: the moment the buckets
    # were read, so a worker places its calls where the buckets booked them, however long the
    # answer took to reach its event loop (counted from its arrival, a worker's calls slid
    # later by that delay and another's did not: two workers' calls met closer than the
    # buckets allow, and a provider counting over 2 s refused some).
    at: float = 0.0


def budget_row(key: str) -> int:
    """The budget's row id (made on first use)."""
    row, _created = SharedBudget.objects.get_or_create(key=key[:400])
    return row.pk


def _lock(budget_id: int) -> SharedBudget:
    # The row lock on PostgreSQL; on SQLite the IMMEDIATE transaction already holds the one write lock.
    return SharedBudget.objects.select_for_update().get(pk=budget_id)


def _fair_share(limit: int, leases: list[BudgetLease], holder: str) -> int | None:
    """An even split among the holders that want slots, when together they want more than the limit."""
    wanting = sorted(lease.holder for lease in leases if lease.wanted > 0)
    if holder not in wanting:
        wanting = sorted([*wanting, holder])
    if sum(lease.wanted for lease in leases) <= limit or len(wanting) <= 1:
        return None
    place = wanting.index(holder)
    return max(1, limit // len(wanting) + (1 if place < limit % len(wanting) else 0))


@transaction.atomic
def budget_acquire(
    *, budget_id: int, limits: BudgetLimits, holder: str, in_use: int, want: int, estimates: list[int]
) -> Grant:
    """Take what a worker may send now: `want` more slots than the `in_use` its calls hold (when
    the budget limits calls in flight) and, of the calls whose token `estimates` are given in
    order, as many as the requests and tokens per minute allow. The lease is renewed.

    Each ask holds the budget's row locked, so every worker waits for it: only what the ask
    needs is read and written (a budget of requests and tokens only has no leases to read; a
    lease is written when its slots change or a quarter of its time has gone; the buckets when
    something was taken from them): four or five statements, BEGIN and COMMIT included, where
    there were seven."""
    budget = _lock(budget_id)
    now = timezone.now()
    share = None
    mine: BudgetLease | None = None
    if limits.in_flight:
        leases = list(BudgetLease.objects.filter(budget_id=budget_id))
        expired = [lease.pk for lease in leases if lease.expires_at < now]
        if expired:
            BudgetLease.objects.filter(pk__in=expired).delete()
            leases = [lease for lease in leases if lease.expires_at >= now]
        mine = next((lease for lease in leases if lease.holder == holder), None)
        others = [lease for lease in leases if lease.holder != holder]
        free = max(0, limits.in_flight - sum(lease.slots for lease in others))
        share = _fair_share(limits.in_flight, [*others, BudgetLease(holder=holder, wanted=in_use + want)], holder)
        cap = min(free, share) if share is not None else free
        # Never below what the worker's calls already hold: those are out, whatever comes next.
        slots = max(in_use, min(in_use + want, cap))
        room = max(0, slots - in_use)
    else:
        slots, room = 0, len(estimates)
    calls, wait, again = min(room, len(estimates)), 0.0, 0.0
    offsets: tuple[float, ...] = ()
    late = 0.0
    if budget.not_before is not None and budget.not_before > now:
        calls, wait = 0, (budget.not_before - now).total_seconds()
    elif calls and limits.paced:
        calls, again, offsets, late = _take(budget, limits, now, estimates[:calls])
    if limits.in_flight:
        expires_at = now + timedelta(seconds=lease_seconds())
        renew_after = timedelta(seconds=lease_seconds() / 4)
        if mine is None:
            if slots or want:
                BudgetLease.objects.create(
                    budget_id=budget_id, holder=holder, slots=slots, wanted=in_use + want, expires_at=expires_at
                )
        elif (mine.slots, mine.wanted) != (slots, in_use + want) or mine.expires_at < expires_at - renew_after:
            BudgetLease.objects.filter(pk=mine.pk).update(slots=slots, wanted=in_use + want, expires_at=expires_at)
    return Grant(
        slots=slots, calls=calls, share=share, wait=wait, again=again, offsets=offsets, late=late, at=now.timestamp()
    )


def _paces(limits: BudgetLimits) -> tuple[Pace, ...]:
    minute, burst = window_seconds(), burst_seconds()
    return tuple(
        Pace(per_minute=limit, minute=minute, burst=burst)
        for limit in (limits.requests_per_minute, limits.tokens_per_minute)
        if limit
    )


def _take(
    budget: SharedBudget, limits: BudgetLimits, now: datetime, estimates: list[int]
) -> tuple[int, float, tuple[float, ...], float]:
    """How many of the calls the buckets grant (taken from them, booked up to half of the
    burst ahead), how long until asking again is worth it when not all, and when each granted
    call may go (the row is locked)."""
    paces = _paces(limits)
    levels = [
        level
        for level, limit in (
            (budget.requests_level, limits.requests_per_minute),
            (budget.tokens_level, limits.tokens_per_minute),
        )
        if limit
    ]
    # A budget never paced before starts full (its capacity: a burst's fraction, one call at least).
    at = budget.paced_at.timestamp() if budget.paced_at is not None else now.timestamp()
    buckets = tuple(Bucket(level=level if budget.paced_at is not None else math.inf, at=at) for level in levels)
    costs: list[tuple[float, ...]] = [
        tuple(
            float(cost)
            for cost, limit in ((1, limits.requests_per_minute), (estimate, limits.tokens_per_minute))
            if limit
        )
        for estimate in estimates
    ]
    take = buckets_take(
        buckets, paces=paces, now=now.timestamp(), costs=costs, horizon=booking_seconds(burst_seconds())
    )
    if take.calls:
        # Nothing taken, nothing written: the buckets filled from their last write give the same levels.
        after = iter(take.buckets)
        values: dict[str, object] = {"paced_at": datetime.fromtimestamp(take.buckets[0].at, tz=UTC)}
        if limits.requests_per_minute:
            values["requests_level"] = next(after).level
        if limits.tokens_per_minute:
            values["tokens_level"] = next(after).level
        SharedBudget.objects.filter(pk=budget.pk).update(**values)
    again = 0.0
    if take.wait:
        # Asked again a little before the next call's moment (llm/pacing.py, ASK_AHEAD_FRACTION),
        # not as soon as it comes within the booking: each ask then books several calls.
        burst = burst_seconds()
        again = take.wait + max(0.0, booking_seconds(burst) - ask_ahead_seconds(burst))
    return take.calls, again, take.offsets, take.late


def budget_renew(*, budget_id: int, holder: str, slots: int, wanted: int) -> None:
    """Keep the lease alive, holding `slots` (fewer gives slots back to the other workers).

    One statement, without the budget's lock: a worker renews with at most the slots it holds
    (llm/gate.py), and a worker that reads the lease before the update counts more slots taken
    than there are, never fewer."""
    BudgetLease.objects.filter(budget_id=budget_id, holder=holder).update(
        slots=slots, wanted=wanted, expires_at=timezone.now() + timedelta(seconds=lease_seconds())
    )


def budget_leave(*, budget_id: int, holder: str) -> None:
    """The worker holds nothing more of the budget."""
    BudgetLease.objects.filter(budget_id=budget_id, holder=holder).delete()


@transaction.atomic
def budget_hold_back(*, budget_id: int, seconds: float) -> None:
    """Every worker waits `seconds` from now before sending again (the provider said so)."""
    until = timezone.now() + timedelta(seconds=seconds)
    budget = _lock(budget_id)
    if budget.not_before is None or budget.not_before < until:
        # The buckets are empty at the end of the wait: what they held went into the calls refused.
        SharedBudget.objects.filter(pk=budget_id).update(
            not_before=until, paced_at=until, requests_level=0.0, tokens_level=0.0
        )
