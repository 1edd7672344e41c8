"""No page offers an action its viewer may not do (issue 36, item 6), archived work included
(issue 37, item 2): every form a page of archived work shows (the work archived, or the dataset
of a run or campaign) is sent as the browser would send it, and none meets the refusal saying the
work is archived. What is still allowed stays on the page (the restore, exports, a participant's
withdrawal, cancelling a running run on an archived dataset); the rest is not drawn."""

from html.parser import HTMLParser

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.urls import reverse

from judging.models import JudgeRun
from tests.home.test_archived_read_only import ANSWERS, archive, as_researcher, world  # noqa: F401

pytestmark = pytest.mark.django_db

# Forms of the page's frame (language, workspace switcher, log-out): nothing to do with the work.
FRAME_FORMS = ("set_language", "workspace-switch", "logout")
# What the server says when it refuses a change to archived work (core/archiving.py,
# judging/runs/archive.py, annotation/campaigns.py, annotation/upkeep.py).
REFUSALS = ("restore it first", "restore the dataset first")
# What a browser types into a required field the page left empty, by the field's type.
TYPED = {"number": "1", "email": "a@example.org", "url": "https://example.org/", "date": "2024-01-01"}


class Forms(HTMLParser):
    """The page's forms: each one's action and method, the values it sends as drawn and what a
    person must fill in (required fields left empty), and its submit buttons."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []
        self._form: dict | None = None
        self._select: dict | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        attributes = {name: value if value is not None else "" for name, value in attrs}
        if tag == "form":
            self._form = {
                "action": attributes.get("action") or "",
                "method": (attributes.get("method") or "get").lower(),
                "fields": {},
                "required": {},
                "files": [],
                "buttons": [],
            }
            self.forms.append(self._form)
            return
        form = self._form
        if form is None:
            return
        name = attributes.get("name")
        kind = attributes.get("type", "text" if tag == "input" else "submit").lower()
        if tag == "button" or (tag == "input" and kind in ("submit", "image")):
            if kind in ("submit", "image"):
                form["buttons"].append(attributes)
        elif tag == "input" and name and "disabled" not in attributes:
            if kind == "file":
                form["files"].append(name)
            elif kind in ("checkbox", "radio"):
                if "checked" in attributes:
                    form["fields"].setdefault(name, []).append(attributes.get("value", "on"))
                elif "required" in attributes and name not in form["fields"]:
                    form["fields"][name] = [attributes.get("value", "on")]
            elif kind not in ("reset", "button"):
                value = attributes.get("value", "")
                form["fields"].setdefault(name, []).append(value)
                if not value and "required" in attributes:
                    numeric = attributes.get("inputmode") == "numeric"
                    form["required"][name] = "1" if numeric else TYPED.get(kind, "x")
        elif tag == "select" and name:
            self._select = {"name": name, "first": None, "chosen": None}
        elif tag == "option" and self._select is not None:
            value = attributes.get("value", "")
            if self._select["first"] is None:
                self._select["first"] = value
            if "selected" in attributes:
                self._select["chosen"] = value
        elif tag == "textarea" and name:
            self._textarea = name
            form["fields"][name] = [""]
            if "required" in attributes:
                form["required"][name] = "x"

    def handle_data(self, data):
        if self._form is not None and self._textarea is not None:
            self._form["fields"][self._textarea] = [self._form["fields"][self._textarea][0] + data]

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select" and self._select is not None and self._form is not None:
            chosen = self._select["chosen"] if self._select["chosen"] is not None else self._select["first"]
            if chosen is not None:
                self._form["fields"][self._select["name"]] = [chosen]
            self._select = None


def submissions(page: str, url: str) -> list[tuple[str, str, dict]]:
    """Each POST the page lets a person send: one per submit button (its name and value, and its
    own formaction), with the form's values and every required field filled in."""
    parser = Forms()
    parser.feed(page)
    frame = {reverse(name) for name in FRAME_FORMS}
    sent = []
    for form in parser.forms:
        for button in form["buttons"] or [{}]:
            method = (button.get("formmethod") or form["method"]).lower()
            action = button.get("formaction") or form["action"] or url
            if method != "post" or action.split("?")[0] in frame:
                continue
            data = {name: values if len(values) > 1 else values[0] for name, values in form["fields"].items()}
            for name, value in form["required"].items():
                if not data.get(name):
                    data[name] = value
            if button.get("name"):
                data[button["name"]] = button.get("value", "")
            for name in form["files"]:
                data[name] = SimpleUploadedFile("answers.jsonl", ANSWERS)
            label = button.get("data-action") or button.get("value") or form["fields"].get("action", [""])[0]
            sent.append((f"{action} {label}".strip(), action, data))
    return sent


class Undone(Exception):
    """Raised to roll back what one submission stored, so that each form meets the page as drawn."""


def running(w):
    """A run still at work, so that its page draws the Cancel a person may still use."""
    JudgeRun.objects.filter(pk=w["run"].pk).update(status=JudgeRun.Status.RUNNING)


PAGES = {
    # What is archived, the page (its route name and arguments), and what else is set up first.
    "dataset: its page": ("dataset", "curation:dataset-detail", lambda w: ["ro-set"], None),
    "dataset: its review page": ("dataset", "curation:review-dataset", lambda w: [w["dataset"].pk], None),
    "dataset: its answers page": ("dataset", "judging:dataset-answers", lambda w: ["ro-set"], None),
    "dataset: a finished run's page": ("dataset", "judging:run-detail", lambda w: [w["run"].pk], None),
    "dataset: a running run's page": ("dataset", "judging:run-detail", lambda w: [w["run"].pk], running),
    "dataset: a campaign's page": ("dataset", "annotation:results", lambda w: ["ro-camp"], None),
    "frozen dataset: its page": ("frozen", "curation:dataset-detail", lambda w: ["ro-frozen"], None),
    "frozen dataset: its review page": ("frozen", "curation:review-dataset", lambda w: [w["frozen"].pk], None),
    "run: its page": ("run", "judging:run-detail", lambda w: [w["run"].pk], None),
    "running run: its page": ("run", "judging:run-detail", lambda w: [w["run"].pk], running),
    "campaign: its page": ("campaign", "annotation:results", lambda w: ["ro-camp"], None),
    "study: its page": ("study", "curation:study-detail", lambda w: ["ro-study"], None),
    "study: its submissions": ("study", "curation:study-submissions", lambda w: ["ro-study"], None),
    "study: a submission's decision page": (
        "study",
        "curation:study-submission-decide",
        lambda w: ["ro-study", w["submission"].pk],
        None,
    ),
}


@pytest.mark.parametrize("case", list(PAGES))
def test_every_form_a_page_of_archived_work_shows_works(client, world, case):  # noqa: F811
    archived, name, args, setup = PAGES[case]
    if setup:
        setup(world)
    archive(world[archived])
    researcher = as_researcher(client, world)
    url = reverse(name, args=args(world))
    if name == "curation:study-submission-decide":
        url += "?decision=approve"
    page = researcher.get(url)
    assert page.status_code == 200
    text = page.content.decode()
    assert not any(refusal in text for refusal in REFUSALS)
    refused = []
    for label, action, data in submissions(text, url):
        try:
            with transaction.atomic():
                response = researcher.post(action, data, follow=True)
                raise Undone
        except Undone:
            pass
        shown = response.content.decode()
        if response.status_code >= 400 or any(refusal in shown for refusal in REFUSALS):
            refused.append((label, response.status_code))
    assert not refused, refused


NOTICES = {
    # What is archived, the page, and the notice it shows where its controls were.
    "dataset": [
        ("curation:review-dataset", lambda w: [w["dataset"].pk], "dataset-archived"),
        ("judging:run-detail", lambda w: [w["run"].pk], "actions-archived"),
    ],
    "frozen": [("curation:dataset-detail", lambda w: ["ro-frozen"], "copy-archived")],
    "run": [("judging:run-detail", lambda w: [w["run"].pk], "actions-archived")],
    "study": [
        ("curation:study-detail", lambda w: ["ro-study"], "duplicates-archived"),
        ("curation:study-submissions", lambda w: ["ro-study"], "decisions-archived"),
    ],
}


@pytest.mark.parametrize("archived", list(NOTICES))
def test_a_page_of_archived_work_says_why_its_controls_are_gone_and_keeps_what_reads(client, world, archived):  # noqa: F811
    researcher = as_researcher(client, world)
    pages = [(reverse(name, args=args(world)), notice) for name, args, notice in NOTICES[archived]]
    live = {url: researcher.get(url).content.decode() for url, _ in pages}
    archive(world[archived])
    for url, notice in pages:
        shown = researcher.get(url).content.decode()
        assert f'id="{notice}"' in shown and f'id="{notice}"' not in live[url], url
        # The way to the restore: on the page, or the archived dataset's page.
        assert "#archived" in shown or reverse("curation:dataset-detail", args=["ro-set"]) in shown, url
    study = researcher.get(reverse("curation:study-detail", args=["ro-study"])).content.decode()
    submissions = researcher.get(reverse("curation:study-submissions", args=["ro-study"])).content.decode()
    edit = reverse("curation:study-edit", args=["ro-study"])
    decide = reverse("curation:study-submission-decide", args=["ro-study", world["submission"].pk])
    assert (edit in study) == (archived != "study") and (decide in submissions) == (archived != "study")
    # Read-only things stay: the exports and the bundle.
    assert "/api/exports/bundle/" in study
