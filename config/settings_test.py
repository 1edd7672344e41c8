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

# The test client's login() calls authenticate() without a request, which django-axes refuses;
# tests of the lockout turn it on (tests/core/test_throttling.py).
AXES_ENABLED = False

# In-process tests count rate limits in local memory: every test starts with none used (a fixture
# clears it), and tests without a database may still make requests. The tests with several
# gunicorn workers (tests/core/test_shared_limits.py) run on the default database cache.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "userbench-tests"}}
