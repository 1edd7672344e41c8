"""Stored figures: statistics computed in the background and served as stored.

Bradley-Terry with bootstrap intervals, agreement and leaderboards take seconds over 100,000
votes or judgments; a page must answer at once. So each app stores its figures in a row with
`payload`, the `inputs` they came from, `computed_at` and `refresh_queued_at`, and:

- pages and the API serve the stored row, saying when it was computed and whether the
  current inputs differ (newer votes or judgments are waiting);
- a change (a run closing, a page seeing newer inputs) asks for a refresh: one task is queued
  per DEBOUNCE window at most, and it runs DEBOUNCE seconds later, so a burst of changes
  costs one computation.

These helpers are the shared mechanics; the rows and what they hold belong to each app.
"""

from __future__ import annotations

import math
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.tasks import task_backends
from django.utils import timezone


def debounce() -> timedelta:
    return timedelta(seconds=float(settings.FIGURES_DEBOUNCE_SECONDS))


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


def enqueue_later(task, *args, at_once: bool = False) -> None:
    """Enqueue `task(*args)` to run one debounce window from now (figures never computed: at
    once; so too on a backend that cannot defer, such as the immediate backend of tests)."""
    backend = task_backends[task.backend]
    if not at_once and backend.supports_defer and settings.FIGURES_DEBOUNCE_SECONDS > 0:
        task = task.using(run_after=timezone.now() + debounce())
    task.enqueue(*args)


def freshness(*, stored_inputs: dict | None, current_inputs: dict, computed_at) -> dict:
    """What a page says about stored figures: when computed, and whether newer inputs wait."""
    return {
        "computed_at": computed_at,
        "stale": stored_inputs != current_inputs,
        "missing": computed_at is None,
    }


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
