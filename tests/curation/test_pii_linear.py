"""The PII checks cost about as much on hostile text as on ordinary text of the same size.

The attacks: one 19,950-character word made saving a case take seconds (the participant's quick
check read the rest of the word from every character), and `a.` x 9,980 kept a worker 44 s in
presidio's scheme-less URL pattern per case. What made them quadratic was a pattern tried at
every position of a long run, each try reading on (or back) over the run: the patterns now start
only where a run starts, which these tests check without a clock. The times themselves, hostile
against ordinary text of the same size at 5k to 100k characters, are measured side by side in
bench/bench_pii.py. The hints found in ordinary texts are those found before
(tests/curation/pii_expected.json).
"""

import json

import pytest
import regex

from curation.pii.engine import BoundedUrlRecognizer
from curation.pii.hints import _QUICK_EMAIL, pii_hints, quick_personal_info
from tests.curation.pii_corpus import EXPECTED, corpus, hints_of

SIZE = 19_960
HOSTILE = {"one long word": "a" * 19_950, "a. repeated": "a." * 9_980}


def scheme_less_url_pattern():
    (pattern,) = [p for p in BoundedUrlRecognizer("en").patterns if p.name == "Non schema URL"]
    return regex.compile(pattern.regex)


def test_the_quick_e_mail_check_starts_only_where_a_run_starts():
    # From inside a run the address is not tried again: each run is read once, not once per character.
    assert _QUICK_EMAIL.search("xab@c.com", 1) is None
    assert _QUICK_EMAIL.search("mail xab@c.com").group() == "xab@c.com"


def test_the_scheme_less_link_pattern_starts_only_where_a_run_starts():
    pattern = scheme_less_url_pattern()
    assert pattern.search("xa.com", pos=1) is None
    assert pattern.search("see xa.com today").group() == "xa.com"


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_runs_hold_no_personal_information(name):
    assert quick_personal_info(HOSTILE[name]) == []
    assert pii_hints(HOSTILE[name]) == []


def test_many_links_in_one_line_are_all_found():
    """3,333 scheme-less links on one line (the code check used to read the whole line for each)."""
    text = ("a.com " * 3_400)[:SIZE]
    hints = pii_hints(text)
    assert len(hints) == 3_327 and {hint.entity for hint in hints} == {"URL"}


def test_the_hints_of_ordinary_texts_are_unchanged():
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    texts = corpus()
    assert len(texts) == len(expected) == 33
    for (language, text), before in zip(texts, expected, strict=True):
        assert hints_of(text, language) == before, text[:80]
