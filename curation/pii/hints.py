"""Personal-information hints for the human reviewer and the participant, with presidio-analyzer,
fully offline.

Hints only: nothing is redacted silently, and names and addresses (which need NER models we
cannot download) are left to the mandatory human PII review. One analyzer per language, each
from NoOpNlpEngine and a RecognizerRegistry of pattern recognizers (CONVENTIONS: presidio),
built in curation/pii/engine.py, which is imported only when hints are computed.
"""

import re
from bisect import bisect_right
from dataclasses import dataclass

from curation.pii.entities import EMAIL, ID_NUMBER, LANGUAGES, PHONE, URL, resident_id_is_valid


@dataclass(frozen=True)
class PiiHint:
    entity: str
    start: int
    end: int
    score: float
    text: str


# Code: fenced blocks, inline `code`, and lines that read like a program (a call, an
# assignment, an import). A host name without a scheme there is an attribute (pd.read_csv,
# df.to_csv), not a link.
_FENCE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`", re.DOTALL)
_CODE_LINE = re.compile(
    r"\w\(|[=;{}]|^\s*(?:import|from|def|class|return|print|for|if|while)\b|^\s*(?:>>>|\$) ", re.MULTILINE
)


class _CodeMap:
    """Where a text holds code, read once per text: fenced blocks in order, and whether each line
    reads like a program, so that every link hint costs a binary search, not a pass over the
    text (3,000 links in one line made that quadratic)."""

    def __init__(self, text: str):
        self.text = text
        self.blocks = [(block.start(), block.end()) for block in _FENCE.finditer(text)]
        self.block_starts = [start for start, _end in self.blocks]
        self.code_lines: dict[int, bool] = {}

    def in_code(self, start: int, end: int) -> bool:
        """True when a scheme-less link hint at text[start:end] sits in code or runs on into an
        identifier (`pd.re` of `pd.read_csv`)."""
        text = self.text
        if end < len(text) and (text[end].isalnum() or text[end] in "_("):
            return True
        index = bisect_right(self.block_starts, start) - 1
        if index >= 0 and start < self.blocks[index][1]:
            return True
        line_start = text.rfind("\n", 0, start) + 1
        if line_start not in self.code_lines:
            line_end = text.find("\n", end)
            line = text[line_start : len(text) if line_end < 0 else line_end]
            self.code_lines[line_start] = bool(_CODE_LINE.search(line))
        return self.code_lines[line_start]

    def is_code_link(self, entity: str, start: int, end: int) -> bool:
        found = self.text[start:end]
        has_scheme = "://" in found or found.lower().startswith("www.")
        return entity == URL and not has_scheme and self.in_code(start, end)


def pii_hints(text: str, language: str = "en", threshold: float = 0.4) -> list[PiiHint]:
    """Spans that look like personal information, sorted, overlaps resolved to the best score.

    Every URL is a hint too, since links can carry names; the reviewer decides. A host name
    without a scheme inside code is not (`pd.read_csv`). Overlapping spans of one kind (a
    national and an international reading of one phone number) become one span.
    """
    language = language if language in LANGUAGES else "en"
    if not text:
        return []
    # presidio and its recognizers take about 0.8 s to load: only the worker and the review
    # steps that compute hints pay for them, never a page or a command's start.
    from curation.pii.engine import analyzer_for

    code = _CodeMap(text)
    results = [
        result
        for result in analyzer_for(language).analyze(text=text, language=language, score_threshold=threshold)
        if not code.is_code_link(result.entity_type, result.start, result.end)
    ]
    spans = _merge_same_kind([(r.entity_type, r.start, r.end, r.score) for r in results])
    # Highest score first, then longest: keep a span only if it overlaps nothing kept.
    spans.sort(key=lambda span: (-span[3], -(span[2] - span[1]), span[1]))
    # The kept spans never overlap, so ordered by start their ends are ordered too: a span
    # overlaps a kept one only if it overlaps one of its two neighbours by start.
    kept: list[tuple[str, int, int, float]] = []
    starts: list[int] = []
    for span in spans:
        index = bisect_right(starts, span[1])
        if index > 0 and kept[index - 1][2] > span[1]:
            continue
        if index < len(kept) and kept[index][1] < span[2]:
            continue
        kept.insert(index, span)
        starts.insert(index, span[1])
    return [PiiHint(entity, start, end, round(score, 2), text[start:end]) for entity, start, end, score in kept]


def _merge_same_kind(spans: list[tuple[str, int, int, float]]) -> list[tuple[str, int, int, float]]:
    merged: list[list] = []
    for entity, start, end, score in sorted(spans, key=lambda span: (span[0], span[1])):
        last = merged[-1] if merged else None
        if last is not None and last[0] == entity and start < last[2]:
            last[2], last[3] = max(last[2], end), max(last[3], score)
        else:
            merged.append([entity, start, end, score])
    return [tuple(span) for span in merged]


def unresolved_hints(hints: list[dict], source: str, reviewed: list[str]) -> list[dict]:
    """The hints (found in `source`) whose text is still present in any of the reviewed texts:
    what a reviewer has neither removed nor changed."""
    remaining = []
    for hint in hints:
        found = source[hint["start"] : hint["end"]].strip()
        if found and any(found in text for text in reviewed):
            remaining.append(hint)
    return remaining


# What a participant is warned about as they type, without presidio (participant pages must stay
# light): an e-mail address, a phone number, an ID number. A warning only; nothing is blocked.
# An address starts where a run of its characters starts (the lookbehind): tried at every
# character of a 20,000-character word, `[\w.+-]+@` read the rest of the word each time, 1.2 s.
# The domain's labels are taken whole, without backtracking into them.
_QUICK_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]++@(?>[A-Za-z0-9-]+)(?:\.(?>[A-Za-z0-9-]+))*\.[A-Za-z]{2,}", re.ASCII)
_QUICK_PHONE = re.compile(r"(?<![\w.+])(\+?\d[\d ()-]{6,}\d)(?![\w.])", re.ASCII)
_QUICK_CN_ID = re.compile(r"(?<![0-9A-Za-z])[1-9]\d{16}[\dXx](?![0-9A-Za-z])")
_QUICK_SSN = re.compile(r"(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)")


def _phone_like(candidate: str) -> bool:
    digits = re.sub(r"\D", "", candidate)
    if not 9 <= len(digits) <= 15:
        return False
    # A long plain number is a phone number when written like one: with a +, with separators,
    # or as a mainland mobile number (11 digits from 1[3-9]).
    return (
        candidate.startswith("+")
        or re.search(r"[ ()-]", candidate) is not None
        or bool(re.fullmatch(r"1[3-9]\d{9}", digits))
    )


def quick_personal_info(text: str) -> list[str]:
    """The kinds of personal information `text` seems to hold (EMAIL_ADDRESS, PHONE_NUMBER,
    ID_NUMBER), in that order; a cheap check for participants' pages, never for review."""
    if not text:
        return []
    kinds = []
    if _QUICK_EMAIL.search(text):
        kinds.append(EMAIL)
    ids = [match.group(0) for match in _QUICK_CN_ID.finditer(text) if resident_id_is_valid(match.group(0))]
    ids += [match.group(0) for match in _QUICK_SSN.finditer(text)]
    if any(_phone_like(match.group(1)) for match in _QUICK_PHONE.finditer(text) if match.group(1) not in ids):
        kinds.append(PHONE)
    if ids:
        kinds.append(ID_NUMBER)
    return kinds


def highlight_segments(text: str, hints) -> list[tuple[str, str]]:
    """The text cut into (segment, entity) pairs, entity '' for plain text, for templates."""
    segments, cursor = [], 0
    for hint in sorted(hints, key=lambda h: h["start"] if isinstance(h, dict) else h.start):
        start = hint["start"] if isinstance(hint, dict) else hint.start
        end = hint["end"] if isinstance(hint, dict) else hint.end
        entity = hint["entity"] if isinstance(hint, dict) else hint.entity
        if start < cursor or end > len(text):
            continue
        if start > cursor:
            segments.append((text[cursor:start], ""))
        segments.append((text[start:end], entity))
        cursor = end
    if cursor < len(text):
        segments.append((text[cursor:], ""))
    return segments
