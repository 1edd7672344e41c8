"""Browser tests: Playwright drives Debian's Chromium against pytest-django's live server.

Browsers cannot be downloaded on these machines, so the launch points at the system
Chromium. Run this folder in its own pytest process (see Makefile `test-browser`).
"""

import os
import select
import shutil
import threading
import time
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

# Debian's Chromium in the build Playwright itself uses for headless runs (the package
# chromium-headless-shell): the same Blink and V8 without the desktop browser's compositor and
# GPU process; the whole browser stage needed 379 s of CPU with it, 742 s with the desktop
# browser. The desktop browser stands in where only it is installed.
CHROMIUM = shutil.which("chromium-headless-shell") or shutil.which("chromium") or "/usr/bin/chromium"
# How long an expectation may poll for what the page should show. It is a bound, not a wait: a
# fast page passes at once. Playwright's 5 s default failed when the three suites and two
# Chromiums shared two cores.
EXPECT_TIMEOUT_MS = 30_000


@pytest.fixture(autouse=True, scope="session")
def patient_expectations():
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--disable-sync",
            # No name resolves but the live server's: a page that sends the browser elsewhere
            # (Prolific's completion link) fails locally, and nothing leaves the machine.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
        ],
    }


@contextmanager
def sent_to(page, url):
    """Around the click that sends the browser to `url` outside the live server (Prolific's
    completion link): the request for it is what shows where it was sent, since a redirect's
    target is never routed to a stand-in in the headless build, and no name but the live server's
    resolves. Returns once the page it was sent to (a stand-in or the browser's error page) loaded,
    so that the next navigation is not cut short by it."""
    here = urlsplit(page.url).netloc
    with page.expect_request(lambda request: request.url == url):
        yield
    page.wait_for_url(lambda now: urlsplit(now).netloc != here)


def requests_kept_home(page, server_url: str) -> list[str]:
    """Abort whatever a page asks outside the live server (no CDN, no third party) and return the
    list of those addresses, for the test to find empty."""
    outside: list[str] = []

    def check(route):
        url = route.request.url
        if url.startswith(server_url) or url.startswith("data:"):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    page.route("**/*", check)
    return outside


@pytest.fixture
def blocked_requests(page, live_server):
    """Fail loudly if a page asks anything outside the live server (no CDN, no third party)."""
    return requests_kept_home(page, live_server.url)


@pytest.fixture
def log_in(page, live_server):
    """log_in(username, password) signs in through the real log-in form."""

    def sign_in(username, password):
        page.goto(f"{live_server.url}/accounts/login/")
        page.get_by_label("Username").or_(page.get_by_label("用户名")).fill(username)
        page.get_by_label("Password").or_(page.get_by_label("密码")).fill(password)
        page.get_by_role("button", name="Log in").or_(page.get_by_role("button", name="登录")).click()

    return sign_in


@pytest.fixture
def signed_in_page(browser, live_server):
    """signed_in_page(username, language, viewport) -> a page of a new browser context of that
    size and language, signed in through the real log-in form (password "pw-for-tests"); its
    context is closed after the test (requests_answered_before_the_flush)."""

    def open_page(username, language, viewport, permissions=()):
        context = browser.new_context(viewport=viewport)
        if permissions:
            context.grant_permissions(list(permissions), origin=live_server.url)
        context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.locator("#id_username").fill(username)
        page.locator("#id_password").fill("pw-for-tests")
        page.get_by_role("button", name="Log in").or_(page.get_by_role("button", name="登录")).click()
        expect(page.locator("form.logout")).to_be_visible()
        return page

    return open_page


@pytest.fixture(autouse=True)
def role_groups(request):
    """Browser tests use transactional databases, whose flush after each test also removes
    the role groups the migration made; put them back so every test starts as migrate leaves it."""
    if "django_db_setup" not in request.fixturenames and not request.node.get_closest_marker("django_db"):
        return
    request.getfixturevalue("transactional_db")
    from django.contrib.auth.models import Group

    from core.roles import Role

    for role in Role:
        Group.objects.get_or_create(name=role.value)


class ServerQuiet:
    """Tells when the live server has nothing left to answer: no connection accepted and not yet
    closed, and none waiting in the listening socket's backlog (one the browser opened just before
    its page closed, which the server has not accepted yet). Django's test server answers in
    daemon threads, which socketserver does not keep, so they cannot be joined instead. The
    server's loop takes a lock around each accept, so a look under the same lock never falls
    between a connection leaving the backlog and being counted."""

    def __init__(self, httpd):
        self.httpd = httpd
        self.lock = threading.RLock()  # the loop closes refused requests while it holds it
        self.open_connections = 0
        handle_next, accept, close = httpd._handle_request_noblock, httpd.get_request, httpd.shutdown_request

        def handle_next_under_the_lock():
            with self.lock:
                handle_next()

        def counted_accept():
            connection = accept()
            self.open_connections += 1
            return connection

        def counted_close(connection):
            try:
                close(connection)
            finally:
                with self.lock:
                    self.open_connections -= 1

        httpd._handle_request_noblock = handle_next_under_the_lock
        httpd.get_request = counted_accept
        httpd.shutdown_request = counted_close

    def wait(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                waiting, _, _ = select.select([self.httpd.socket], [], [], 0)
                if not waiting and self.open_connections == 0:
                    return
            time.sleep(0.01)
        raise AssertionError(
            f"the live server still had {self.open_connections} connection(s) open, or one waiting to be "
            f"accepted, after {timeout} s"
        )


@pytest.fixture(autouse=True)
def requests_answered_before_the_flush(request, role_groups):
    """The live server answers in threads of this process, on the test's own connection to the
    in-memory database: a request still being answered when a test ends (a page's next progress
    poll) reads the tables the flush after the test is emptying ("database table is locked"), and
    a page left open keeps polling into the next test. So every browser context a test opened is
    closed when it ends (pytest-playwright closes only its own), and the flush waits until the
    server has answered everything they sent and their connections are closed."""
    fixtures = request.fixturenames
    server = request.getfixturevalue("live_server") if "live_server" in fixtures else None
    browser = request.getfixturevalue("browser") if "browser" in fixtures else None
    if server is not None and not hasattr(server.thread.httpd, "quiet"):
        server.thread.httpd.quiet = ServerQuiet(server.thread.httpd)
    yield
    for context in browser.contexts if browser is not None else ():
        context.close()
    if server is not None:
        server.thread.httpd.quiet.wait()


def in_a_worker_thread(work):
    """Run `work()` as a worker would, off the thread Playwright's event loop runs on, and give
    back what it returned (or raise what it raised) in the test's thread.

    The browser suite's database is SQLite in memory with a shared cache: the live server's
    threads use the test's own connection, and this thread opens one of its own. Django never
    closes a connection to an in-memory database (that would drop it), so a worker thread's
    connection would outlive the thread, and a statement it left unfinished would keep a lock on
    its tables: a later write there by a page's request, in this test or the next, is then
    refused at once as "database table is locked". So the thread's connection is really closed
    when the work is done; the database lives on in the test's connection."""
    from django.db import connections

    outcome: dict = {}

    def run():
        try:
            outcome["value"] = work()
        except BaseException as error:  # noqa: BLE001 - raised again in the test's thread
            outcome["error"] = error
        finally:
            for connection in connections.all(initialized_only=True):
                if connection.connection is not None:
                    connection.connection.close()
                    connection.connection = None

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def update_between_polls(rows, **values) -> None:
    """`rows.update(**values)` from the test's thread, on the connection the live server's threads
    share: while a page's progress poll is reading the same table, SQLite's shared cache refuses
    the write at once ("database table is locked"; no busy timeout applies), so it is tried again
    once the poll has been answered. An update is idempotent: trying again changes nothing else."""
    from django.db import OperationalError

    for _attempt in range(200):
        try:
            rows.update(**values)
            return
        except OperationalError as error:
            if "locked" not in str(error):
                raise
            time.sleep(0.05)
    rows.update(**values)


def upload_followed_to_its_end(article, upload, execute, words: dict, imported: int) -> None:
    """A large upload's article follows its worker without a reload: part-way (its lines and
    bytes read), then the worker's real pass (`execute`) to the end, `imported` records stored."""
    rows = type(upload).objects.filter(pk=upload.pk)
    expect(article.locator('[data-field="status_label"]')).to_have_text(words["queued"])
    # A worker part-way through the file.
    update_between_polls(rows, status="running", lines_read=6, bytes_read=upload.size // 2)
    expect(article.locator('[data-field="status_label"]')).to_have_text(words["reading"])
    expect(article.locator('[data-field="lines_read"]')).to_have_text("6")
    expect(article.locator("progress")).to_have_attribute("value", str(upload.size // 2 * 100 // upload.size))
    update_between_polls(rows, status="queued")
    assert execute(upload_id=upload.pk) == "finished"
    expect(article.locator('[data-field="status_label"]')).to_have_text(words["finished"])
    expect(article.locator('[data-field="imported"]')).to_have_text(str(imported))
    expect(article.locator("progress")).to_have_attribute("value", "100")
