"""The Archive / Restore block of a dataset's, run's, campaign's or study's page."""

from django import template
from django.conf import settings

from core.archiving import archived_note

register = template.Library()


@register.inclusion_tag("includes/archive_block.html", takes_context=True)
def archive_block(context, obj, archive_url: str, restore_url: str):
    """`{% archive_block run archive_url restore_url %}`: the archived note with a Restore button
    on an archived object's page; an Archive button behind a confirmation on a live one's."""
    return {
        "obj": obj,
        "note": archived_note(obj) if obj.archived_at is not None else "",
        "archive_url": archive_url,
        "restore_url": restore_url,
        "days": settings.ARCHIVE_DAYS,
        "csrf_token": context.get("csrf_token"),
        # For the forms' drawn_workspace (templates/includes/drawn_workspace.html).
        "workspace_current": context.get("workspace_current"),
    }
