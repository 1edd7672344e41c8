"""Each language its paper's pairwise prompt: English items are judged with AlpacaEval's
`alpaca_eval_gpt4` ranking prompt exactly as AlpacaEval publishes it (system and user messages,
placeholders filled as its make_prompts fills them, temperature 0), Chinese items with
ChineseAlpacaEval's Figure 3. The template each judgment used is recorded and shown.

As reported: every pairwise run used the Chinese prompt, also for English items ("请根据中文用户的偏好"
for answers in English).
"""

import hashlib

import pytest
from django.urls import reverse

from curation.choices import Language
from judging.engine.execution import run_execute_inline
from judging.models import Endpoint, JudgeTemplate
from judging.prompts.building import default_templates
from judging.prompts.texts import ALPACA_EVAL_GPT4_SYSTEM, ALPACA_EVAL_GPT4_USER
from judging.runs.creation import run_create
from judging.runs.spec import RunSpec
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory

# tatsu-lab/alpaca_eval, src/alpaca_eval/evaluators_configs/alpaca_eval_gpt4/alpaca_eval.txt at
# commit 14230f34280490061074eae9275c69f4f6f4c7dd, byte for byte (configs.yaml: temperature 0).
PUBLISHED = (
    "<|im_start|>system\n"
    "You are a helpful assistant, that ranks models by the quality of their answers.\n"
    "<|im_end|>\n"
    "<|im_start|>user\n"
    "I want you to create a leaderboard of different of large-language models. To do so, I will give you the instructions (prompts) given to the models, and the responses of two models. Please rank the models based on which responses would be preferred by humans. All inputs and outputs should be python dictionaries.\n"
    "\n"
    "Here is the prompt:\n"
    "{\n"
    '    "instruction": """{instruction}""",\n'
    "}\n"
    "\n"
    "Here are the outputs of the models:\n"
    "[\n"
    "    {\n"
    '        "model": "model_1",\n'
    '        "answer": """{output_1}"""\n'
    "    },\n"
    "    {\n"
    '        "model": "model_2",\n'
    '        "answer": """{output_2}"""\n'
    "    }\n"
    "]\n"
    "\n"
    "Now please rank the models by the quality of their answers, so that the model with rank 1 has the best output. Then return a list of the model names and ranks, i.e., produce the following output:\n"
    "[\n"
    "    {'model': <model-name>, 'rank': <model-rank>},\n"
    "    {'model': <model-name>, 'rank': <model-rank>}\n"
    "]\n"
    "\n"
    "Your response must be a valid Python dictionary and should contain nothing else because we will directly execute it in Python. Please provide the ranking that the majority of humans would give.\n"
    "<|im_end|>"
)
PUBLISHED_SHA256 = "cf4bace43fa6ac71944b9ca2506587ad7c509478a219e98a3950abf9d5b42a98"


def chatml(prompt: str) -> list[dict]:
    """AlpacaEval's prompt_to_chatml: one message per <|im_start|> block, role and stripped content."""
    messages = []
    for block in prompt.strip().split("<|im_start|>")[1:]:
        role, rest = block.split("\n", 1)
        messages.append({"role": role.strip(), "content": rest.split("<|im_end|>", 1)[0].strip()})
    return messages


def published_messages(instruction: str, output_1: str, output_2: str) -> list[dict]:
    """What AlpacaEval sends: each placeholder's first occurrence replaced by its value (its
    make_prompts), then the ChatML split."""
    prompt = PUBLISHED
    for name, value in (("instruction", instruction), ("output_1", output_1), ("output_2", output_2)):
        prompt = prompt.replace("{" + name + "}", value, 1)
    return chatml(prompt)


def test_the_published_text_is_the_one_checked_against():
    assert hashlib.sha256(PUBLISHED.encode("utf-8")).hexdigest() == PUBLISHED_SHA256


def test_the_english_template_is_the_published_file_line_for_line():
    system, user = published_messages("{instruction}", "{output_1}", "{output_2}")
    assert system == {"role": "system", "content": ALPACA_EVAL_GPT4_SYSTEM}
    english = next(t for t in default_templates() if t.name == "alpacaeval/pairwise/en")
    assert (english.mode, english.language) == ("pairwise", "en")
    filled = english.text.format(instruction="{instruction}", output_1="{output_1}", output_2="{output_2}")
    assert filled.splitlines() == user["content"].splitlines()
    assert english.text == ALPACA_EVAL_GPT4_USER


def test_the_migration_holds_the_same_text(db):
    # Migrations ran for the test database: the template is there, with the text of texts.py.
    stored = JudgeTemplate.objects.filter(name="alpacaeval/pairwise/en").order_by("-version").first()
    assert stored is not None and stored.text == ALPACA_EVAL_GPT4_USER and stored.language == "en"


@pytest.fixture
def judge_endpoint(fake_llm, fast_retries):
    return Endpoint.objects.create(name="fake", base_url=fake_llm.base_url, max_retries=1, timeout_seconds=5)


@pytest.mark.django_db(transaction=True)
def test_a_loopback_judge_receives_the_english_prompt_verbatim_and_the_chinese_one_for_chinese(
    judge_endpoint, fake_llm, client, researcher
):
    dataset = DatasetFactory(name="bilingual")
    candidate, reference = CandidateModelFactory(name="cand"), CandidateModelFactory(name="ref")
    english = ItemFactory(
        dataset=dataset, external_id="en1", question='Write a haiku about {braces} and """quotes"""?', language="en"
    )
    chinese = ItemFactory(dataset=dataset, external_id="zh1", question="写一首关于秋天的诗。", language=Language.ZH)
    answers = {
        (english.pk, "cand"): "Leaves fall {slowly}\nthe output_2 placeholder stays text",
        (english.pk, "ref"): "An autumn haiku.",
        (chinese.pk, "cand"): "秋风起。",
        (chinese.pk, "ref"): "秋叶落。",
    }
    for item in (english, chinese):
        AnswerFactory(item=item, model=candidate, text=answers[(item.pk, "cand")])
        AnswerFactory(item=item, model=reference, text=answers[(item.pk, "ref")])
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pairwise",
            judge_model="j",
            candidates=[candidate],
            reference_model=reference,
            endpoint=judge_endpoint,
            seed=3,
            both_orders=True,
        ),
    )
    assert {t.name for t in run.templates.all()} == {"alpacaeval/pairwise/en", "alpacaeval/pairwise/zh"}
    run_execute_inline(run=run)
    bodies = list(fake_llm.requests)
    assert len(bodies) == 4
    english_bodies = [b for b in bodies if b["messages"][0]["role"] == "system"]
    assert len(english_bodies) == 2
    for body in english_bodies:
        assert body["temperature"] == 0
        user = body["messages"][1]["content"]
        first_is_candidate = user.index("Leaves fall") < user.index("An autumn haiku.")
        outputs = (answers[(english.pk, "cand")], answers[(english.pk, "ref")])
        if not first_is_candidate:
            outputs = outputs[::-1]
        # The question's triple quotes are escaped, as in the Chinese template, so that no text
        # can close the quoted string it is put in; everything else is AlpacaEval's filling.
        question = english.question.replace('"""', '\\"\\"\\"')
        expected = published_messages(question, *outputs)
        assert [dict(role=m["role"], content=m["content"]) for m in body["messages"]] == expected
    chinese_bodies = [b for b in bodies if b["messages"][0]["role"] == "user"]
    assert len(chinese_bodies) == 2
    assert all("请根据中文用户的偏好" in b["messages"][0]["content"] for b in chinese_bodies)
    assert all("I want you to create a leaderboard" not in b["messages"][0]["content"] for b in chinese_bodies)
    # Recorded per judgment, and shown on the run page.
    used = {(j.item.language, j.template.name) for j in run.judgments.select_related("item", "template")}
    assert used == {("en", "alpacaeval/pairwise/en"), ("zh", "alpacaeval/pairwise/zh")}
    client.force_login(researcher)
    page = client.get(reverse("judging:run-detail", args=[run.pk])).content.decode()
    assert "alpacaeval/pairwise/en" in page and "alpacaeval/pairwise/zh" in page


@pytest.mark.django_db
def test_the_new_run_page_says_which_prompt_each_language_gets(client, researcher):
    DatasetFactory(name="langs")
    client.force_login(researcher)
    page = client.get(reverse("judging:run-new"), {"dataset": "langs"}).content.decode()
    assert "English items: AlpacaEval" in page and "alpaca_eval_gpt4" in page
    assert "Chinese items: ChineseAlpacaEval" in page
