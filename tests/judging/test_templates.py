"""Judge templates: placeholders the prompt cannot fill are refused, unchanged text makes no
version, and two versions can be compared line by line."""

import pytest
from django.urls import reverse

from core.models import Workspace, default_workspace_id
from judging.errors import RunError
from judging.models import JudgeTemplate
from judging.prompts.building import default_templates, fill
from judging.prompts.placeholders import PLACEHOLDERS, template_placeholders
from judging.prompts.templates import (
    TemplateBuiltIn,
    template_copy,
    template_placeholders_check,
    template_revise,
    templates_ensure_defaults,
)
from judging.results.selectors import template_versions_diff

POINTWISE_VALID = "{question}, {instruction}, {reference}, {answer}, {intent}, {category}"
PAIRWISE_VALID = "{question}, {instruction}, {output_1}, {output_2}, {intent}, {category}"
UNKNOWN = "line 1: unknown placeholder {%s}%s; valid placeholders for a %s template: %s"


@pytest.mark.parametrize("template", default_templates(), ids=lambda t: t.name)
def test_every_built_in_template_passes_the_check(template):
    template_placeholders_check(text=template.text, mode=template.mode)


def test_placeholders_are_read_the_way_fill_reads_them():
    text = "{{question}} {question} { answer } {{ {output_1} }} {'Final Score': 7} {问题} {0} {{literal}}"
    assert template_placeholders(text) == [(1, "question"), (1, " answer "), (1, "output_1")]
    # {{ and }} are literal braces for fill too: the escaped name stays text.
    assert fill("{{question}} {question}", {"question": "Q"}) == "{question} Q"


@pytest.mark.parametrize(
    "text,mode,message",
    [
        (
            "Judge {answer} for {questoin}.",
            "pointwise",
            UNKNOWN % ("questoin", " (did you mean {question}?)", "pointwise", POINTWISE_VALID),
        ),
        (
            "{answer} against {criteria} and {Reference}",
            "pointwise",
            UNKNOWN % ("criteria", "", "pointwise", POINTWISE_VALID)
            + "\n"
            + UNKNOWN % ("Reference", " (did you mean {reference}?)", "pointwise", POINTWISE_VALID),
        ),
        (
            "Judge { answer }.",
            "pointwise",
            UNKNOWN % (" answer ", " (did you mean {answer}?)", "pointwise", POINTWISE_VALID)
            + "\nA pointwise template must contain the {answer} placeholder.",
        ),
        (
            "Score the answer to {question}.",
            "pointwise",
            "A pointwise template must contain the {answer} placeholder.",
        ),
        (
            "{question} {output_1} {reference}",
            "pairwise",
            UNKNOWN % ("reference", "", "pairwise", PAIRWISE_VALID)
            + "\nA pairwise template must contain the {output_1} and {output_2} placeholders.",
        ),
        (
            "{question} {output_1}",
            "pairwise",
            "A pairwise template must contain the {output_1} and {output_2} placeholders.",
        ),
    ],
)
def test_bad_placeholders_are_refused_with_the_valid_ones(text, mode, message):
    with pytest.raises(RunError) as caught:
        template_placeholders_check(text=text, mode=mode)
    assert str(caught.value) == message


def test_valid_names_are_what_build_prompt_fills():
    assert PLACEHOLDERS == {
        "pointwise": ("question", "instruction", "reference", "answer", "intent", "category"),
        "pairwise": ("question", "instruction", "output_1", "output_2", "intent", "category"),
    }
    template_placeholders_check(text="{question} {reference} {answer} {intent} {category}", mode="pointwise")
    template_placeholders_check(text='{{"model": "model_1"}} {question} {output_1} {output_2}', mode="pairwise")


@pytest.mark.django_db
def latest(name: str) -> JudgeTemplate:
    return JudgeTemplate.objects.filter(name=name).order_by("-version").first()


def test_unchanged_text_makes_no_version_and_a_refused_one_writes_nothing(researcher):
    templates_ensure_defaults()
    builtin = latest("urs/leisure/en")
    with pytest.raises(TemplateBuiltIn, match="Built-in templates cannot be changed"):
        template_revise(template=builtin, text=builtin.text + "\nBe brief.", user=researcher)
    first, made = template_copy(template=builtin, workspace=Workspace.objects.get(pk=default_workspace_id()))
    assert made and (first.text, first.version) == (builtin.text, builtin.version + 1)
    versions = JudgeTemplate.objects.filter(name="urs/leisure/en").count()
    same, made = template_revise(template=first, text="\n  " + first.text + "  \n", user=researcher)
    assert (same, made) == (first, False)
    second, made = template_revise(template=first, text=first.text + "\nBe brief.", user=researcher)
    assert (second.version, made, second.created_by) == (first.version + 1, True, researcher)
    # Saving the new version's text again from the page of the older one is no change either.
    assert template_revise(template=first, text=second.text) == (second, False)
    with pytest.raises(RunError, match="unknown placeholder {answr}"):
        template_revise(template=second, text="{answr}")
    assert JudgeTemplate.objects.filter(name="urs/leisure/en").count() == versions + 1


def test_diff_of_two_versions_marks_removed_and_added_lines():
    old = JudgeTemplate(text="a\nb\nc\nd\ne\nf\ng\nh\ni")
    new = JudgeTemplate(text="a\nb\nc\nd\nE\nf\ng\nh\ni\nj")
    [hunk] = template_versions_diff(old=old, new=new)
    assert [(r["kind"], r["old"], r["new"], r["text"]) for r in hunk] == [
        ("same", 2, 2, "b"),
        ("same", 3, 3, "c"),
        ("same", 4, 4, "d"),
        ("removed", 5, None, "e"),
        ("added", None, 5, "E"),
        ("same", 6, 6, "f"),
        ("same", 7, 7, "g"),
        ("same", 8, 8, "h"),
        ("same", 9, 9, "i"),
        ("added", None, 10, "j"),
    ]
    assert template_versions_diff(old=old, new=JudgeTemplate(text=old.text)) == []


@pytest.mark.django_db
def test_template_pages_refuse_explain_and_compare(client_as, researcher, reviewer):
    templates_ensure_defaults()
    builtin = latest("alpacaeval/pairwise/zh")
    url = reverse("judging:template-edit", args=[builtin.pk])
    assert client_as(reviewer).get(url).status_code == 403
    client = client_as(researcher)
    page = client.get(url).text
    assert "<code>{output_1}</code>, <code>{output_2}</code>" in page
    # A built-in template is read-only: the edit is refused, and the page offers a copy.
    refused = client.post(url, {"text": builtin.text + "\nBe brief."})
    assert refused.status_code == 400 and "Built-in templates cannot be changed." in refused.text
    assert "Copy to this workspace" in refused.text and latest(builtin.name) == builtin
    copied = client.post(reverse("judging:template-copy", args=[builtin.pk]), follow=True)
    first = latest(builtin.name)
    assert first.workspace_id == default_workspace_id() and first.text == builtin.text
    assert f"as version {first.version}; edit it here." in copied.text
    # Copying again leads to the same copy.
    again = client.post(reverse("judging:template-copy", args=[builtin.pk]))
    assert again["Location"] == reverse("judging:template-edit", args=[first.pk])
    versions = JudgeTemplate.objects.filter(name=first.name).count()
    url = reverse("judging:template-edit", args=[first.pk])

    response = client.post(url, {"text": first.text.replace("{output_2}", "{output_3}")})
    assert response.status_code == 400
    assert "unknown placeholder {output_3} (did you mean {output_2}?); valid placeholders" in response.text
    assert 'aria-invalid="true"' in response.text

    response = client.post(url, {"text": first.text}, follow=True)
    assert (
        f"Nothing changed: the text is the same as version {first.version}, so no new version was made."
        in response.text
    )
    assert JudgeTemplate.objects.filter(name=first.name).count() == versions

    lines = first.text.split("\n")
    edited = "\n".join([lines[0] + "请给出<b>中文用户</b>的结果。", *lines[1:]])
    response = client.post(url, {"text": edited}, follow=True)
    assert f"Saved as version {first.version + 1}." in response.text
    second = JudgeTemplate.objects.get(name=first.name, version=first.version + 1)
    assert reverse("judging:template-diff", args=[first.pk, second.pk]) in response.text

    response = client.get(reverse("judging:template-diff-pick", args=[second.pk]), {"old": first.pk, "new": second.pk})
    assert response["Location"] == reverse("judging:template-diff", args=[first.pk, second.pk])
    page = client.get(response["Location"]).text
    assert "<del>" in page and "<ins>" in page
    assert "请给出&lt;b&gt;中文用户&lt;/b&gt;的结果。" in page  # escaped
    assert page.count('class="diff-removed"') == 1 and page.count('class="diff-added"') == 1
    other = latest("urs/leisure/en")
    assert client.get(reverse("judging:template-diff", args=[first.pk, other.pk])).status_code == 404


def test_template_problems_are_shown_in_the_readers_language():
    from django.utils import translation

    text = "{instrution}\n{output_1}"
    with pytest.raises(RunError) as english:
        template_placeholders_check(text=text, mode="pointwise")
    with translation.override("zh-hans"), pytest.raises(RunError) as chinese:
        template_placeholders_check(text=text, mode="pointwise")
    assert str(english.value).splitlines() == [
        "line 1: unknown placeholder {instrution} (did you mean {instruction}?); valid placeholders for a pointwise "
        "template: {question}, {instruction}, {reference}, {answer}, {intent}, {category}",
        "line 2: unknown placeholder {output_1}; valid placeholders for a pointwise template: {question}, "
        "{instruction}, {reference}, {answer}, {intent}, {category}",
        "A pointwise template must contain the {answer} placeholder.",
    ]
    assert str(chinese.value).splitlines() == [
        "第 1 行：未知占位符 {instrution}（是否想写 {instruction}？）；pointwise 模板可用的占位符：{question}, "
        "{instruction}, {reference}, {answer}, {intent}, {category}",
        "第 2 行：未知占位符 {output_1}；pointwise 模板可用的占位符：{question}, {instruction}, {reference}, "
        "{answer}, {intent}, {category}",
        "逐项评分模板必须包含 {answer} 占位符。",
    ]
