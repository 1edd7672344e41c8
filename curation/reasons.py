"""Exclusion reasons Userbench writes itself: stored in English for the record and the exports,
shown in the reader's language.

Each reason is written from one template here and read back with a pattern made from the same
template, so the two cannot drift apart. A reason a reviewer typed matches none and is shown
as it was typed.
"""

import re
from dataclasses import dataclass

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _


@dataclass(frozen=True)
class RecordedReason:
    # str.format template of the stored English text, with {named} fields.
    template: str
    # The same sentence for people, with %(named)s fields (translated when it is read).
    shown: str | Promise

    def text(self, **values) -> str:
        """The English text to store."""
        return self.template.format(**values)

    @property
    def pattern(self) -> re.Pattern:
        parts = re.split(r"\{(\w+)\}", self.template)
        # Even parts are literal text, odd parts field names.
        regex = "".join(re.escape(part) if index % 2 == 0 else f"(?P<{part}>.+?)" for index, part in enumerate(parts))
        return re.compile(f"^{regex}$", re.S)


ATTENTION_FAILED = RecordedReason(
    "Failed the attention check: chose {chosen} where the instruction asked for {asked}.",
    _("Failed the attention check: chose %(chosen)s where the instruction asked for %(asked)s."),
)
ANOTHER_SUBMISSION_KEPT = RecordedReason(
    "Another submission under the same Prolific ID was kept (#{kept}).",
    _("Another submission under the same Prolific ID was kept (#%(kept)s)."),
)
DIFFICULTY_FILTERED = RecordedReason(
    "difficulty filter {filter}: mean {mean} in the top {percent}%",
    _("difficulty filter %(filter)s: mean %(mean)s in the top %(percent)s%%"),
)
WITHDRAWN = RecordedReason("withdrawn by the participant", _("withdrawn by the participant"))

RECORDED_REASONS = (ATTENTION_FAILED, ANOTHER_SUBMISSION_KEPT, DIFFICULTY_FILTERED, WITHDRAWN)


def exclusion_reason_text(reason: str) -> str:
    """A stored exclusion reason in the active language; a reviewer's own words as typed."""
    for recorded in RECORDED_REASONS:
        if match := recorded.pattern.match(reason or ""):
            return str(recorded.shown) % match.groupdict()
    return reason
