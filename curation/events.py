"""The one way a ReviewEvent is written: by the review queues' decisions and by the LLM steps
that put drafted and translated items in those queues."""

from collections.abc import Iterable

from django.contrib.auth.models import User

from curation.models import ReviewEvent


def review_event_record(
    *,
    action,
    case=None,
    item=None,
    actor: User | None = None,
    queue="",
    before=None,
    after=None,
    reason="",
    tags: Iterable[str] = (),
) -> ReviewEvent:
    """Record who did what to a case or an item, with the values before and after."""
    return ReviewEvent.objects.create(
        action=action,
        case=case,
        item=item,
        actor=actor,
        queue=queue,
        before=before or {},
        after=after or {},
        reason=reason,
        tags=list(tags),
    )
