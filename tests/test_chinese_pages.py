"""Every page a researcher, reviewer or annotator opens reads in Chinese: no English outside data.

The demo fills every page. Each page is rendered in Chinese and its visible text (and the
titles, labels and placeholders a screen reader speaks) is searched for runs of English words.
A run passes when it is data a person typed or imported (any text stored in the database,
except the texts the application writes itself: exclusion reasons and coded choices), or a
name that stays English in Chinese (Userbench, CSV, Spearman, ...). Anything else is a string
that reached the page without a translation.
"""

import html
import re
from datetime import timedelta

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import models
from django.utils import timezone

from annotation.models import Campaign
from core.workspaces import membership_set
from curation.models import Case, Dataset, Item, ReviewEvent, ReviewTask
from home.demo import demo_seed
from home.services import invitation_create
from judging.models import JudgeRun, JudgeTemplate
from llm.models import Endpoint

pytestmark = pytest.mark.django_db

# Names, units and formats that stay as they are in a Chinese interface.
KEPT_IN_ENGLISH = {
    "Userbench", "English", "API", "CSV", "JSON", "JSONL", "Markdown", "SVG", "LLM", "AI", "ID", "URL", "UTC",
    "Prolific", "Prolific ID", "PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "OpenAI", "Ollama", "llama.cpp", "vLLM",
    "Bradley-Terry", "BT", "Elo", "Cohen", "Cohen kappa", "Cohen's kappa", "Fleiss kappa", "Krippendorff alpha",
    "Spearman", "Kendall", "Pearson", "kappa", "alpha", "tau", "rho", "sha256", "AlignBench", "AlpacaEval", "URS",
    "ChineseAlpacaEval", "GPT", "manage.py", "rerun", "compare", "http", "https", "localhost", "testserver",
    "api.openai.com", "env", "min", "s", "p", "r", "n", "A", "B", "CI", "PII", "IP", "HTTP", "JSON Lines",
    "Kimi", "DeepSeek", "ChatGPT", "Claude", "Gemini", "Copilot", "Character.AI", "model_a", "model_b", "tie",
    "cannot_determine", "left", "right", "pointwise", "pairwise", "NAME", "OPENAI_API_KEY", "OPENAI_BASE_URL", "max_tokens",
    "slug", "default", "en", "zh", "endpoint NAME", "Ctrl", "Enter", "Esc", "Shift", "Tab", "LLM_KEY_HOSTS",
    "Chatbot Arena", "ln 10", "UTF-8", "question_id", "ZIP", "Arena-Hard-Auto", "question.jsonl",
}  # fmt: skip

# Texts the application writes in English for the record; pages show them translated.
WRITTEN_BY_THE_APPLICATION = {
    ("curation", "submission", "exclusion_reason"),
    ("curation", "item", "exclusion_reason"),
    ("curation", "casecuration", "exclusion_reason"),
    ("curation", "casecuration", "format_error"),
    ("curation", "casecuration", "duplicate_kind"),
}

HIDDEN = re.compile(r"<(script|style|textarea|code|pre)\b[^>]*>.*?</\1>", re.S | re.I)
SPOKEN = re.compile(r'\s(?:title|aria-label|placeholder|alt)="([^"]*)"')
TAG = re.compile(r"<[^>]+>")
# Times as ISO 8601 (2026-11-26T09:07:18+00:00) and versions (v2) read the same in Chinese.
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT[\d:.+\-]+")
VERSION = re.compile(r"^v\d+$")
ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z0-9_'’.\-]*(?: [A-Za-z0-9_'’.\-]+)*")
STRIP = ".-'’ "


def stored_text() -> str:
    """Every text stored in the database that a person typed or imported, spaces collapsed."""
    texts = []

    def collect(value):
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            for inner in value.values():
                collect(inner)
        elif isinstance(value, list | tuple):
            for inner in value:
                collect(inner)

    for model in apps.get_models():
        fields = [
            field.name
            for field in model._meta.concrete_fields
            if isinstance(field, models.CharField | models.TextField | models.JSONField)
            and not field.choices
            and (model._meta.app_label, model._meta.model_name, field.name) not in WRITTEN_BY_THE_APPLICATION
        ]
        if fields:
            for row in model.objects.values_list(*fields):
                collect(list(row))
    return "\n".join(" ".join(text.split()) for text in texts)


def english_runs(page: str) -> set[str]:
    """Runs of English words a reader sees or hears; code and typed text (inputs) are data."""
    body = HIDDEN.sub(" ", page)
    spoken = " \n ".join(SPOKEN.findall(body))
    text = ISO_TIME.sub(" ", html.unescape(TAG.sub("\n", body) + "\n" + spoken))
    runs = set()
    for line in text.splitlines():
        line = " ".join(line.split())
        runs.update(match.group(0).strip(STRIP) for match in ENGLISH_RUN.finditer(line))
    return {run for run in runs if len(run) > 1}


def untranslated(page: str, data: str) -> list[str]:
    found = []
    for run in sorted(english_runs(page)):
        if run in KEPT_IN_ENGLISH or run in data:
            continue
        words = [word.strip(STRIP) for word in run.split()]
        if all(word in KEPT_IN_ENGLISH or VERSION.match(word) or len(word) < 2 for word in words):
            continue
        found.append(run)
    return found


@pytest.fixture
def demo(settings):
    settings.DEMO_MODE = True
    demo_seed()
    User = get_user_model()
    researcher = User.objects.get(username="researcher")
    # The history table shows every kind of change; the item list shows a filter's exclusion.
    item = Item.objects.order_by("pk").first()
    Item.objects.filter(pk=item.pk).update(
        excluded=True, exclusion_reason="difficulty filter 3: mean 9.10 in the top 10%"
    )
    ReviewEvent.objects.create(
        action=ReviewEvent.Action.EXCLUDED,
        item=item,
        actor=researcher,
        before={"excluded": False, "review_status": "pending", "language": "en", "duplicate_kind": "exact",
                "format_error": "no_answer", "pii_confirmed": ["EMAIL_ADDRESS"]},
        after={"excluded": True, "exclusion_reason": "withdrawn by the participant", "question": "q",
               "reference": "r", "draft": "d", "model": "m", "translation": "t", "localised": "l", "dataset": "x",
               "copied_from": "y", "version": "v", "conversation_edited": True, "first_question": "f",
               "duplicate_of": 3, "similar_case": 4, "pii_hints": 2},
    )  # fmt: skip
    Endpoint.objects.get_or_create(name="local", defaults={"base_url": "http://127.0.0.1:9/v1", "default_model": "m"})
    # One person holding researcher and reviewer opens the review pages too.
    membership_set(user=researcher, roles=["researcher", "reviewer"])
    _invitation, token = invitation_create(roles=["annotator"], note="", actor=researcher)
    # A quality task leased to them, so its page shows the case under review.
    task = ReviewTask.objects.filter(status=ReviewTask.Status.OPEN).order_by("pk").first()
    ReviewTask.objects.filter(pk=task.pk).update(
        leased_to=researcher, lease_expires_at=timezone.now() + timedelta(hours=1)
    )
    return {
        "researcher": researcher,
        "annotator": User.objects.get(username="annotator"),
        "item": item,
        "invitation": token,
        "task": task,
    }


def pages(demo) -> dict[str, list[str]]:
    dataset = Dataset.objects.order_by("pk").first()
    run = JudgeRun.objects.order_by("pk").first()
    template = JudgeTemplate.objects.order_by("pk").first()
    campaign = Campaign.objects.order_by("pk").first()
    endpoint = Endpoint.objects.get(name="local")
    case = Case.objects.order_by("pk").first()
    task = demo["task"]
    return {
        "researcher": [
            "/", "/dashboard/", "/people/", "/endpoints/", "/endpoints/new/", f"/endpoints/{endpoint.pk}/",
            "/runs/", "/runs/new/", f"/runs/{run.pk}/", "/judge-templates/", f"/judge-templates/{template.pk}/",
            f"/judge-templates/{template.pk}/compare/", "/campaigns/new/", f"/campaigns/{campaign.slug}/",
            "/datasets/", f"/datasets/{dataset.name}/", "/studies/new/", "/studies/demo/", "/studies/demo/edit/",
            "/studies/demo/submissions/", "/studies/demo/submissions/?flagged=1",
            f"/datasets/{dataset.name}/answers/", "/account/tokens/",
            "/audit/", "/review/", "/review/datasets/", "/review/datasets/import/", f"/review/datasets/{dataset.pk}/",
            f"/review/datasets/{dataset.pk}/diff/", f"/review/items/{demo['item'].pk}/", f"/review/cases/{case.pk}/",
            f"/review/task/{task.pk}/", "/no-such-page/",
        ],
        "annotator": ["/annotate/", f"/annotate/{campaign.slug}/"],
        # Before an account: the log-in page and an invitation link.
        "anonymous": ["/accounts/login/", f"/invite/{demo['invitation']}/"],
    }  # fmt: skip


def test_every_page_of_the_team_reads_in_chinese(client, demo):
    data = stored_text()
    problems = {}
    for role, urls in pages(demo).items():
        if role == "anonymous":
            client.logout()
        else:
            client.force_login(demo[role])
        client.cookies["django_language"] = "zh-hans"
        for url in urls:
            response = client.get(url, follow=True)
            assert response.status_code in {200, 404}, url
            if found := untranslated(response.text, data):
                problems[url] = found
    assert problems == {}, "\n".join(f"{url}: {found}" for url, found in problems.items())


def test_the_check_finds_an_untranslated_label():
    """The check itself: an English label is found, the same words as stored data are not."""
    page = '<label for="x">Attention answer</label><p title="Completion code">研究</p><p>Why is the sky blue</p>'
    assert untranslated(page, data="Why is the sky blue during the day") == ["Attention answer", "Completion code"]
