"""Good Chinese: 您 throughout, no doubled punctuation, one term per thing.

Checked in every zh catalogue and on every questionnaire page as a participant sees it in
Chinese, error states included (a label's colon used to follow a question mark: "？:").
"""

import html
import re

import pytest
from django.conf import settings
from django.core.management import call_command

from curation.models import Submission
from tests.curation.study_helpers import Participant, case_data, usage_data
from tests.test_translations import CATALOGUES, entries, owner

CJK = "\u3400-\u4dbf\u4e00-\u9fff"
FULL_WIDTH = "，。！？：；、"
# Two marks in a row ("？:", "：:", "。.") or an ASCII mark glued to Chinese ("服务:").
DOUBLED = re.compile(rf"[{FULL_WIDTH}][,.!?:;{FULL_WIDTH}]|[,.!?:;][{FULL_WIDTH}]|[{CJK}][,!?:;](?=\s|$)")

# One term for each thing: (what, the term used, variants that must not appear).
TERMS = [
    ("gold pair", "金标准", ["黄金"]),
    ("annotator", "标注员", ["标注者"]),
    ("campaign", "标注任务", ["标注活动", "本活动"]),
    ("researcher", "研究者", ["研究人员", "研究员"]),
    ("judge template and run", "评判", ["评审模板", "评审运行"]),
    ("endpoint", "端点", ["接口端点"]),
    ("reference model", "参照模型", ["参考模型"]),
]


def translated(path):
    for msgid, forms, _flags in entries(path):
        if msgid:
            for form in forms:
                yield msgid, form


@pytest.mark.parametrize("path", CATALOGUES, ids=owner)
def test_the_catalogue_says_nin_never_ni(path):
    assert [(msgid, text) for msgid, text in translated(path) if "你" in text] == []


# Not text: the characters after which Django adds no colon to a label (core/i18n.py).
LABEL_ENDINGS = ":?.!"


@pytest.mark.parametrize("path", CATALOGUES, ids=owner)
def test_no_doubled_or_mixed_punctuation_in_the_catalogue(path):
    found = [(msgid, text) for msgid, text in translated(path) if msgid != LABEL_ENDINGS and DOUBLED.search(text)]
    assert found == []


@pytest.mark.parametrize("path", CATALOGUES, ids=owner)
def test_one_term_for_each_thing(path):
    found = [
        (what, variant, text)
        for _msgid, text in translated(path)
        for what, _term, variants in TERMS
        for variant in variants
        if variant in text
    ]
    assert found == []


@pytest.mark.parametrize("path", CATALOGUES, ids=owner)
def test_an_item_is_never_called_a_project(path):
    """项目 means a project: an item is 条目 (it once read 项目 in the annotator's pages)."""
    wrong = [(msgid, text) for msgid, text in translated(path) if re.search(r"\bitems?\b", msgid) and "项目" in text]
    assert wrong == []


def test_django_form_labels_get_the_full_width_colon_and_none_after_a_question_mark():
    from django import forms
    from django.utils import translation

    class Form(forms.Form):
        asked = forms.CharField(label="您想达成什么目的？")
        named = forms.CharField(label="职业")

    with translation.override("zh-hans"):
        form = Form()
        assert form["asked"].label_tag() == '<label for="id_asked">您想达成什么目的？</label>'
        assert form["named"].label_tag() == '<label for="id_named">职业：</label>'
    with translation.override("en"):
        assert Form()["named"].label_tag() == '<label for="id_named">职业:</label>'


HIDDEN = re.compile(r"<(script|style)\b[^>]*>.*?</\1>", re.S | re.I)
SPOKEN = re.compile(r'\s(?:title|aria-label|placeholder|data-[a-z-]+)="([^"]*)"')


def reading(page: str) -> str:
    """What a participant reads or hears: text, and the titles, labels and messages in attributes."""
    body = HIDDEN.sub(" ", page)
    return html.unescape(re.sub(r"<[^>]+>", "\n", body) + "\n" + "\n".join(SPOKEN.findall(body)))


@pytest.fixture
def chinese_participant(client, db):
    call_command("loaddata", str(settings.BASE_DIR / "fixtures" / "demo.json"), verbosity=0)
    from curation.models import Study

    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    return Participant(client, Study.objects.get(slug="demo"))


def test_every_questionnaire_page_in_chinese_says_nin_and_never_doubles_a_mark(chinese_participant):
    participant = chinese_participant
    client = participant.client
    chinese_case = {"conversation": "问题：长城有多长？\n回答：约两万公里。"}
    pages = {"consent": client.get(participant.url("start")), "consent, refused": client.post(participant.url("start"))}
    participant.consent()
    pages["cases"] = client.get(participant.url("cases"))
    pages["cases, every error"] = client.post(
        participant.url("cases"),
        case_data(service="Other", intent="other", conversation="没有标记的文字", share_link="x" * 600),
    )
    too_long = "问题：" + "长" * 20_000 + "\n回答：好"
    pages["cases, too long"] = client.post(participant.url("cases"), case_data(conversation=too_long))
    participant.add_cases(4, **chinese_case)
    participant.add_cases(1, intent="other", intent_other="写诗", **chinese_case)
    pages["cases, five"] = client.get(participant.url("cases"))
    pages["edit"] = client.get(participant.url("case-edit", 1))
    pages["remove"] = client.get(participant.url("case-remove", 1))
    assert client.post(participant.url("cases"), {"action": "continue"}).status_code == 302
    pages["about"] = client.get(participant.url("about"))
    pages["about, too long"] = client.post(participant.url("about"), {"occupation": "护" * 300})
    participant.about(occupation="护士", country="中国")
    pages["usage"] = client.get(participant.url("usage"))
    pages["usage, nothing chosen"] = client.post(participant.url("usage"), {})
    client.post(participant.url("usage"), usage_data(llms_used=["ERNIE Bot", "Qwen"]))
    pages["review"] = client.get(participant.url("review"))
    participant.submit()
    pages["done"] = client.get(participant.url("done"))

    problems = {}
    for name, response in pages.items():
        assert response.status_code == 200, name
        text = reading(response.text)
        found = [line.strip() for line in text.splitlines() if "你" in line or DOUBLED.search(line)]
        if found:
            problems[name] = found
    assert problems == {}
    # The Chinese names of the services, while the stored value stays the same key.
    assert "文心一言、通义千问" in pages["review"].text
    assert "其他：写诗" in pages["review"].text
    assert '<option value="ERNIE Bot">文心一言</option>' in pages["cases"].text
    assert f"“您的问题和助手的回答”共有 {len(too_long):,} 个字符" in pages["cases, too long"].text
    assert too_long in html.unescape(pages["cases, too long"].text)
    submission = Submission.objects.latest("pk")
    assert submission.usage["llms_used"] == ["ERNIE Bot", "Qwen"] and submission.language == "zh"
