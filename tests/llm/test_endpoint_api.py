"""GET /api/endpoints/: a script finds the named endpoints it may name in POST /api/runs/, with
their limits (tokens per minute among them), and never a key."""

import pytest
from django.urls import reverse

from llm.models import Endpoint

pytestmark = pytest.mark.django_db

SECRET = "sk-never-in-the-api-0123456789"


def test_a_researcher_lists_the_endpoints_with_their_limits_and_no_key(client_as, researcher, monkeypatch):
    monkeypatch.setenv("VLLM_KEY", SECRET)
    Endpoint.objects.create(
        name="lab-vllm",
        base_url="http://127.0.0.1:8000/v1",
        api_key_env="VLLM_KEY",
        default_model="qwen",
        requests_per_minute=500,
        tokens_per_minute=90_000,
    )
    Endpoint.objects.create(name="local", base_url="http://127.0.0.1:8080/v1", api_key_env="", timeout_seconds=30)
    response = client_as(researcher).get(reverse("api-endpoints"))
    assert response.status_code == 200
    assert SECRET not in response.text
    rows = {row["name"]: row for row in response.json()["results"]}
    assert sorted(rows) == ["lab-vllm", "local"]
    lab, local = rows["lab-vllm"], rows["local"]
    assert (lab["api_key_env"], lab["key_set"], lab["requests_per_minute"], lab["tokens_per_minute"]) == (
        "VLLM_KEY",
        True,
        500,
        90_000,
    )
    # Blank limits are null: auto in flight, a deadline that fits the reply asked.
    assert (lab["max_in_flight"], lab["timeout_seconds"], local["timeout_seconds"], local["key_set"]) == (
        None,
        None,
        30.0,
        False,
    )
    assert lab["workspace"] == "default"


def test_the_endpoint_list_is_for_researchers_only(client, client_as, reviewer, annotator):
    url = reverse("api-endpoints")
    assert client.get(url).status_code in {401, 403}
    assert client_as(reviewer).get(url).status_code == 403
    assert client_as(annotator).get(url).status_code == 403
