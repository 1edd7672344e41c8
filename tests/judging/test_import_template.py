"""`import_template`: any prompt file loads byte for byte, or is refused whole with a reason."""

from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from core.models import Workspace, default_workspace_id
from judging.models import JudgeTemplate
from judging.prompts.templates import template_copy, template_revise

pytestmark = pytest.mark.django_db

EVAL_PROMPT = Path(settings.BASE_DIR).parent / "shared" / "data" / "chinese_alpaca_eval" / "eval_prompt_zh.txt"
POINTWISE = (
    "Judge the answer to: {question}\r\n"
    "Reference (scores 8): {reference}\r\n"
    "Answer: {answer}\r\n"
    "Reply with {{'Final Score': n}} at the end.  \n"
    "\t{'Dimension 1': score}\n"
)


def run(*args):
    out = StringIO()
    call_command("import_template", *map(str, args), stdout=out, stderr=StringIO())
    return out.getvalue()


def test_a_good_file_is_stored_exactly_as_written(tmp_path):
    path = tmp_path / "judge.txt"
    path.write_bytes(POINTWISE.encode("utf-8"))
    out = run(path, "--name", "mine/en", "--mode", "pointwise")
    template = JudgeTemplate.objects.get(name="mine/en")
    assert template.text.encode("utf-8") == path.read_bytes()  # CRLF, trailing spaces, tab: all kept
    assert (template.version, template.mode, template.language) == (1, "pointwise", "en")
    assert (
        out == f"Template mine/en v1 (pointwise, en) in workspace default: {len(POINTWISE)} characters from {path}.\n"
    )


def test_an_existing_name_gets_a_new_version_and_keeps_its_language(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("问题：{question}\n回答：{answer}", encoding="utf-8")
    second.write_text("Q: {question}\nA: {answer}\n", encoding="utf-8")
    run(first, "--name", "mine", "--mode", "pointwise")
    run(second, "--name", "mine", "--mode", "pointwise")
    versions = list(
        JudgeTemplate.objects.filter(name="mine").order_by("version").values_list("version", "language", "text")
    )
    assert versions == [(1, "zh", "问题：{question}\n回答：{answer}"), (2, "zh", "Q: {question}\nA: {answer}\n")]
    run(second, "--name", "mine", "--mode", "pointwise", "--language", "en")
    assert JudgeTemplate.objects.get(name="mine", version=3).language == "en"


def test_a_seeded_name_becomes_a_newer_version(tmp_path):
    seeded = JudgeTemplate.objects.filter(name="urs/leisure/en").order_by("-version").first()
    path = tmp_path / "leisure.txt"
    path.write_text("Leisure: {question} {reference} {answer}", encoding="utf-8")
    run(path, "--name", "urs/leisure/en", "--mode", "pointwise")
    newest = JudgeTemplate.objects.filter(name="urs/leisure/en").order_by("-version").first()
    assert newest.version == seeded.version + 1 and JudgeTemplate.objects.get(pk=seeded.pk).text == seeded.text


def test_a_misspelled_placeholder_is_refused_with_the_valid_ones(tmp_path):
    path = tmp_path / "pair.txt"
    path.write_text('指令:\n"""{instrution}"""\n1: {output_1}\n2: {output 2}\n', encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        run(path, "--name", "pair", "--mode", "pairwise")
    valid = "{question}, {instruction}, {output_1}, {output_2}, {intent}, {category}"
    assert str(refused.value) == (
        f"Nothing imported. {path}:\n"
        f"line 2: unknown placeholder {{instrution}} (did you mean {{instruction}}?); "
        f"valid placeholders for a pairwise template: {valid}\n"
        f"line 4: unknown placeholder {{output 2}} (did you mean {{output_2}}?); "
        f"valid placeholders for a pairwise template: {valid}\n"
        "A pairwise template must contain the {output_1} and {output_2} placeholders."
    )
    assert not JudgeTemplate.objects.filter(name="pair").exists()


def test_a_missing_required_placeholder_is_refused(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("Question {question}, reference {reference}, but no answer.", encoding="utf-8")
    count = JudgeTemplate.objects.count()
    with pytest.raises(CommandError, match=r"A pointwise template must contain the \{answer\} placeholder\.$"):
        run(path, "--name", "p", "--mode", "pointwise")
    # A pointwise placeholder in a pairwise template is not valid there either.
    with pytest.raises(
        CommandError, match=r"line 1: unknown placeholder \{reference\}; valid placeholders for a pairwise"
    ):
        run(path, "--name", "p", "--mode", "pairwise")
    assert JudgeTemplate.objects.count() == count


def test_a_file_that_is_not_utf8_is_refused_with_its_position(tmp_path):
    path = tmp_path / "gbk.txt"
    path.write_bytes(b"{question}\n{answer}\n" + "回答".encode("gbk"))
    with pytest.raises(CommandError) as refused:
        run(path, "--name", "gbk", "--mode", "pointwise")
    assert str(refused.value) == (
        f"Nothing imported. {path} is not UTF-8 text: byte 0xbb at line 3, column 1 (invalid start byte)."
    )
    assert not JudgeTemplate.objects.filter(name="gbk").exists()


def test_empty_file_wrong_mode_and_missing_file_are_refused(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    with pytest.raises(CommandError, match="The template is empty."):
        run(empty, "--name", "e", "--mode", "pointwise")
    good = tmp_path / "good.txt"
    good.write_text("{output_1} {output_2}", encoding="utf-8")
    with pytest.raises(
        CommandError, match="Template 'urs/leisure/en' is pointwise; it cannot take a pairwise version."
    ):
        run(good, "--name", "urs/leisure/en", "--mode", "pairwise")
    with pytest.raises(CommandError, match="Cannot read .*missing.txt: No such file or directory."):
        run(tmp_path / "missing.txt", "--name", "m", "--mode", "pointwise")
    assert not JudgeTemplate.objects.filter(name__in=["e", "m"]).exists()


@pytest.mark.skipif(not EVAL_PROMPT.exists(), reason="../shared/data/chinese_alpaca_eval/eval_prompt_zh.txt is absent")
def test_the_published_chinese_alpaca_eval_prompt_imports_as_is_and_equals_the_seeded_one():
    run(EVAL_PROMPT, "--name", "cae-file", "--mode", "pairwise")
    imported = JudgeTemplate.objects.get(name="cae-file")
    assert imported.text.encode("utf-8") == EVAL_PROMPT.read_bytes()
    assert imported.language == "zh"
    seeded = JudgeTemplate.objects.filter(name="alpacaeval/pairwise/zh").order_by("-version").first()
    assert seeded.text == imported.text


def test_editing_a_template_refuses_a_misspelled_placeholder_too():
    builtin = JudgeTemplate.objects.filter(name="urs/factual_qa/en").first()
    template, _made = template_copy(template=builtin, workspace=Workspace.objects.get(pk=default_workspace_id()))
    with pytest.raises(ValueError, match=r"line 1: unknown placeholder \{anwser\}"):
        template_revise(template=template, text="Judge {anwser} against {reference}.")
