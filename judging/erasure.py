"""What judging made from a withdrawn participant's question: candidate answers and judge replies.

Registered with core.erasure; curation's `participant_withdraw` calls it before the items become
tombstones (or are deleted). Scores stay (numbers, not the participant's words), so leaderboards
of frozen versions remain as published; the texts are replaced.
"""

from django.db.models import OuterRef, Subquery

from core.erasure import WITHDRAWN, item_eraser
from judging.models import Answer, Judgment
from llm.cache import CACHE_CHUNK
from llm.models import LLMResponse


@item_eraser
def judging_item_copies_erase(item_ids: list[int]) -> list[str]:
    """Replace the answers to these items and blank the judge replies about them; return the
    texts removed: the replies the judgments refer to in the LLM response cache are among them,
    and leave it with the rest (the judgments' reference then goes too)."""
    # Every version: a replaced or deleted one still holds the words.
    answers = Answer.all_versions.filter(item_id__in=item_ids)
    judgments = Judgment.objects.filter(item_id__in=item_ids)
    copies = judgments.exclude(raw_text="")
    removed = (
        list(answers.values_list("text", flat=True))
        + list(copies.values_list("raw_text", flat=True))
        + list(judgments.filter(response__isnull=False).values_list("response__text", flat=True))
    )
    _keep_replies_of_other_items(item_ids, removed)
    answers.update(text=WITHDRAWN)
    copies.update(raw_text="")
    return removed


def _keep_replies_of_other_items(item_ids: list[int], removed: list[str]) -> None:
    """The cache is purged by text, so a row of another question holding the same words (a bare
    "[[A]]", say) leaves it too: a judgment of another item that refers to such a row takes the
    reply as its own copy first, and loses nothing."""
    texts = sorted(set(removed))
    own_text = Subquery(LLMResponse.objects.filter(key=OuterRef("response_id")).values("text")[:1])
    for start in range(0, len(texts), CACHE_CHUNK):
        Judgment.objects.exclude(item_id__in=item_ids).filter(
            raw_text="", response__text__in=texts[start : start + CACHE_CHUNK]
        ).update(raw_text=own_text)
