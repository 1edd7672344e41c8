"""Untrusted text meeting a judge prompt: the delimiters the shipped templates put around it, their
look-alikes neutralised inside a value (`neutralise`, called by judging/prompts/building.py's
`fill`), and the flags a suspicious answer carries on the run page (`suspicious_flags`: judge-format
strings, instructions to the judge, a delimiter of ours). Pure: no Django.
"""

from __future__ import annotations

import re

from judging.prompts.lookalikes import fold, replace_folded

# ---- Delimiters ---------------------------------------------------------------------------------
# The markers the shipped templates put around untrusted text, spelt as the papers print them
# (URS Table 11 mixes the case: "[End of reference answer]", "[start of AI assistant's answer]").

DELIMITERS = {
    "en": {
        "reference": ("[Start of Reference Answer]", "[End of reference answer]"),
        "answer": ("[start of AI assistant's answer]", "[end of AI assistant's answer]"),
        # Arena-Hard-Auto's user template (judging/benchmarks/), around each of the two answers.
        "assistant_a": ("<|The Start of Assistant A's Answer|>", "<|The End of Assistant A's Answer|>"),
        "assistant_b": ("<|The Start of Assistant B's Answer|>", "<|The End of Assistant B's Answer|>"),
    },
    "zh": {
        "reference": ("[参考答案开始]", "[参考答案结束]"),
        "answer": ("[助手的答案开始]", "[助手的答案结束]"),
    },
}
# ChineseAlpacaEval quotes the instruction and both outputs as Python triple-quoted strings.
TRIPLE_QUOTE = '"""'


def _all_markers() -> list[str]:
    return [mark for language in DELIMITERS.values() for pair in language.values() for mark in pair]


# One pattern for every marker, compiled once: this runs on every value of every prompt.
_MARKERS = re.compile("|".join(re.escape(mark) for mark in _all_markers()), re.IGNORECASE)


def neutralise(text: str) -> tuple[str, bool]:
    """Replace any of our delimiter markers inside untrusted text so it cannot close its block,
    look-alikes included (full-width or CJK brackets, curly quotes, zero-width characters:
    judging/prompts/lookalikes.py): each becomes the plain marker with parentheses."""
    return replace_folded(
        text,
        _MARKERS,
        lambda match: match.group(0).replace("[", "(").replace("]", ")").replace("<|", "(|").replace("|>", "|)"),
    )


# The two checks below read the folded answer in lower case through patterns written in lower
# case, without IGNORECASE: what IGNORECASE would match, at a third of its cost (an answer is
# checked as each judge call is built). Four characters that IGNORECASE matches to an ASCII
# letter and `lower()` does not (or not one for one) are mapped first.
IGNORECASE_EXTRAS = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
JUDGE_FORMAT = r"(final\s*score|综合得分|总分|'rank'|\"rank\"|\[\[\s*\d+\s*\]\]|rating\s*[:：]\s*\d)"
# Every branch starts with a literal character, so the regex engine skips the positions where
# none can start (a branch starting with a group, `(give|assign|...)`, turned that off).
INSTRUCTIONS_TO_JUDGE = (
    r"(ignore (all |the )?(previous|above|prior)|disregard (the|all|previous)|you are (the|an?) (judge|evaluator)|"
    + "|".join(
        verb + r" (this|the|my) (answer|response)[^.\n]{0,40}\b(10|ten|highest|full)"
        for verb in ("give", "assign", "rate", "score")
    )
    + r"|as (the|an) (judge|evaluator)|忽略(之前|以上|上面|前面)|给(这个|该|本)?(回答|答案)?打?(满分|10分|十分)|评委|评判者你)"
)
_JUDGE_FORMAT = re.compile(JUDGE_FORMAT)
_INSTRUCTIONS_TO_JUDGE = re.compile(INSTRUCTIONS_TO_JUDGE)


def _lowered(text: str) -> str:
    """`text` in lower case as IGNORECASE compares it with ASCII letters."""
    for char, letter in IGNORECASE_EXTRAS.items():
        if char in text:  # rare: a scan is cheaper than str.translate's lookup of every character
            text = text.replace(char, letter)
    return text.lower()


def suspicious_flags(text: str) -> list[str]:
    """Warnings for the run page: an answer carrying judge-format strings or instructions to the judge."""
    flags = []
    folded = fold(text or "")  # look-alikes read as what they look like (lookalikes.py)
    lowered = _lowered(folded)
    if _JUDGE_FORMAT.search(lowered):
        flags.append("judge_format")
    if _INSTRUCTIONS_TO_JUDGE.search(lowered):
        flags.append("instructions_to_judge")
    if _MARKERS.search(folded):
        flags.append("delimiter")
    return flags
