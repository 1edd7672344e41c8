"""Helpers and fixtures of the questionnaire tests (imported by tests/curation/test_study_*.py)."""

import pytest
from django.urls import reverse

from tests.factories import StudyFactory

CONVERSATION = "Question: What is the capital of France?\nAnswer: Paris."


@pytest.fixture
def small_study(db):
    """Two to three cases keep the flow tests short; codes as on Prolific."""
    return StudyFactory(slug="small", min_cases=2, max_cases=3, completion_code="DONE123", screenout_code="SCREEN9")


def case_data(**overrides):
    data = {"service": "ChatGPT", "service_other": "", "conversation": CONVERSATION, "share_link": "",
            "intent": "factual_qa", "intent_other": "", "action": "add"}  # fmt: skip
    data.update(overrides)
    return data


def usage_data(attention="2", **overrides):
    data = {"llms_used": ["ChatGPT", "Claude"], "frequency": "daily", "sat_factual_qa": "4",
            "sat_solve_professional_problem": "3", "sat_text_assistant": "5", "sat_ask_for_advice": "0",
            "sat_seek_creativity": "2", "sat_leisure": "1", "sat_attention": attention}  # fmt: skip
    data.update(overrides)
    return data


class Participant:
    """Walks a study with the Django test client, page by page."""

    def __init__(self, client, study):
        self.client, self.study = client, study

    def url(self, name, *args):
        return reverse(f"curation:study-{name}", args=[self.study.slug, *args])

    def consent(self, query=""):
        response = self.client.post(self.url("start") + query, {"agree": "on"})
        assert response.status_code == 302, response.content
        return response

    def add_cases(self, count, **overrides):
        for _ in range(count):
            response = self.client.post(self.url("cases"), case_data(**overrides))
            assert response.status_code == 302, response.content.decode()

    def about(self, **data):
        payload = {"age_group": "25-34", "occupation": "Nurse", "country": "Kenya"}
        payload.update(data)
        return self.client.post(self.url("about"), payload)

    def to_review(self, cases=2, attention="2"):
        self.add_cases(cases)
        assert self.client.post(self.url("cases"), {"action": "continue"}).status_code == 302
        assert self.about().status_code == 302
        response = self.client.post(self.url("usage"), usage_data(attention=attention))
        assert response.status_code == 302, response.content.decode()

    def submit(self):
        return self.client.post(self.url("review"))


@pytest.fixture
def participant(client, small_study):
    return Participant(client, small_study)
