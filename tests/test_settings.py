"""Settings work on both databases, and production settings pass Django's deploy check."""

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.contrib.auth.models import Group
from django.db import connection

ROOT = settings.BASE_DIR


def run_manage(*args, **env):
    """Run manage.py in a fresh process with exactly these settings variables."""
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE"}}
    clean.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120
    )


def test_database_follows_database_url():
    url = os.environ.get("DATABASE_URL", "")
    expected = "postgresql" if url.startswith("postgres") else "sqlite"
    assert connection.vendor == expected


@pytest.mark.django_db
def test_sqlite_runs_in_wal_with_a_busy_timeout():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite pragmas only apply to SQLite")
    options = settings.DATABASES["default"]["OPTIONS"]
    assert options["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in options["init_command"]
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        assert cursor.fetchone()[0] == 20000


def test_tasks_use_the_database_backend_with_both_queues():
    assert settings.TASKS["default"]["BACKEND"] == "django_tasks_db.DatabaseBackend"
    assert settings.TASKS["default"]["QUEUES"] == ["default", "judging"]


def test_languages_are_english_and_simplified_chinese():
    assert [code for code, _ in settings.LANGUAGES] == ["en", "zh-hans"]
    assert "django.middleware.locale.LocaleMiddleware" in settings.MIDDLEWARE


@pytest.mark.django_db
def test_role_groups_exist_after_migrations():
    assert sorted(Group.objects.values_list("name", flat=True)) == ["annotator", "researcher", "reviewer"]


def test_secret_key_is_required_without_debug():
    result = run_manage("check", DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off." in result.stderr


def test_a_command_without_its_settings_says_why_in_one_line_and_what_to_do():
    # A fresh clone before `make run`: no DEBUG, no key. Any command, known or not.
    for command in ("judge", "no-such-command"):
        result = run_manage(command, "--help", DEBUG="0")
        assert result.returncode == 1
        assert result.stderr.strip().splitlines() == [
            "Userbench cannot start: SECRET_KEY must be set when DEBUG is off. For development, `make run` "
            "writes a .env with DEBUG=1 and a key of its own once; a deployment sets SECRET_KEY in its environment."
        ]


def test_deploy_check_is_clean_with_production_variables():
    result = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="0",
        SECRET_KEY="a-long-random-production-secret-key-0123456789-abcdefghijklmnop",
        ALLOWED_HOSTS="userbench.example.org",
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout
