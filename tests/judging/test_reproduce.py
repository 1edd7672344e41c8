"""`reproduce`: each paper's method end to end against a loopback judge, on a small slice of its
public data read in place from ../shared/data (and on a folder the test writes, so the command is
tested where that data is absent): what the judge received, the table in the paper's layout, and
the manifest of everything used."""

import hashlib
import json
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from curation.models import Dataset
from judging.models import Answer, JudgeRun, JudgeTemplate
from judging.papers.benchmarks import spread
from judging.prompts.building import alignbench_question_type, alignbench_template, fill, urs_template
from tests.processes import PATIENCE_SECONDS, process_env, shared_database  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db

DATA = Path(settings.BASE_DIR).parent / "shared" / "data"
URS, ALIGNBENCH, ALPACA = DATA / "urs", DATA / "alignbench", DATA / "chinese_alpaca_eval"
CAE_JUDGE_SYSTEM = "You are a helpful assistant that ranks models according to the quality of their Chinese answers."
CAE_ANSWER_SYSTEM = "您是一位乐于助人的智能助手。请用中文回复用户的请求。"


def needs(folder: Path):
    return pytest.mark.skipif(not folder.is_dir(), reason=f"../shared/data/{folder.name} is not on this machine")


@pytest.fixture
def server(fake_llm, fast_retries, monkeypatch):
    """The loopback server answers as a candidate when asked for one, as a judge when asked for `judge`."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-reproduce-secret")
    return fake_llm


def reproduce(tmp_path, *args):
    out = StringIO()
    call_command(
        "reproduce", *map(str, args), "--manifest", str(tmp_path / "manifest.json"), stdout=out, stderr=StringIO()
    )
    return out.getvalue(), json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))


def judge_bodies(fake_llm):
    return [body for body in fake_llm.requests if body["model"] == "judge"]


def answer_bodies(fake_llm):
    return [body for body in fake_llm.requests if body["model"] != "judge"]


def table_lines(out: str, title: str) -> list[str]:
    lines = out.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith(title))
    end = next(n for n, line in enumerate(lines) if line.startswith("Manifest: ") or n > start and not line.strip())
    return lines[start:end]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- The slice -----------------------------------------------------------------------------------


def test_a_slice_takes_each_group_in_turn_and_keeps_file_order():
    rows = ["a1", "a2", "a3", "b1", "c1", "b2", "c2", "a4"]
    assert spread(rows, key=lambda row: row[0], limit=5) == ["a1", "a2", "b1", "c1", "b2"]
    assert spread(rows, key=lambda row: row[0], limit=3) == ["a1", "b1", "c1"]
    assert spread(rows, key=lambda row: row[0], limit=99) == rows


# ---- URS -----------------------------------------------------------------------------------------


def urs_reply(body):
    """Candidates answer with their name; the judge gives strong 8 and weak 6 (English or Chinese dict)."""
    if body["model"] != "judge":
        return f"{body['model']} answers: " + body["messages"][-1]["content"][:20]
    prompt = body["messages"][-1]["content"]
    score = 8 if "strong answers:" in prompt else 6
    return f"Compared with the reference...\n{{'Factuality': {score}, 'Final Score': {score}}}"


@needs(URS)
def test_urs_end_to_end_on_one_question_per_intent(server, tmp_path):
    server.reply = urs_reply
    args = ["--benchmark", "urs", "--judge-model", "judge", "--models", "strong,weak", "--data", URS, "--limit", "7"]
    out, manifest = reproduce(tmp_path, *args)
    dataset = Dataset.objects.get()
    assert dataset.name == f"urs-{sha256(URS / 'data_all.csv')[:12]}-7-items" and dataset.source == "urs"
    items = list(dataset.items.order_by("id"))
    assert sorted(item.intent for item in items) == sorted(
        [
            "factual_qa",
            "solve_professional_problem",
            "api",
            "text_assistant",
            "ask_for_advice",
            "seek_creativity",
            "leisure",
        ]
    )
    # Answers generated as URS's services ran: the question alone, no temperature.
    assert len(answer_bodies(server)) == 14
    # No temperature sent (URS); max_tokens is generation's default, as on every call.
    assert all(
        sorted(body) == ["max_tokens", "messages", "model"] and len(body["messages"]) == 1
        for body in answer_bodies(server)
    )
    # The judge received the paper's prompt for the item's intent and language, filled, and no temperature.
    answers = {(a.item_id, a.model.name): a.text for a in Answer.objects.select_related("model")}
    expected = {
        fill(
            urs_template(item.intent, item.language),
            {"question": item.question, "reference": item.reference, "answer": answers[(item.pk, model)]},
        )
        for item in items
        for model in ("strong", "weak")
    }
    assert {body["messages"][-1]["content"] for body in judge_bodies(server)} == expected
    assert all(sorted(body) == ["max_tokens", "messages", "model"] for body in judge_bodies(server))

    table = table_lines(out, "URS Table 4")
    header = table[1].split()
    assert (
        " ".join(header)
        == "Solve Problem Factual QA Text Assistant Ask for Advice Seek Creativity Leisure All failures"
    )
    assert table[2].split() == ["Cases", "2", "1", "1", "1", "1", "1", "7"]  # API folded into Solve Problem
    assert table[3].split() == ["strong", *["*8.00"] * 7, "0"]
    assert table[4].split() == ["weak", *["6.00²"] * 7, "0"]

    run = JudgeRun.objects.get()
    assert (run.temperature, run.system_prompt, run.status) == (None, "", "finished")
    assert manifest["format"] == "userbench-reproduce-manifest/1" and manifest["benchmark"] == "urs"
    assert manifest["data"]["files"] == [
        {
            "role": "items",
            "path": "data_all.csv",
            "bytes": (URS / "data_all.csv").stat().st_size,
            "sha256": sha256(URS / "data_all.csv"),
        }
    ]
    templates = {t.name: t for t in run.templates.all()}
    assert manifest["templates"] == [
        {
            "name": name,
            "version": templates[name].version,
            "language": templates[name].language,
            "sha256": hashlib.sha256(templates[name].text.encode()).hexdigest(),
        }
        for name in sorted(templates)
    ]
    assert manifest["judge"] | {"source": ""} == {
        "model": "judge",
        "mode": "pointwise",
        "temperature": None,
        "max_tokens": 1024,
        "system_prompt": "",
        "system_prompt_sha256": None,
        "source": "",
    }
    assert manifest["generation"]["preset"] == "urs" and manifest["generation"]["temperature"] is None
    assert manifest["endpoint"] == {"name": "default", "base_url": server.base_url}
    assert manifest["userbench"]["version"] and re.fullmatch(r"[0-9a-f]{40}", manifest["userbench"]["commit"] or "")
    assert [(m["model"], m["generated"]) for m in manifest["models"]] == [("strong", 7), ("weak", 7)]
    assert manifest["run"]["status"] == "finished" and manifest["run"]["judgments"] == 14
    text = (tmp_path / "manifest.json").read_text(encoding="utf-8")
    assert "sk-test-reproduce-secret" not in text and "OPENAI_API_KEY" not in text

    # Again: the dataset and answers are reused, every judge prompt comes from the cache.
    calls = server.count
    out, manifest = reproduce(tmp_path, *args)
    assert "(already in Userbench)" in out and "Answers of strong: 7 already there" in out
    assert server.count == calls and Dataset.objects.count() == 1 and JudgeRun.objects.count() == 2
    assert table_lines(out, "URS Table 4")[3].split() == ["strong", *["*8.00"] * 7, "0"]


@needs(URS)
def test_urs_can_show_api_apart_and_judge_with_the_codes_chinese_prompt(server, tmp_path):
    server.reply = urs_reply
    out, manifest = reproduce(
        tmp_path,
        *["--benchmark", "urs", "--judge-model", "judge", "--models", "strong", "--data", URS, "--limit", "7"],
        *["--template-set", "urs-code", "--api-apart"],
    )
    assert all(body["messages"][-1]["content"].startswith("请你以公正的评判者的身份") for body in judge_bodies(server))
    assert {t["name"].split("/")[0] for t in manifest["templates"]} == {"urs-code"}
    assert manifest["table"]["api_apart"] is True
    table = table_lines(out, "URS Table 4")
    assert table[0] == "URS Table 4 (API shown apart; mean final score, 1-10)"
    assert table[1].split()[-3:] == ["API", "All", "failures"]
    assert table[2].split() == ["Cases", "1", "1", "1", "1", "1", "1", "1", "7"]


# ---- AlignBench ----------------------------------------------------------------------------------


def alignbench_reply(body):
    if body["model"] != "judge":
        return f"{body['model']} 的回答"
    score = 9 if "good 的回答" in body["messages"][-1]["content"] else 3
    return f"解释……\n{{'事实正确性': {score}, '满足用户需求': {score}, '综合得分': {score}}}"


@needs(ALIGNBENCH)
def test_alignbench_end_to_end_on_one_question_per_category(server, tmp_path):
    server.reply = alignbench_reply
    out, manifest = reproduce(
        tmp_path,
        "--benchmark",
        "alignbench",
        "--judge-model",
        "judge",
        "--models",
        "good,poor",
        "--data",
        ALIGNBENCH,
        "--limit",
        "8",
        "--output",
        tmp_path / "table.txt",
    )
    items = list(Dataset.objects.get().items.order_by("id"))
    categories = {item.category for item in items}
    assert len(items) == 8 and categories == {
        "专业能力",
        "数学计算",
        "基本任务",
        "逻辑推理",
        "中文理解",
        "文本写作",
        "角色扮演",
        "综合问答",
    }
    # Answers at AlignBench's temperature for the category; no system prompt.
    temperature = {body["messages"][-1]["content"]: body["temperature"] for body in answer_bodies(server)}
    assert {temperature[item.question] for item in items if item.category in ("数学计算", "专业能力")} == {0.1}
    assert {temperature[item.question] for item in items if item.category in ("文本写作", "综合问答")} == {0.7}
    assert all(len(body["messages"]) == 1 for body in server.requests)
    # The judge: AlignBench's prompt with the item's category and its subcategory's dimensions, at temperature 0.
    answers = {(a.item_id, a.model.name): a.text for a in Answer.objects.select_related("model")}
    expected = {
        fill(
            alignbench_template(alignbench_question_type(item.category, item.subcategory)),
            {
                "category": item.category,
                "question": item.question,
                "reference": item.reference,
                "answer": answers[(item.pk, model)],
            },
        )
        for item in items
        for model in ("good", "poor")
    }
    assert {body["messages"][-1]["content"] for body in judge_bodies(server)} == expected
    assert {(body["temperature"], len(body["messages"])) for body in judge_bodies(server)} == {(0.0, 1)}

    table = table_lines(out, "AlignBench results")
    assert table[0] == "AlignBench results (parse failures left out of the means)"
    assert table[1].split() == [
        "model",
        "总分",
        "中文推理",
        "数学计算",
        "逻辑推理",
        "中文语言",
        "基本任务",
        "中文理解",
        "综合问答",
        "文本写作",
        "角色扮演",
        "专业能力",
        "failures",
    ]
    assert table[2].split() == ["good", *["9.00"] * 11, "0"]
    assert table[3].split() == ["poor", *["3.00"] * 11, "0"]
    assert (tmp_path / "table.txt").read_text(encoding="utf-8").splitlines()[:4] == table[:4]
    # The published configuration is the one Userbench judges with; each file and its hash is recorded.
    assert {(c["path"], c["matches"]) for c in manifest["data"]["published_config"]} == {
        ("dimension_set.json", True),
        ("dimension_definition.json", True),
        ("subcategory_question_mapping.json", True),
        ("temperature.json", True),
    }
    assert manifest["judge"]["temperature"] == 0.0 and manifest["generation"]["temperature"] == "by category"
    assert manifest["data"]["files"][0]["sha256"] == sha256(ALIGNBENCH / "data_v1.1_release.jsonl")


@needs(ALIGNBENCH)
def test_a_changed_published_configuration_is_named(server, tmp_path):
    server.reply = alignbench_reply
    folder = tmp_path / "alignbench"
    (folder / "data").mkdir(parents=True)
    (folder / "config").mkdir()
    lines = (ALIGNBENCH / "data_v1.1_release.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    (folder / "data" / "data_v1.1_release.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    temperatures = json.loads((ALIGNBENCH / "temperature.json").read_text(encoding="utf-8")) | {"数学计算": 0.3}
    (folder / "config" / "temperature.json").write_text(json.dumps(temperatures, ensure_ascii=False), encoding="utf-8")
    out, manifest = reproduce(
        tmp_path, "--benchmark", "alignbench", "--judge-model", "judge", "--models", "good", "--data", folder
    )
    assert (
        "Warning: config/temperature.json (reply temperature per category) differs from the copy Userbench judges with."
        in out
    )
    checks = {c["what"]: (c["path"], c["matches"]) for c in manifest["data"]["published_config"]}
    assert checks["reply temperature per category"] == ("config/temperature.json", False)
    assert checks["dimensions per question type"] == (None, None)
    assert manifest["data"]["files"][0]["path"] == "data/data_v1.1_release.jsonl"


# ---- ChineseAlpacaEval ---------------------------------------------------------------------------


def alpaca_reply(published_gpt4: set[str]):
    """The judge ranks gpt-4-0613's published answer first and cannot decide about local-m's."""

    def reply(body):
        if body["model"] != "judge":
            return "本地模型的回答"
        prompt = body["messages"][-1]["content"]
        if "本地模型的回答" in prompt:
            return "两个都不错。"
        first = prompt.split('"answer": """', 2)[1]
        side = "model_1" if any(first.startswith(text) for text in published_gpt4) else "model_2"
        other = "model_2" if side == "model_1" else "model_1"
        return f"[{{'model': '{side}', 'rank': 1}}, {{'model': '{other}', 'rank': 2}}]"

    return reply


@needs(ALPACA)
def test_chinese_alpaca_eval_end_to_end_against_text_davinci_003(server, tmp_path):
    outputs = [
        json.loads(line)
        for line in (ALPACA / "model_outputs" / "gpt-4-0613.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    server.reply = alpaca_reply({row["response"] for row in outputs})
    out, manifest = reproduce(
        tmp_path,
        "--benchmark",
        "chinese_alpaca_eval",
        "--judge-model",
        "judge",
        "--models",
        "gpt-4-0613,local-m",
        "--data",
        ALPACA,
        "--limit",
        "5",
    )
    items = list(Dataset.objects.get().items.order_by("id"))
    assert len(items) == 5 and len({item.category for item in items}) == 5
    # Published answers imported for the two published models; local-m generated as the authors' code asks.
    assert "Answers of gpt-4-0613: 5 imported from model_outputs/gpt-4-0613.jsonl" in out
    assert "Answers of text-davinci-003: 5 imported from model_outputs/text-davinci-003.jsonl" in out
    assert "Answers of local-m: 5 generated (chinese_alpaca_eval preset)" in out
    for body in answer_bodies(server):
        assert (body["temperature"], body["max_tokens"]) == (0.7, 2048)
        assert body["messages"][0] == {"role": "system", "content": CAE_ANSWER_SYSTEM}
    # The judge: eval_prompt_zh.txt filled in line for line, with the authors' system prompt, at temperature 0.
    published = (ALPACA / "eval_prompt_zh.txt").read_text(encoding="utf-8")
    answers = {(a.item_id, a.model.name): a.text for a in Answer.objects.select_related("model")}
    expected = set()
    for item in items:
        for model in ("gpt-4-0613", "local-m"):
            pair = (answers[(item.pk, model)], answers[(item.pk, "text-davinci-003")])
            for first, second in (pair, pair[::-1]):
                expected.add(published.format(instruction=item.question, output_1=first, output_2=second))
    sent = [body["messages"][-1]["content"] for body in judge_bodies(server)]
    assert len(sent) == 10 and set(sent) <= expected
    assert {(body["temperature"], body["max_tokens"]) for body in judge_bodies(server)} == {(0.0, 2048)}
    assert all(body["messages"][0] == {"role": "system", "content": CAE_JUDGE_SYSTEM} for body in judge_bodies(server))

    table = table_lines(out, "ChineseAlpacaEval Table 1")
    assert table[1].split() == ["Model", "Name", "Win", "Rate(%)", "Lose", "Rate(%)", "Error(%)", "Length", "Rank"]
    gpt4 = table[2].split()
    assert gpt4[:4] == ["gpt-4-0613", "100.00", "0.00", "0.00"] and gpt4[-1] == "1"
    assert table[3].split()[:4] == ["text-davinci-003", "50.00", "50.00", "0.00"] and table[3].endswith("(reference)")
    # Every verdict about it was an error: no valid judgment, so no rank.
    assert table[4].split() == ["local-m", "0.00", "0.00", "100.00", "7", "–"]
    assert manifest["reference_model"] == "text-davinci-003"
    assert manifest["judge"]["system_prompt"] == CAE_JUDGE_SYSTEM and manifest["judge"]["max_tokens"] == 2048
    assert [(c["path"], c["matches"]) for c in manifest["data"]["published_config"]] == [("eval_prompt_zh.txt", True)]
    recorded = {f["role"]: f["sha256"] for f in manifest["data"]["files"]}
    assert recorded == {
        "items": sha256(ALPACA / "chinese_alpaca_eval.jsonl"),
        "answers of gpt-4-0613": sha256(ALPACA / "model_outputs" / "gpt-4-0613.jsonl"),
        "answers of text-davinci-003": sha256(ALPACA / "model_outputs" / "text-davinci-003.jsonl"),
    }


# ---- On data the test writes (no ../shared needed) ---------------------------------------------


@pytest.fixture
def small_alpaca(tmp_path):
    folder = tmp_path / "cae"
    (folder / "model_outputs").mkdir(parents=True)
    instructions = [
        ("helpful_base", "Name a river.", "说出一条河。"),
        ("koala", "Say hi.", "打个招呼。"),
        ("vicuna", "Count to 3.", "数到三。"),
    ]
    rows = [{"dataset": d, "instruction": en, "instruction_zh": zh} for d, en, zh in instructions]
    (folder / "chinese_alpaca_eval.jsonl").write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8"
    )
    reference = [{"instruction": zh, "response": f"参考：{zh}"} for _d, _en, zh in instructions]
    (folder / "model_outputs" / "text-davinci-003.jsonl").write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in reference), encoding="utf-8"
    )
    return folder


def test_chinese_alpaca_eval_on_a_small_folder_of_its_format(server, tmp_path, small_alpaca):
    server.reply = lambda body: (
        "更好的回答"
        if body["model"] != "judge"
        else "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]"
    )
    out, manifest = reproduce(
        tmp_path,
        "--benchmark",
        "chinese_alpaca_eval",
        "--judge-model",
        "judge",
        "--models",
        "mine",
        "--data",
        small_alpaca,
        "--seed",
        "3",
    )
    run = JudgeRun.objects.get()
    assert (run.mode, run.reference_model.name, run.seed, run.total) == ("pairwise", "text-davinci-003", 3, 3)
    assert [t.name for t in run.templates.all()] == ["alpacaeval/pairwise/zh"]
    # No eval_prompt_zh.txt in this folder: nothing to compare, and the manifest says so.
    assert manifest["data"]["published_config"] == [
        {"what": "the judge prompt (Figure 3)", "path": None, "sha256": None, "matches": None}
    ]
    rows = {row["model"]: row for row in manifest["table"]["data"]}
    wins = sum(1 for j in run.judgments.all() if j.outcome == "win")
    assert rows["mine"]["win_rate"] == pytest.approx(100 * wins / 3) and rows["text-davinci-003"]["win_rate"] == 50.0
    assert "ChineseAlpacaEval Table 1" in out and "Manifest: " in out
    # The pairwise set the paper's judge used, named at the top and in the run's own manifest.
    assert manifest["template_set"] == manifest["run"]["manifest"]["template_set"] == "alpacaeval"


def test_the_papers_template_is_used_even_after_a_researcher_edited_it(server, tmp_path, small_alpaca):
    from judging.prompts.templates import templates_ensure_defaults

    templates_ensure_defaults()
    name = "alpacaeval/pairwise/zh"
    published = JudgeTemplate.objects.filter(name=name).order_by("-version").first()
    edited = JudgeTemplate.objects.create(
        name=name, version=published.version + 1, mode="pairwise", language="zh", text="Rank {output_1} vs {output_2}."
    )
    server.reply = lambda body: (
        "回答" if body["model"] != "judge" else "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]"
    )
    args = ["--benchmark", "chinese_alpaca_eval", "--judge-model", "judge", "--models", "mine", "--data", small_alpaca]
    out, _manifest = reproduce(tmp_path, *args)
    # The newest version that holds the published text judges; the edit stays the newest version.
    assert JudgeRun.objects.get().templates.get() == published and "no version held" not in out
    assert all(body["messages"][-1]["content"].startswith("我希望你创建") for body in judge_bodies(server))

    # No version holds it any more (a database seeded with an older text): it is stored again, and said.
    JudgeTemplate.objects.filter(name=name).exclude(pk=edited.pk).update(text="Older {output_1} / {output_2}")
    out, _manifest = reproduce(tmp_path, *args)
    used = JudgeRun.objects.order_by("-pk").first().templates.get()
    assert used.text == published.text and used.version == edited.version + 1
    assert f"Template {name}: no version held the published text (v{edited.version} was edited)" in out


def test_a_dataset_already_in_userbench_is_judged_without_data(server, tmp_path, small_alpaca):
    server.reply = lambda body: (
        "回答" if body["model"] != "judge" else "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]"
    )
    args = ["--benchmark", "chinese_alpaca_eval", "--judge-model", "judge", "--models", "mine"]
    reproduce(tmp_path, *args, "--data", small_alpaca)
    name = Dataset.objects.get().name
    out, manifest = reproduce(tmp_path, *args, "--dataset", name)
    assert (
        f"Dataset {name}: 3 items (already in Userbench)" in out
        and "Answers of text-davinci-003: 3 already there" in out
    )
    assert (manifest["data"]["dir"], manifest["data"]["files"], manifest["dataset"]["imported_now"]) == (
        None,
        [],
        False,
    )
    with pytest.raises(CommandError, match=f"Dataset '{name}' is not an AlignBench dataset"):
        reproduce(
            tmp_path, "--benchmark", "alignbench", "--judge-model", "judge", "--models", "mine", "--dataset", name
        )


def test_failed_judge_calls_still_print_the_table_and_manifest_and_say_how_to_continue(
    server, tmp_path, small_alpaca, monkeypatch
):
    monkeypatch.setenv("OPENAI_MAX_RETRIES", "0")
    server.reply = lambda body: (
        "回答" if body["model"] != "judge" else "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]"
    )
    server.faults = {"参考：打个招呼": ["500"] * 3}  # the judge call about one instruction fails
    out = StringIO()
    with pytest.raises(CommandError, match=r"Run \d+ ended failed, with 1 failed call\(s\).*judge_resume \d+ --inline"):
        call_command(
            "reproduce",
            *["--benchmark", "chinese_alpaca_eval", "--judge-model", "judge", "--models", "mine"],
            *["--data", str(small_alpaca), "--output", str(tmp_path / "table.txt")],
            stdout=out,
            stderr=StringIO(),
        )
    assert "ChineseAlpacaEval Table 1" in out.getvalue()
    manifest = json.loads((tmp_path / "table.txt.manifest.json").read_text(encoding="utf-8"))
    assert (manifest["run"]["call_failures"], manifest["run"]["judgments"]) == (1, 3)
    # The way on that the error named: judge_resume finishes the run and ends with the table.
    server.faults = {}
    resumed = StringIO()
    call_command("judge_resume", str(manifest["run"]["id"]), "--inline", stdout=resumed, stderr=StringIO())
    lines = resumed.getvalue().splitlines()
    title = lines.index(next(line for line in lines if "ChineseAlpacaEval Table 1" in line))
    assert any(line.startswith("mine") for line in lines[title:])


def test_without_paths_the_table_and_manifest_go_into_the_out_folder(server, tmp_path, small_alpaca, monkeypatch):
    server.reply = lambda body: (
        "回答" if body["model"] != "judge" else "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]"
    )
    monkeypatch.chdir(tmp_path)
    command = ["reproduce", "--benchmark", "chinese_alpaca_eval", "--judge-model", "judge", "--models", "mine"]
    out = StringIO()
    call_command(*command, "--data", str(small_alpaca), stdout=out, stderr=StringIO())
    run = JudgeRun.objects.get()
    stem = f"reproduce-chinese_alpaca_eval-run-{run.pk}"
    # The default is manifests/ (which .gitignore lists), never loose where the command ran.
    written = sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*.*") if "cae" not in path.parts)
    assert written == [f"manifests/{stem}.manifest.json", f"manifests/{stem}.table.txt"]
    assert f"Manifest: manifests/{stem}.manifest.json" in out.getvalue()
    assert "ChineseAlpacaEval Table 1" in (tmp_path / "manifests" / f"{stem}.table.txt").read_text(encoding="utf-8")
    call_command(
        *command, "--data", str(small_alpaca), "--out", "elsewhere/deeper", stdout=StringIO(), stderr=StringIO()
    )
    second = JudgeRun.objects.latest("pk")
    assert (
        tmp_path / "elsewhere" / "deeper" / f"reproduce-chinese_alpaca_eval-run-{second.pk}.manifest.json"
    ).is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "Give --data DIR: the folder holding the benchmark's public files (github.com/CrossmodalGroup"),
        (["--data", "/nonexistent"], "--data /nonexistent is not a folder."),
        (["--dataset", "ghost"], "No dataset named 'ghost'."),
        (["--dataset", "ghost", "--limit", "3"], "--limit slices the items of --data; a dataset given with --dataset"),
        (["--limit", "0", "--data", "."], "--limit must be at least 1."),
        (["--template-set", "urs-code", "--data", "."], "--template-set is for the URS benchmark."),
    ],
)
def test_bad_requests_are_refused_before_anything_is_sent(server, tmp_path, args, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        reproduce(tmp_path, "--benchmark", "chinese_alpaca_eval", "--judge-model", "judge", "--models", "m", *args)
    assert server.count == 0 and not JudgeRun.objects.exists()


def test_a_folder_without_the_items_file_names_what_it_looked_for(server, tmp_path):
    with pytest.raises(
        CommandError,
        match=re.escape("holds no data/data_all.csv or data_all.csv: give the folder of github.com/Alice1998/URS"),
    ):
        reproduce(tmp_path, "--benchmark", "urs", "--judge-model", "judge", "--models", "m", "--data", tmp_path)


def test_missing_answers_without_an_endpoint_are_explained(tmp_path, small_alpaca, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(CommandError, match="OPENAI_BASE_URL is not set"):
        reproduce(
            tmp_path,
            "--benchmark",
            "chinese_alpaca_eval",
            "--judge-model",
            "judge",
            "--models",
            "m",
            "--data",
            small_alpaca,
        )
    assert not JudgeRun.objects.exists()


# ---- As a researcher runs it: its own process, from the command line -----------------------------


@pytest.mark.processes
def test_from_the_command_line_the_table_and_manifest_follow_the_run(shared_database, fake_llm, tmp_path, small_alpaca):
    """From a terminal the judge commands end their process at once after their last line; this
    one's last lines are the table and the manifest, so the run's "Finished" must not end it."""
    fake_llm.reply = lambda body: (
        "回答" if body["model"] != "judge" else "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]"
    )
    command = [sys.executable, "manage.py", "reproduce", "--benchmark", "chinese_alpaca_eval"]
    command += ["--judge-model", "judge", "--models", "mine", "--data", str(small_alpaca)]
    command += ["--manifest", str(tmp_path / "manifest.json")]
    done = subprocess.run(
        command,
        cwd=settings.BASE_DIR,
        env=process_env(shared_database, OPENAI_BASE_URL=fake_llm.base_url, OPENAI_API_KEY="sk-test"),
        capture_output=True,
        text=True,
        timeout=PATIENCE_SECONDS,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "ChineseAlpacaEval Table 1" in done.stdout and "Manifest: " in done.stdout
    assert json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))["run"]["judgments"] == 3
    # With no --concurrency and an endpoint that states no limit, the window finds the server's
    # capacity from one call in flight (a fixed 8 sent a one-slot llama.cpp eight at once).
    run = JudgeRun.objects.get()
    assert (run.concurrency_auto, run.concurrency) == (True, settings.LLM_AUTO_MAX_IN_FLIGHT)


def test_a_reproduction_naming_a_model_without_answers_says_so_and_makes_no_run():
    from judging.papers.benchmarks import BENCHMARKS
    from judging.papers.reproduce import ReproduceError, reproduction_run
    from tests.factories import DatasetFactory

    dataset = DatasetFactory(name="urs-slice")
    with pytest.raises(ReproduceError, match="Unknown model\\(s\\): nobody"):
        reproduction_run(
            benchmark=BENCHMARKS["urs"],
            dataset=dataset,
            judge_model="judge",
            models=["nobody"],
            reference_model=None,
            endpoint_name=None,
            concurrency=4,
        )
    assert not JudgeRun.objects.exists()


# ---- --workspace ---------------------------------------------------------------------------------

CAE = ["--benchmark", "chinese_alpaca_eval", "--judge-model", "judge", "--models", "mine"]


@pytest.fixture
def two_workspaces():
    from core.models import Workspace
    from core.workspaces import default_workspace_id

    return Workspace.objects.get(pk=default_workspace_id()), Workspace.objects.create(slug="beta", name="Beta")


def _ranks_first(body):
    return "回答" if body["model"] != "judge" else "[{'model': 'model_1', 'rank': 1}, {'model': 'model_2', 'rank': 2}]"


def test_workspace_puts_the_imported_dataset_and_its_run_there(server, tmp_path, small_alpaca, two_workspaces):
    _default, beta = two_workspaces
    server.reply = _ranks_first
    out, manifest = reproduce(tmp_path, *CAE, "--data", small_alpaca, "--workspace", "beta")
    dataset, run = Dataset.objects.get(), JudgeRun.objects.get()
    assert (dataset.workspace, run.workspace, manifest["run"]["judgments"]) == (beta, beta, 3)
    # The same file again, named by --dataset or read again from --data, in the same workspace: reused.
    reproduce(tmp_path, *CAE, "--dataset", dataset.name, "--workspace", "beta")
    reproduce(tmp_path, *CAE, "--data", small_alpaca, "--workspace", "beta")
    assert Dataset.objects.count() == 1 and set(JudgeRun.objects.values_list("workspace", flat=True)) == {beta.pk}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "Name the workspace with --workspace, one of: beta, default."),
        (["--workspace", "gamma"], "No workspace 'gamma'; known: beta, default."),
    ],
    ids=["several workspaces, none named", "unknown slug"],
)
def test_an_import_needs_a_known_workspace_once_there_are_several(
    server, tmp_path, small_alpaca, two_workspaces, args, message
):
    with pytest.raises(CommandError, match=re.escape(message)):
        reproduce(tmp_path, *CAE, "--data", small_alpaca, *args)
    assert server.count == 0 and not Dataset.objects.exists() and not JudgeRun.objects.exists()


def test_a_dataset_or_endpoint_of_another_workspace_is_refused_before_anything_is_sent(
    server, tmp_path, small_alpaca, two_workspaces
):
    from llm.models import Endpoint

    default, beta = two_workspaces
    server.reply = _ranks_first
    reproduce(tmp_path, *CAE, "--data", small_alpaca, "--workspace", "default")
    name, sent = Dataset.objects.get().name, server.count
    # Names belong to a workspace: in beta, default's dataset and endpoint are unknown, whatever they are named.
    with pytest.raises(CommandError, match=re.escape(f"No dataset named '{name}'.")):
        reproduce(tmp_path, *CAE, "--dataset", name, "--workspace", "beta")
    Endpoint.objects.create(name="theirs", base_url=server.base_url, workspace=default)
    with pytest.raises(CommandError, match=re.escape("Workspace 'beta': Unknown endpoint 'theirs'.")):
        reproduce(tmp_path, *CAE, "--data", small_alpaca, "--workspace", "beta", "--endpoint", "theirs")
    assert server.count == sent and JudgeRun.objects.count() == 1 and Dataset.objects.count() == 1
    assert not Dataset.objects.filter(workspace=beta).exists()
