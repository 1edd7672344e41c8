"""Upstreams that misbehave on purpose (tests/judging/hostile_llm.py): one deadline per call,
a decompressed body read up to its cap, a reply text kept up to its cap (past it an error that
says its size, never stored), and usage counts that are not counts stored as unknown, never
failing a batch, so that a resume pays for nothing again (counted at the server)."""

import resource
import threading
import time

import pytest
from asgiref.sync import async_to_sync
from django.db.models.functions import Length

from judging.engine.execution import run_execute_inline
from judging.models import JudgeRun
from judging.runs.creation import run_create
from judging.runs.resume import run_resume
from judging.runs.spec import RunSpec
from llm.calls import ChatRequest
from llm.config import EndpointConfig
from llm.errors import LLMCallError
from llm.models import Endpoint, LLMResponse
from llm.stream import chat_many
from tests.factories import AnswerFactory, CandidateModelFactory, DatasetFactory, ItemFactory
from tests.judging.hostile_llm import HostileLLM

pytestmark = pytest.mark.django_db(transaction=True)

# How much the test process may grow while a hostile reply is read (the bomb inflates to 300 MB).
MEMORY_BOUND_BYTES = 64 * 1024 * 1024


@pytest.fixture
def hostile():
    servers = []

    def make(mode: str, **settings) -> HostileLLM:
        server = HostileLLM(mode)
        for name, value in settings.items():
            setattr(server, name, value)
        servers.append(server.start())
        return server

    yield make
    for server in servers:
        server.stop()


def endpoint_on(server, **options) -> EndpointConfig:
    values = {"timeout_seconds": 10.0, "max_retries": 0, **options}
    return EndpointConfig(
        name="hostile", base_url=server.base_url, api_key_env="FAKE_LLM_KEY", default_model="m", **values
    )


def ask(endpoint, max_tokens=16):
    request = ChatRequest(model="m", messages=(("user", f"q {time.time()}"),), max_tokens=max_tokens)
    [outcome] = async_to_sync(chat_many)(endpoint, [request])
    return outcome


class PeakMemory:
    """The most this process's resident memory grew over a block, sampled every few milliseconds."""

    def __enter__(self):
        self.start = self.peak = self._rss()
        self.done = threading.Event()
        self.sampler = threading.Thread(target=self._sample, daemon=True)
        self.sampler.start()
        return self

    def _rss(self) -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()

    def _sample(self):
        while not self.done.wait(0.002):
            self.peak = max(self.peak, self._rss())

    def __exit__(self, *exc):
        self.done.set()
        self.sampler.join()
        self.peak = max(self.peak, self._rss())
        self.growth = self.peak - self.start


def test_a_server_dripping_a_byte_a_second_ends_at_the_calls_deadline(hostile):
    server = hostile("drip")
    started = time.monotonic()
    outcome = ask(endpoint_on(server, timeout_seconds=1.0))
    assert isinstance(outcome, LLMCallError) and "timeout" in outcome.reason
    # The reply would take minutes at a byte a second; a read timeout alone never fires on it.
    assert time.monotonic() - started < 20


def test_without_a_stated_timeout_a_call_gets_long_enough_for_the_reply_it_asks(hostile, settings):
    # At 10 tokens a second, 600 tokens may take 60 s, far past the 1 s this server computes;
    # one token gets the 0.2 s floor, which the server's silence always outlasts.
    settings.LLM_MIN_CALL_SECONDS = 0.2
    settings.LLM_SLOWEST_TOKENS_PER_SECOND = 10
    server = hostile("slow")
    long_reply = ask(endpoint_on(server, timeout_seconds=None), max_tokens=600)
    assert not isinstance(long_reply, LLMCallError), long_reply
    short_reply = ask(endpoint_on(server, timeout_seconds=None), max_tokens=1)
    assert isinstance(short_reply, LLMCallError) and "no reply within 0.2 s" in short_reply.reason
    # A timeout the endpoint states is the deadline, whatever the reply asked.
    stated = ask(endpoint_on(server, timeout_seconds=0.3), max_tokens=600)
    assert isinstance(stated, LLMCallError) and "no reply within 0.3 s" in stated.reason


def test_a_gzip_bomb_does_not_inflate_in_memory(hostile):
    server = hostile("gzip-bomb")
    with PeakMemory() as memory:
        outcome = ask(endpoint_on(server))
    assert isinstance(outcome, LLMCallError) and "larger than" in outcome.reason
    assert memory.growth < MEMORY_BOUND_BYTES, memory.growth
    assert LLMResponse.objects.count() == 0


@pytest.fixture
def judge_run():
    def make(server, items=6, max_tokens=16):
        endpoint = Endpoint.objects.create(name="hostile", base_url=server.base_url, max_retries=0)
        dataset = DatasetFactory(name="hostile")
        model = CandidateModelFactory(name="m")
        for n in range(items):
            AnswerFactory(item=ItemFactory(dataset=dataset, external_id=f"q{n}", question=f"q{n}"), model=model)
        return run_create(
            spec=RunSpec(
                dataset=dataset,
                mode="pointwise",
                judge_model="j",
                candidates=[model],
                endpoint=endpoint,
                max_tokens=max_tokens,
            )
        )

    return make


def stored_reply_chars(run) -> int:
    judged = run.judgments.annotate(size=Length("raw_text")).values_list("size", flat=True)
    cached = LLMResponse.objects.annotate(size=Length("text")).values_list("size", flat=True)
    return sum(judged) + sum(cached)


@pytest.mark.parametrize("megabytes", [1, 40], ids=["1MB-past-the-text-cap", "40MB-past-the-body-cap"])
def test_a_reply_far_longer_than_max_tokens_is_an_error_with_its_size_and_never_stored(hostile, judge_run, megabytes):
    server = hostile("huge", huge_chars=megabytes * 1024 * 1024)
    run = judge_run(server, items=6, max_tokens=16)
    with PeakMemory() as memory:
        run_execute_inline(run=run)
    # Recorded as errors that say the size; the run stops after three alike (every call fails so).
    errors = list(run.judgments.values_list("call_error", flat=True))
    assert len(errors) >= 3 and all(("characters long" in e or "larger than" in e) for e in errors), errors
    assert stored_reply_chars(run) == 0
    assert memory.growth < MEMORY_BOUND_BYTES, memory.growth
    assert server.count == len(errors)  # none retried: the same server would send it again


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -5, "completion_tokens": 7},
        {"prompt_tokens": 12, "completion_tokens": 2**40},
        {"prompt_tokens": [1, 2], "completion_tokens": "7"},
        [3, 4],
    ],
    ids=["negative", "huge", "a-list-and-a-string", "not-an-object"],
)
def test_usage_counts_that_are_not_counts_are_unknown_and_a_resume_pays_nothing_again(hostile, judge_run, usage):
    server = hostile("usage", usage=usage)
    run = judge_run(server, items=6)
    run_execute_inline(run=run)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED, run.error
    assert run.judgments.filter(call_error="").count() == 6
    assert set(run.judgments.values_list("prompt_tokens", "completion_tokens")) <= {(None, 7), (12, None), (None, None)}
    run_resume(run=run, enqueue=False)
    run_execute_inline(run=run)
    assert server.count == 6
