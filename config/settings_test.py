"""Test overlay: same settings, fast hashing, immediate task backend optional per test."""

import os

os.environ.setdefault("DEBUG", "true")
# Tests never read a developer's local .env: what they assert must not depend on it.
os.environ["USERBENCH_ENV_FILE"] = ""

from config.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES["staticfiles"]["BACKEND"] = "django.contrib.staticfiles.storage.StaticFilesStorage"  # noqa: F405

# The loopback LLM servers of the judging tests read their (fake) key from these variables.
LLM_KEY_VARIABLES = ["FAKE_LLM_KEY", "VLLM_KEY"]
# ... and may send them to those servers on loopback; every test server is on loopback, which
# tests of the refusals take away again (tests/llm/test_egress.py).
LOOPBACK = ["127.0.0.1", "localhost", "[::1]"]
LLM_KEY_HOSTS = {
    **LLM_KEY_HOSTS,  # noqa: F405
    **{name: LOOPBACK for name in ("FAKE_LLM_KEY", "VLLM_KEY", "ECHO_API_KEY", "FAKE_JUDGE_API_KEY")},
}
LLM_ALLOWED_INTERNAL_HOSTS = ["127.0.0.0/8", "::1", "localhost"]

# The test client's login() calls authenticate() without a request, which django-axes refuses;
# tests of the lockout turn it on (tests/core/test_throttling.py).
AXES_ENABLED = False

# In-process tests count rate limits in local memory: every test starts with none used (a fixture
# clears it), and tests without a database may still make requests. The tests with several
# gunicorn workers (tests/core/test_shared_limits.py) run on the default database cache.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "userbench-tests"}}
