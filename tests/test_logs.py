"""The access-log format README recommends writes no query string (Prolific IDs, resume tokens),
no client address and no referrer: checked with gunicorn's own logger."""

import io
import logging
import re
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.conf import settings
from gunicorn.config import Config

README = Path(settings.BASE_DIR) / "README.md"
QUERY = "PROLIFIC_PID=5f1e0c2b9a8d7e6f5a4b3c2d&STUDY_ID=st&SESSION_ID=se"
TOKEN = "Xq3v9Kz1_private-resume-token"


def the_one(pattern: str) -> str:
    """What README gives for a gunicorn option: each of its command lines and units gives the same."""
    found = set(re.findall(pattern, README.read_text(encoding="utf-8")))
    assert len(found) == 1, f"README gives {len(found)} different values for {pattern!r}: {sorted(found)}"
    return found.pop()


def recommended_format() -> str:
    return the_one(r"--access-logformat '([^']+)'")


def recommended_logger_class() -> str:
    return the_one(r"--logger-class (\S+)")


def access_line(fmt: str, path: str, query: str, logger_class: str = "gunicorn.glogging.Logger") -> str:
    cfg = Config()
    cfg.set("accesslog", "-")
    cfg.set("access_log_format", fmt)
    cfg.set("logger_class", logger_class)
    logger = cfg.logger_class(cfg)
    stream = io.StringIO()
    logger.access_log.handlers = [logging.StreamHandler(stream)]
    environ = {
        "REQUEST_METHOD": "GET", "RAW_URI": f"{path}?{query}", "PATH_INFO": path, "QUERY_STRING": query,
        "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "198.51.100.7",
        "HTTP_REFERER": f"https://userbench.example.org{path}?{query}", "HTTP_USER_AGENT": "Mozilla/5.0",
    }  # fmt: skip
    response = SimpleNamespace(status="302 Found", sent=0, headers=[])
    logger.access(response, SimpleNamespace(headers=[]), environ, timedelta(milliseconds=12))
    return stream.getvalue()


@pytest.mark.parametrize(
    "path,query",
    [("/study/demo/", QUERY), ("/study/demo/resume/", f"token={TOKEN}")],
)
def test_the_recommended_access_log_keeps_no_ids_tokens_or_addresses(path, query):
    line = access_line(recommended_format(), path, query)
    assert f'"GET {path} HTTP/1.1" 302 0 12ms' in line
    for secret in ("5f1e0c2b9a8d7e6f5a4b3c2d", TOKEN, "198.51.100.7", "?"):
        assert secret not in line


def test_the_usual_combined_format_would_have_logged_them():
    """The check above can fail: gunicorn's request line (%(r)s) carries the query string."""
    line = access_line('%(h)s "%(r)s" %(s)s', "/study/demo/", QUERY)
    assert "5f1e0c2b9a8d7e6f5a4b3c2d" in line and "198.51.100.7" in line


def test_resume_links_carry_the_token_in_the_query_string_only():
    from django.urls import reverse

    assert reverse("curation:study-resume", args=["demo"]) == "/study/demo/resume/"


@pytest.mark.parametrize("path", [f"/study/demo/resume/{TOKEN}/", f"/invite/{TOKEN}/"])
def test_old_links_with_the_token_in_the_path_are_logged_without_it(path):
    """Resume and invitation links from before carry the token in the path; they still work (by a
    redirect), and the recommended logger writes `[token]` in its place."""
    line = access_line(recommended_format(), path, "", recommended_logger_class())
    assert TOKEN not in line
    assert path.replace(TOKEN, "[token]") in line
    # Without the logger class, the path would have carried it.
    assert TOKEN in access_line(recommended_format(), path, "")


def test_invitation_and_resume_links_carry_their_tokens_in_the_query_string(client, db):
    from django.urls import reverse

    assert reverse("invitation-accept") == "/invite/"
    assert client.get(f"/invite/{TOKEN}/")["Location"] == f"/invite/?token={TOKEN}"
    assert client.get(f"/study/demo/resume/{TOKEN}/")["Location"] == f"/study/demo/resume/?token={TOKEN}"
