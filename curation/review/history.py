"""A case's or an item's history as people read it: the recorded field names and coded values
(review events keep them in English and as codes, for the record and the exports) in the
reader's language."""

from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _

from curation.choices import Language
from curation.models import Case, ReviewEvent
from curation.pii.entities import entity_label
from curation.reasons import exclusion_reason_text

TAG_LABELS = {
    "coherence": gettext_lazy("Coherence"),
    "diversity": gettext_lazy("Diversity"),
    "factual_illusion": gettext_lazy("Factual illusion"),
    "excessive_localisation": gettext_lazy("Excessive localisation"),
}

# Every key a review event records (curation/review/services.py, curation/datasets/services.py).
FIELD_LABELS = {
    "review_status": gettext_lazy("Review status"),
    "question": gettext_lazy("Question"),
    "conversation_edited": gettext_lazy("Conversation edited"),
    "pii_confirmed": gettext_lazy("Confirmed as not personal information"),
    "reference": gettext_lazy("Reference answer"),
    "draft": gettext_lazy("LLM draft"),
    "model": gettext_lazy("Model"),
    "translation": gettext_lazy("Translation"),
    "localised": gettext_lazy("Localised version"),
    "dataset": gettext_lazy("Dataset"),
    "copied_from": gettext_lazy("Copied from"),
    "version": gettext_lazy("Version"),
    "excluded": gettext_lazy("Excluded"),
    "exclusion_reason": gettext_lazy("Exclusion reason"),
    "format_error": gettext_lazy("Format problem"),
    "first_question": gettext_lazy("First question"),
    "language": gettext_lazy("Language"),
    "duplicate_of": gettext_lazy("Duplicate of case"),
    "duplicate_kind": gettext_lazy("Kind of duplicate"),
    "similar_case": gettext_lazy("Similar to case"),
    "pii_hints": gettext_lazy("Personal information hints"),
}

DUPLICATE_KINDS = {"exact": gettext_lazy("exact"), "near": gettext_lazy("near")}

# curation.conversation.parse_turns's format errors.
FORMAT_PROBLEMS = {
    "empty": gettext_lazy("empty"),
    "no_speaker_labels": gettext_lazy("no “Question:” and “Answer:” labels"),
    "no_question": gettext_lazy("no question"),
    "no_answer": gettext_lazy("no answer"),
    "text_before_first_label": gettext_lazy("text before the first label"),
}


def _list_separator() -> str:
    return "、" if (get_language() or "").startswith("zh") else ", "


def history_value(key: str, value) -> str:
    """One recorded value in words; None (not set) as nothing."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    if isinstance(value, list):
        shown = [entity_label(entry) if key == "pii_confirmed" else str(entry) for entry in value]
        return _list_separator().join(shown)
    text = str(value)
    if key == "review_status":
        return str(dict(Case.ReviewStatus.choices).get(text, text))
    if key == "language":
        return str(dict(Language.choices).get(text, text))
    if key == "duplicate_kind":
        return str(DUPLICATE_KINDS.get(text, text))
    if key == "format_error":
        return str(FORMAT_PROBLEMS.get(text, text))
    if key == "exclusion_reason":
        return exclusion_reason_text(text)
    return text


def history_rows(events: list[ReviewEvent]) -> list[dict]:
    """Each event with its changes as (field label, before, after) and its tags in words."""
    rows = []
    for event in events:
        keys = sorted(set(event.before) | set(event.after))
        rows.append(
            {
                "event": event,
                "reason": exclusion_reason_text(event.reason),
                "tags": _list_separator().join(str(TAG_LABELS.get(tag, tag)) for tag in event.tags or []),
                "changes": [
                    (
                        str(FIELD_LABELS.get(key, key)),
                        history_value(key, event.before.get(key)),
                        history_value(key, event.after.get(key)),
                    )
                    for key in keys
                ],
            }
        )
    return rows
