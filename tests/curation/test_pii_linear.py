"""The PII checks cost about as much on hostile text as on ordinary text of the same size.

The attacks: one 19,950-character word made saving a case take seconds (the participant's quick
check read the rest of the word from every character), and `a.` x 9,980 kept a worker 44 s in
presidio's scheme-less URL pattern per case. Each is compared with an ordinary text of the same
length in the same run, best of three, so the ratio holds on a slow or busy machine: before, the
ratios were in the hundreds; now they are near one. The hints found in ordinary texts are those
found before (tests/curation/pii_expected.json).
"""

import json
import time

import pytest

from curation.pii.hints import pii_hints, quick_personal_info
from tests.curation.pii_corpus import EXPECTED, corpus, hints_of

SIZE = 19_960
ORDINARY = ("Question: what should I cook tonight? Answer: try a simple pasta with tomatoes. " * 300)[:SIZE]
HOSTILE = {"one long word": "a" * 19_950, "a. repeated": "a." * 9_980}
# A ratio this far above one means the check is no longer linear: it was above 100 before.
MAX_RATIO = 15


def best_of_three(check, text: str) -> float:
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        check(text)
        timings.append(time.perf_counter() - start)
    return min(timings)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_participants_quick_check_is_linear(name):
    ordinary = best_of_three(quick_personal_info, ORDINARY)
    hostile = best_of_three(quick_personal_info, HOSTILE[name])
    assert hostile < MAX_RATIO * max(ordinary, 0.002), (name, hostile, ordinary)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_reviewers_hints_are_linear(name):
    pii_hints("warm up: a.com", "en")
    ordinary = best_of_three(pii_hints, ORDINARY)
    hostile = best_of_three(pii_hints, HOSTILE[name])
    assert hostile < MAX_RATIO * max(ordinary, 0.01), (name, hostile, ordinary)
    assert pii_hints(HOSTILE[name]) == []


def test_many_links_in_one_line_are_checked_once_each():
    """3,333 scheme-less links on one line: the code check read the whole line for each."""
    text = ("a.com " * 3_400)[:SIZE]
    start = time.perf_counter()
    hints = pii_hints(text)
    many = time.perf_counter() - start
    assert len(hints) == 3_327 and {hint.entity for hint in hints} == {"URL"}
    # The same work on a fifth of the text takes about a fifth of the time, not a twenty-fifth.
    start = time.perf_counter()
    pii_hints(text[: SIZE // 5])
    fifth = time.perf_counter() - start
    assert many < 15 * fifth, (many, fifth)


def test_the_hints_of_ordinary_texts_are_unchanged():
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    texts = corpus()
    assert len(texts) == len(expected) == 33
    for (language, text), before in zip(texts, expected, strict=True):
        assert hints_of(text, language) == before, text[:80]
