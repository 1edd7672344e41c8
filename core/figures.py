"""Stored figures: statistics computed in the background and served as stored.

Bradley-Terry with bootstrap intervals, agreement and leaderboards take seconds over 100,000
votes or judgments; a page must answer at once. So each app stores its figures in a row with
`payload`, the `inputs` they came from, `computed_at` and `refresh_queued_at`, and:

- pages and the API serve the stored row, saying when it was computed and whether the
  current inputs differ (newer votes or judgments are waiting);
- a change (a run closing, a page seeing newer inputs) asks for a refresh: one task is queued
  per DEBOUNCE window at most, and it runs DEBOUNCE seconds later, so a burst of changes
  costs one computation.

Every row's inputs carry FIGURES_VERSION, the version of the code that computed them: a change
to what the figures hold bumps it, so a row stored by older code reads as stale and is computed
again at its next read, not only after the next vote or judgment. Pages read a payload with
`.get` and a default, so a row from an older version still renders until it is recomputed.

These helpers are the shared mechanics; the rows and what they hold belong to each app.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.tasks import task_backends
from django.utils import timezone

# Bump when a change to judging/results/figures.py, annotation/figures.py or the statistics they
# call changes what a stored payload holds (a new statistic, a renamed key, another method).
FIGURES_VERSION = 1
INPUTS_VERSION_KEY = "figures_version"

# The priority of every figures refresh task: below every other task (django.tasks' default is 0).
# django-tasks-db's worker takes the ready task of highest priority, then the smallest `run_after`,
# and stores a task queued to run at once with a `run_after` of 9999-01-01. A debounced refresh is
# queued to run later, so once due it came before every task queued to run at once, however long
# that one had waited; while votes or judgments arrive some refresh is always due, and a judge
# run queued beside a voting crowd got no worker for minutes. A refresh loses nothing by waiting
# for other work: it is coalesced (one waiting per stored row) and computes from the inputs as
# they are when it starts.
REFRESH_TASK_PRIORITY = -10


def versioned_inputs(inputs: dict) -> dict:
    """A stored row's inputs with the version of the code computing its figures."""
    return {**inputs, INPUTS_VERSION_KEY: FIGURES_VERSION}


def figures_current_version(inputs: dict | None) -> bool:
    """Whether stored inputs were recorded by this version of the figures' code."""
    return isinstance(inputs, dict) and inputs.get(INPUTS_VERSION_KEY) == FIGURES_VERSION


def debounce() -> timedelta:
    return timedelta(seconds=float(settings.FIGURES_DEBOUNCE_SECONDS))


# A row's next refresh waits at least this many times as long as its last computation took, so
# that figures recomputed while votes keep coming hold a worker at most about a quarter of the
# time, not all of it (the reliability-aware BT of a few thousand votes takes over a minute).
REFRESH_SPACING = 3
# ...and never longer than this: figures a page shows as stale are computed within ten minutes.
REFRESH_DELAY_CAP = timedelta(minutes=10)


def refresh_delay(compute_seconds: float) -> timedelta:
    """How long after being asked a refresh runs: one debounce window, or longer for figures
    whose last computation was long (REFRESH_SPACING, at most REFRESH_DELAY_CAP)."""
    spaced = timedelta(seconds=REFRESH_SPACING * max(compute_seconds, 0.0))
    return min(max(debounce(), spaced), max(debounce(), REFRESH_DELAY_CAP))


def refresh_due_note(queryset, delay: timedelta) -> None:
    """Record on a row just claimed (refresh_claim) that its refresh is due only `delay` from now,
    when that is longer than a debounce window: refresh_claim takes a refresh still waiting six
    windows after it was due for one that never ran, and would otherwise queue a second."""
    if delay > debounce():
        queryset.update(refresh_queued_at=timezone.now() + delay)


def refresh_claim(queryset) -> bool:
    """Mark the figures row in `queryset` as having a refresh queued, unless one was queued in
    the last few debounce windows and has not run yet. True: the caller enqueues the task."""
    now = timezone.now()
    # A queued refresh that never ran (a worker was down) is asked for again after a while.
    recent = now - 6 * debounce()
    return bool(
        queryset.filter(Q(refresh_queued_at__isnull=True) | Q(refresh_queued_at__lt=recent)).update(
            refresh_queued_at=now
        )
    )


def enqueue_later(task, *args, at_once: bool = False, delay: timedelta | None = None) -> None:
    """Enqueue `task(*args)` to run one debounce window from now, or `delay` from now (figures
    never computed: at once, and so too on a backend that cannot defer, such as the immediate
    backend of tests)."""
    backend = task_backends[task.backend]
    if not at_once and backend.supports_defer and settings.FIGURES_DEBOUNCE_SECONDS > 0:
        task = task.using(run_after=timezone.now() + (delay if delay is not None else debounce()))
    task.enqueue(*args)


def freshness(*, stored_inputs: dict | None, current_inputs: dict, computed_at) -> dict:
    """What a page says about stored figures: when computed, and whether newer inputs wait."""
    return {
        "computed_at": computed_at,
        "stale": stored_inputs != current_inputs,
        "missing": computed_at is None,
    }


def stored_figures_read(
    *,
    stored: Any,
    current_inputs: dict,
    refresh: Callable[[], Any],
    schedule: Callable[[Any], bool],
    reload: Callable[[], Any],
    compute: str = "never",
) -> tuple[dict | None, dict]:
    """A stored figures row's payload and its freshness ({"computed_at", "stale", "missing"}):
    the one way pages, the API and exports read stored figures, whatever app keeps them.

    `stored` is the row (or None) with `payload`, `inputs` and `computed_at`; `current_inputs`
    what the figures would come from now. `compute`: "never" (a page shows what is stored),
    "missing" (the API: figures never computed are computed now, by `refresh()`), "stale" (the
    exports: what is returned matches the inputs as they are now). Stale or missing figures
    are then handed to `schedule(row)` for a background refresh (debounced; True if a task was
    queued), and `reload()` reads the row again in case that task already ran."""
    figures = stored
    # Figures stored by an older version of the code may lack what this one reads: the API and the
    # exports (which compute what is missing) compute them again, as they do figures never computed.
    missing = figures is None or figures.computed_at is None or not figures_current_version(figures.inputs)
    if (compute == "missing" and missing) or (compute == "stale" and (missing or figures.inputs != current_inputs)):
        figures = refresh()
    computed = figures is not None and figures.computed_at is not None
    state = freshness(
        stored_inputs=figures.inputs if computed else None,
        current_inputs=current_inputs,
        computed_at=figures.computed_at if figures is not None else None,
    )
    if state["stale"] and schedule(figures):
        # A backend that runs a task as it is queued (tests, a demo without a worker) has just
        # computed them: show what it stored rather than what was there before.
        figures = reload()
        computed = figures is not None and figures.computed_at is not None
        if computed:
            state = freshness(
                stored_inputs=figures.inputs, current_inputs=current_inputs, computed_at=figures.computed_at
            )
    return (figures.payload if computed else None), state


def json_safe(value):
    """Figures as JSON: objects with `as_dict` as dicts, tuples as lists, NaN and infinities as
    None (PostgreSQL's jsonb refuses them)."""
    if hasattr(value, "as_dict"):
        return json_safe(value.as_dict())
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return json_safe(value.item())
    return value
