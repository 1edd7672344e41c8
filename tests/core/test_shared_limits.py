"""Limits hold with several gunicorn workers, as deployed: the default cache is the database's,
shared by every worker, and each request is counted in one atomic step.

The attacks: with four workers, a 30-a-minute limit let 120 of 200 requests through (each
worker counted alone in its own memory), and the questionnaire's 20 new submissions an hour let
80 through; and a body of any size was read before the server refused it. Requests are fired
together from many threads at gunicorn with four workers, on this test's own database."""

import http.client
import re
import socket
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.management import call_command

from curation.models import Submission
from tests.factories import StudyFactory
from tests.processes import free_port, shared_database, start_web_server, stop, wait_for  # noqa: F401

pytestmark = [pytest.mark.processes]

DATABASE_CACHE = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "userbench_cache"}}


def request(port, method, path, body=b"", headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.getheaders(), response.read()
    finally:
        connection.close()


def answers(port) -> bool:
    try:
        return request(port, "GET", "/accounts/login/")[0] == 200
    except OSError:
        return False


@pytest.fixture
def server(shared_database, settings):
    """gunicorn, four workers, on the default (database) cache: its table made as `migrate` makes it."""
    settings.CACHES = DATABASE_CACHE
    call_command("migrate", verbosity=0)  # nothing to apply: its post_migrate step makes the cache table
    StudyFactory(slug="shared", min_cases=1, max_cases=2)
    port = free_port()
    process = start_web_server(
        shared_database,
        port,
        workers=4,
        API_THROTTLE_ANON="30/hour",
        STUDY_THROTTLE_START="20/hour",
    )
    try:
        wait_for(lambda: answers(port), processes=[process], what="gunicorn to answer")
        yield port
    finally:
        stop(process)


def fire(count, send):
    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(lambda _n: send(), range(count)))


def test_the_anonymous_api_limit_holds_across_four_workers(server):
    statuses = fire(200, lambda: request(server, "GET", "/api/me/")[0])
    assert statuses.count(401) == 30 and statuses.count(429) == 170


def test_new_submissions_are_limited_across_four_workers(server):
    status, headers, body = request(server, "GET", "/study/shared/")
    assert status == 200
    cookie = next(value for name, value in headers if name.lower() == "set-cookie" and "csrftoken" in value)
    csrf = cookie.split(";")[0].split("=", 1)[1]
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1).decode()
    form = f"agree=on&csrfmiddlewaretoken={token}".encode()
    headers = {"Cookie": f"csrftoken={csrf}", "Content-Type": "application/x-www-form-urlencoded"}
    # Each consent comes without a session: a new participant every time, from one address.
    statuses = fire(60, lambda: request(server, "POST", "/study/shared/", form, headers)[0])
    assert statuses.count(302) == 20 and statuses.count(429) == 40
    assert Submission.objects.filter(study__slug="shared").count() == 20


def test_a_huge_upload_is_refused_from_its_headers_alone(server):
    """300 MB announced, none of it sent: the answer comes before any body."""
    with socket.create_connection(("127.0.0.1", server), timeout=120) as raw:
        raw.sendall(
            b"POST /no-such-page/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: multipart/form-data; boundary=xyz\r\n"
            b"Content-Length: 314572800\r\n\r\n--xyz\r\n"
        )
        reply = raw.recv(65536)
    assert reply.startswith(b"HTTP/1.1 413 "), reply[:200]
