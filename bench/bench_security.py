"""What the security measures cost where people wait, measured side by side in one run.

1. Key redaction: turning 2,000 judge-sized replies (about 1.5 KB) into ChatResults, which
   redacts every API-key value set in the environment (three here), against the same texts
   with redaction bypassed.
2. The API: GET /api/me/ in-process, 400 times, with the throttles (two cache reads and a
   write), the audit-free path, and the Content-Security-Policy header, against the same
   request with throttles and the CSP middleware switched off.
3. A participant saving a case: the quick personal-information check on the longest case a
   participant may send (20,000 characters), against the form's own length check.

Run: .venv/bin/python bench/bench_security.py
"""

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._django import setup_django  # noqa: E402

setup_django()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.test import Client, override_settings  # noqa: E402

from core.api import MeApi  # noqa: E402
from curation.pii.hints import quick_personal_info  # noqa: E402
from llm import calls as llm_calls  # noqa: E402
from llm import secrets as llm_secrets  # noqa: E402


def per_call(fn, rounds: int) -> float:
    """Median seconds per call over 5 runs of `rounds` calls."""
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(rounds):
            fn()
        runs.append((time.perf_counter() - start) / rounds)
    return statistics.median(runs)


def bench_redaction() -> None:
    for n, name in enumerate(("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "QWEN_API_KEY")):
        os.environ[name] = f"sk-bench-{n}-" + "x" * 40
    reply = (
        "The answer explains the steps clearly and matches the reference in substance. " * 18
        + "\n{'Factuality': 7, 'User Satisfaction': 8, 'Final Score': 7}"
    )
    replies = [f"{n}: {reply}" for n in range(2000)]

    def with_redaction():
        for text in replies:
            llm_calls.ChatResult(text, 10, 200, 100, False)

    original = llm_secrets.redact_secrets
    with_time = per_call(with_redaction, 1)
    llm_secrets.redact_secrets = lambda text, secrets=None: text
    try:
        without_time = per_call(with_redaction, 1)
    finally:
        llm_secrets.redact_secrets = original
    print(
        f"reply redaction: {with_time / len(replies) * 1e6:.1f} us per reply with it, "
        f"{without_time / len(replies) * 1e6:.1f} us without ({with_time / without_time:.2f}x); "
        f"a loopback judge call takes about 2,000 us"
    )


def bench_api() -> None:
    user, _ = get_user_model().objects.get_or_create(username="bench-security")
    browser = Client(SERVER_NAME="localhost")
    browser.force_login(user)

    def get_me():
        assert browser.get("/api/me/").status_code == 200

    # A rate no run reaches, so both sides do the same work apart from what is measured.
    rates = {**settings.THROTTLE_RATES, "api_user": "100000000/min"}
    plain_middleware = [m for m in settings.MIDDLEWARE if m != "django.middleware.csp.ContentSecurityPolicyMiddleware"]
    throttles = MeApi.throttle_classes
    with override_settings(THROTTLE_RATES=rates):
        guarded = per_call(get_me, 400)
        MeApi.throttle_classes = []
        try:
            with override_settings(MIDDLEWARE=plain_middleware):
                bare = per_call(get_me, 400)
        finally:
            MeApi.throttle_classes = throttles
    print(
        f"GET /api/me/: {guarded * 1000:.2f} ms with throttles and CSP, {bare * 1000:.2f} ms without "
        f"({guarded / bare:.2f}x)"
    )


def bench_participant_check() -> None:
    text = "Question: " + ("How do I plan a week of meals on a budget of 50 pounds? " * 360)[:19_900] + "\nAnswer: ..."
    check = per_call(lambda: quick_personal_info(text), 50)
    length = per_call(lambda: len(text) <= 20_000, 50)
    print(
        f"quick personal-information check on a 20,000-character case: {check * 1000:.2f} ms "
        f"(the length check: {length * 1e6:.2f} us)"
    )


if __name__ == "__main__":
    bench_redaction()
    bench_api()
    bench_participant_check()
