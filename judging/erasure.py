"""What judging made from a withdrawn participant's question: candidate answers and judge replies.

Registered with core.erasure; curation's `participant_withdraw` calls it before the items become
tombstones (or are deleted). Scores stay (numbers, not the participant's words), so leaderboards
of frozen versions remain as published; the texts are replaced.
"""

from core.erasure import WITHDRAWN, item_eraser
from judging.models import Answer, Judgment


@item_eraser
def judging_item_copies_erase(item_ids: list[int]) -> list[str]:
    """Replace the answers to these items and blank the judge replies about them; return the
    texts removed: the replies the judgments refer to in the LLM response cache are among them,
    and leave it with the rest (the judgments' reference then goes too)."""
    answers = Answer.objects.filter(item_id__in=item_ids)
    judgments = Judgment.objects.filter(item_id__in=item_ids)
    copies = judgments.exclude(raw_text="")
    removed = (
        list(answers.values_list("text", flat=True))
        + list(copies.values_list("raw_text", flat=True))
        + list(judgments.filter(response__isnull=False).values_list("response__text", flat=True))
    )
    answers.update(text=WITHDRAWN)
    copies.update(raw_text="")
    return removed
