"""An endpoint's API key never reaches the database, a page, a log or an export, even when the
upstream repeats it; and no endpoint can send the application's own secrets anywhere."""

import io
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from asgiref.sync import async_to_sync
from django.apps import apps
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import models
from django.urls import reverse

from core.roles import Role
from judging.engine.execution import run_execute_inline
from judging.models import Judgment
from judging.results.figures import run_figures_refresh
from judging.runs.creation import run_create
from judging.runs.spec import RunSpec
from llm.calls import ChatRequest
from llm.config import EndpointConfig
from llm.errors import EndpointError, LLMCallError
from llm.models import Endpoint
from llm.secrets import REDACTED, key_variable_allowed, redact_secrets
from llm.selectors import endpoint_config
from llm.stream import chat_many, chat_one
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory, UserFactory

KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"


class EchoingUpstream:
    """An OpenAI-compatible server that repeats the caller's key wherever a careless one might:
    in a 401, in a 500's message, in a reply, and half-masked in a reply."""

    def __init__(self):
        self.authorizations: list[str] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, status, payload):
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                authorization = self.headers.get("Authorization", "")
                upstream.authorizations.append(authorization)
                key = authorization.removeprefix("Bearer ")
                prompt = body["messages"][-1]["content"]
                if "refuse" in prompt:
                    self._send(401, {"error": {"message": f"Incorrect API key provided: {key}."}})
                elif "explode" in prompt:
                    self._send(500, {"error": {"message": f"upstream crashed while using {authorization}"}})
                else:
                    masked = f"{key[:12]}...{key[-8:]}"
                    text = f"Your key {key} (or {masked}) works.\n{{'Factuality': 7, 'Final Score': 7}}"
                    self._send(
                        200,
                        {
                            "choices": [{"message": {"role": "assistant", "content": text}}],
                            "usage": {"prompt_tokens": 3, "completion_tokens": 5},
                        },
                    )

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self):
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def upstream(monkeypatch, fast_retries):
    monkeypatch.setenv("ECHO_API_KEY", KEY)
    server = EchoingUpstream()
    yield server
    server.stop()


def ask(text):
    return ChatRequest(model="m", messages=(("user", text),))


def every_stored_text() -> str:
    """Every text, string and JSON column of every table, as one string."""
    kinds = (models.CharField, models.TextField, models.JSONField)
    chunks = []
    for model in apps.get_models():
        fields = [field.attname for field in model._meta.concrete_fields if isinstance(field, kinds)]
        if fields:
            chunks.extend(str(row) for row in model.objects.values_list(*fields))
    return "\n".join(chunks)


def test_redaction_covers_the_whole_key_and_its_masked_ends(monkeypatch):
    monkeypatch.setenv("ECHO_API_KEY", KEY)
    assert redact_secrets(f"bad key {KEY}!") == f"bad key {REDACTED}!"
    assert redact_secrets(f"key {KEY[:12]}***{KEY[-8:]}") == f"key {REDACTED}***{REDACTED}"
    assert redact_secrets("no secret here: sk-live is a prefix") == "no secret here: sk-live is a prefix"
    # Values of variables that are not key variables are nobody's business here.
    monkeypatch.setenv("SOMETHING_ELSE", "not-a-key-but-long")
    assert redact_secrets("not-a-key-but-long") == "not-a-key-but-long"


@pytest.mark.django_db(transaction=True)
def test_an_upstream_that_repeats_the_key_gets_it_stored_nowhere(upstream, caplog):
    caplog.set_level(logging.DEBUG)
    endpoint = EndpointConfig("echo", upstream.base_url, "ECHO_API_KEY", "m", timeout_seconds=5, max_retries=1)
    outcomes = async_to_sync(chat_many)(endpoint, [ask("hello"), ask("refuse me"), ask("explode")])
    reply, refused, exploded = outcomes
    assert upstream.authorizations[0] == f"Bearer {KEY}"  # the key was sent, as it must be
    assert reply.text.startswith(f"Your key {REDACTED} (or {REDACTED}...{REDACTED}) works.")
    assert isinstance(refused, LLMCallError) and refused.reason == (
        f"HTTP 401 from {upstream.base_url}: Incorrect API key provided: {REDACTED}. "
        "(the key is read from $ECHO_API_KEY)"
    )
    assert isinstance(exploded, LLMCallError) and KEY not in str(exploded) and REDACTED in exploded.reason
    assert chat_one(endpoint, ask("hello")).cached  # the cached copy was stored redacted
    stored = every_stored_text()
    assert "works." in stored and KEY[:8] not in stored and KEY[-8:] not in stored
    assert KEY[:8] not in caplog.text and KEY[-8:] not in caplog.text


@pytest.fixture
def researcher_again(db):
    """A researcher in a transactional test, whose flush may have removed the role groups."""
    for role in Role:
        Group.objects.get_or_create(name=role.value)
    return UserFactory(username="res", roles=["researcher"])


@pytest.mark.django_db(transaction=True)
def test_a_judge_run_against_it_shows_and_exports_no_key(upstream, client, researcher_again, caplog):
    caplog.set_level(logging.DEBUG)
    Endpoint.objects.create(
        name="echo",
        base_url=upstream.base_url,
        api_key_env="ECHO_API_KEY",
        default_model="m",
        max_in_flight=4,
        timeout_seconds=5,
        max_retries=1,
    )
    dataset = DatasetFactory(name="d")
    model = CandidateModelFactory(name="alpha")
    for external_id, question in (("q1", "hello"), ("q2", "please refuse"), ("q3", "explode now")):
        AnswerFactory(item=ItemFactory(dataset=dataset, external_id=external_id, question=question), model=model)
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="m",
            candidates=[model],
            endpoint=Endpoint.objects.get(name="echo"),
            concurrency=2,
        ),
    )
    run_execute_inline(run=run)
    assert sorted(Judgment.objects.values_list("final_score", flat=True), key=str) == [7, None, None]
    assert Judgment.objects.exclude(call_error="").count() == 2
    assert KEY[:8] not in every_stored_text() and KEY[-8:] not in every_stored_text()

    client.force_login(researcher_again)
    run_figures_refresh(run_id=run.pk)  # what the background task does once the run closes
    page = client.get(reverse("judging:run-detail", args=[run.pk])).text
    assert "Incorrect API key provided" in page and KEY[:8] not in page
    for fmt in ("csv", "jsonl"):
        response = client.get(reverse("api-export", args=["judgments"]), {"run": run.pk, "format": fmt})
        body = b"".join(response.streaming_content).decode()
        assert REDACTED in body and KEY[:8] not in body and KEY[-8:] not in body
    out = io.StringIO()
    call_command("export", "--run", str(run.pk), "--what", "judgments", stdout=out)
    assert KEY[:8] not in out.getvalue()
    assert KEY[:8] not in caplog.text


@pytest.mark.parametrize("name", ["SECRET_KEY", "DATABASE_URL", "HOME", "AWS_SECRET_ACCESS_KEY", "openai_api_key", ""])
def test_only_key_variables_may_be_named(name):
    assert not key_variable_allowed(name)


def test_names_ending_in_api_key_and_the_setting_are_allowed(settings):
    assert key_variable_allowed("OPENAI_API_KEY") and key_variable_allowed("DEEPSEEK_API_KEY")
    assert not key_variable_allowed("MY_TOKEN")
    settings.LLM_KEY_VARIABLES = ["MY_TOKEN", "SECRET_KEY"]
    assert key_variable_allowed("MY_TOKEN")
    assert not key_variable_allowed("SECRET_KEY")  # never, whatever the setting says


@pytest.mark.django_db
def test_an_endpoint_naming_secret_key_cannot_be_saved_through_a_form():
    endpoint = Endpoint(name="evil", base_url="https://collector.example/v1", api_key_env="SECRET_KEY")
    with pytest.raises(ValidationError) as raised:
        endpoint.full_clean()
    assert raised.value.message_dict["api_key_env"] == [
        "'SECRET_KEY' cannot hold an endpoint's key: name a variable ending in _API_KEY (e.g. OPENAI_API_KEY), "
        "or list it in LLM_KEY_VARIABLES."
    ]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("variable", ["SECRET_KEY", "DATABASE_URL"])
def test_an_endpoint_row_naming_an_app_secret_sends_nothing(upstream, variable):
    """Written past the form (a fixture, a shell): the call is refused before any request."""
    Endpoint.objects.create(name="evil", base_url=upstream.base_url, api_key_env=variable)
    with pytest.raises(EndpointError, match=f"Endpoint 'evil': '{variable}' cannot hold an endpoint's key"):
        endpoint_config("evil")
    dataset = DatasetFactory(name="d")
    model = CandidateModelFactory(name="alpha")
    AnswerFactory(item=ItemFactory(dataset=dataset), model=model)
    run = run_create(
        spec=RunSpec(
            dataset=dataset,
            mode="pointwise",
            judge_model="m",
            candidates=[model],
            endpoint=Endpoint.objects.get(name="evil"),
            concurrency=1,
        ),
    )
    with pytest.raises(EndpointError):
        run_execute_inline(run=run)
    assert run.shards.get().error.startswith("EndpointError: Endpoint 'evil': '")
    assert upstream.authorizations == []


def test_keys_set_or_rotated_while_running_are_redacted_at_once(monkeypatch):
    monkeypatch.setenv("FIRST_API_KEY", "sk-first-0000000000")
    assert redact_secrets("sk-first-0000000000") == REDACTED
    monkeypatch.setenv("SECOND_API_KEY", "sk-second-111111111")  # a new variable
    assert redact_secrets("sk-second-111111111") == REDACTED
    monkeypatch.setenv("FIRST_API_KEY", "sk-rotated-22222222")  # a new value of a known one
    assert redact_secrets("sk-rotated-22222222 and sk-first-0000000000") == f"{REDACTED} and sk-first-0000000000"
    monkeypatch.delenv("SECOND_API_KEY")
    monkeypatch.setenv("THIRD_API_KEY", "sk-third-333333333")  # one gone, one come: as many as before
    assert redact_secrets("sk-third-333333333") == REDACTED
