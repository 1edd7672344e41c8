"""presidio hints, offline: resident ID checksums, phone numbers, emails inside Chinese text."""

import pytest

from curation.pii.entities import CN_RESIDENT_ID, EMAIL, PHONE, resident_id_is_valid
from curation.pii.hints import highlight_segments, pii_hints

VALID_ID = "11010519491231002X"  # the standard's own example, check character X
VALID_ID_DIGIT = "440524198001010013"


@pytest.mark.parametrize("number", [VALID_ID, VALID_ID.lower(), VALID_ID_DIGIT])
def test_valid_resident_ids(number):
    assert resident_id_is_valid(number)


@pytest.mark.parametrize(
    "number",
    [
        "110105194912310021",
        "11010519491231002",
        "01010519491231002X",
        "110105194913310029",
        "44052419800101001X",
        "440524188001010014",
    ],
)
def test_invalid_resident_ids(number):
    assert not resident_id_is_valid(number)


def entities(text, language):
    return [(hint.entity, hint.text) for hint in pii_hints(text, language)]


def test_resident_id_in_chinese_text_only_with_valid_checksum():
    assert entities(f"我的身份证号是{VALID_ID}，请保密", "zh") == [(CN_RESIDENT_ID, VALID_ID)]
    assert entities("我的身份证号是110105194912310021，请保密", "zh") == []


def test_cn_mobile_glued_to_chinese_and_with_country_code():
    assert entities("有问题打我电话13812345678谢谢", "zh") == [(PHONE, "13812345678")]
    assert entities("联系电话：+86 138 1234 5678", "zh") == [(PHONE, "+86 138 1234 5678")]


def test_email_inside_chinese_text_does_not_swallow_chinese():
    assert entities("我的邮箱是zhang.san@example.com，欢迎联系", "zh") == [(EMAIL, "zhang.san@example.com")]
    assert entities("请发到li@qq.com谢谢", "zh") == [(EMAIL, "li@qq.com")]


def test_english_phone_and_email():
    found = entities("Call me at +1 415-555-2671 or write to bob@example.org.", "en")
    assert found == [(PHONE, "+1 415-555-2671"), (EMAIL, "bob@example.org")]


def test_text_without_personal_information_has_no_hints():
    assert pii_hints("What is the tallest mountain in the world?", "en") == []
    assert pii_hints("世界上最高的山是哪座？", "zh") == []


def test_highlight_segments_cover_the_text_exactly():
    text = "邮箱a@b.com，电话13812345678"
    hints = [{"entity": h.entity, "start": h.start, "end": h.end} for h in pii_hints(text, "zh")]
    segments = highlight_segments(text, hints)
    assert "".join(segment for segment, _ in segments) == text
    assert [entity for _, entity in segments if entity] == [EMAIL, PHONE]
