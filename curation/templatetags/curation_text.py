"""Stored codes and English records of curation, shown in the reader's language."""

from django import template

from curation.reasons import exclusion_reason_text
from curation.review.history import history_value

register = template.Library()


@register.filter
def exclusion_reason(value: str) -> str:
    return exclusion_reason_text(value)


@register.filter
def language_name(code: str) -> str:
    """A detected language code ("en", "zh") by its name; "?" when none was detected."""
    return history_value("language", code) if code else "?"


@register.filter
def duplicate_kind(kind: str) -> str:
    return history_value("duplicate_kind", kind)


@register.filter
def format_problem(code: str) -> str:
    return history_value("format_error", code)
