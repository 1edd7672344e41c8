"""The workspace a row belongs to, on a list across several of a person's workspaces."""

from django import template

register = template.Library()


@register.filter
def slug_in(workspace_id, slugs: dict) -> str:
    """`{{ row.workspace_id|slug_in:workspace_slugs }}`: the slug of that workspace ("" if unknown)."""
    return slugs.get(workspace_id, "") if isinstance(slugs, dict) else ""
