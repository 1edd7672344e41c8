"""Issue 22, "keys stay home" and "no requests to internal addresses", attacked as a researcher
would: a key sent to their own server through "Test connection", an endpoint moved under
another researcher's feet, [::ffff:127.0.0.1], the metadata address, a name that rebinds to
loopback between saving and calling, an internal error page read out through the test, and open,
closed and silent ports told apart by its messages.

The servers are real, on loopback (which the test settings allow; each attack takes that away
again), and are driven by the real client. Host names are answered by `fake_getaddrinfo`, which
the LLM_RESOLVER setting names: a DNS server the test controls, for save and call alike.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from config.settings import env_key_hosts
from core.models import AuditEvent
from core.workspaces import membership_set
from llm.calls import ChatRequest
from llm.config import EndpointConfig
from llm.errors import LLMCallError
from llm.models import Endpoint
from llm.stream import chat_one
from tests.factories import UserFactory
from tests.test_local_env import write_env

pytestmark = pytest.mark.django_db

ORG_KEY = "sk-org-5e1f0c9d8b7a6f5e4d3c2b1a0f9e8d7c"
PUBLIC = "93.184.216.34"

# What the test's DNS answers, by host name; other names go to the system's resolver.
DNS: dict[str, list[str]] = {}


def fake_getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
    if host not in DNS:
        return socket.getaddrinfo(host, port, family, type, proto, flags)
    answers = []
    for address in DNS[host]:
        if ":" in address:
            answers.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port or 0, 0, 0)))
        else:
            answers.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port or 0)))
    return answers


class Collector:
    """An HTTP server on loopback (127.0.0.1 and ::ffff:127.0.0.1 alike) that records every
    request's Authorization header and answers with `status`, `body` and `content_type`
    (by default an OpenAI-shaped reply)."""

    def __init__(self, status: int = 200, body: str | None = None, content_type: str = "application/json"):
        self.authorizations: list[str] = []
        reply = {"choices": [{"message": {"role": "assistant", "content": "OK"}}], "usage": {}}
        self.status, self.body, self.content_type = status, body or json.dumps(reply), content_type
        collector = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                collector.authorizations.append(self.headers.get("Authorization", ""))
                payload = collector.body.encode()
                self.send_response(collector.status)
                self.send_header("Content-Type", collector.content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        class DualStack(ThreadingHTTPServer):
            address_family = socket.AF_INET6
            daemon_threads = True

            def server_bind(self):
                self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
                super().server_bind()

        self.server = DualStack(("::ffff:127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}/v1"

    @property
    def count(self) -> int:
        return len(self.authorizations)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def collector():
    server = Collector()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def test_dns(settings, monkeypatch):
    DNS.clear()
    settings.LLM_RESOLVER = "tests.llm.test_egress.fake_getaddrinfo"
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", ORG_KEY)
    yield DNS
    DNS.clear()


@pytest.fixture
def no_internal(settings):
    """As in a deployment: no internal address is allowed."""
    settings.LLM_ALLOWED_INTERNAL_HOSTS = []


def form(**values) -> dict:
    return {
        "name": "mine",
        "base_url": "https://api.openai.com/v1",
        "api_key_env": "",
        "default_model": "m",
        "max_in_flight": "",
        "requests_per_minute": "",
        "timeout_seconds": "5",
        "max_retries": "0",
        **values,
    }


def connection_test_message(client, name: str) -> str:
    """The message "Test connection" shows for the endpoint `name`."""
    response = client.post(reverse("llm:endpoint-test"), {"endpoint": name, "model": ""}, follow=True)
    return [str(message) for message in response.context["messages"]][-1]


# --- Keys stay home -------------------------------------------------------------------------


@pytest.mark.parametrize("variable", ["OPENAI_API_KEY", "STRIPE_API_KEY"])
def test_a_researcher_cannot_save_an_endpoint_sending_a_key_to_their_server(client_as, researcher, collector, variable):
    response = client_as(researcher).post(
        reverse("llm:endpoint-new"), form(base_url=collector.url(), api_key_env=variable)
    )
    assert response.status_code == 400
    assert "LLM_KEY_HOSTS" in response.text and f"The key in {variable} may only be sent to" in response.text
    assert not Endpoint.objects.exists()


def test_test_connection_never_sends_the_organisations_key_to_a_researchers_server(client_as, researcher, collector):
    """The attack of the issue: an endpoint at the researcher's own server naming
    OPENAI_API_KEY (written past the form: a fixture, a shell, an old row), then "Test connection"."""
    Endpoint.objects.create(name="mine", base_url=collector.url(), api_key_env="OPENAI_API_KEY", default_model="m")
    message = connection_test_message(client_as(researcher), "mine")
    assert "LLM_KEY_HOSTS" in message and "may only be sent to api.openai.com" in message
    assert collector.authorizations == []  # refused before any request left


def test_a_run_never_sends_a_key_to_a_host_it_is_not_bound_to(collector):
    config = EndpointConfig(name="x", base_url=collector.url(), api_key_env="OPENAI_API_KEY", default_model="m")
    with pytest.raises(LLMCallError, match="LLM_KEY_HOSTS") as raised:
        chat_one(config, ChatRequest(model="m", messages=(("user", "hi"),), max_tokens=4))
    assert raised.value.kind == "fatal"  # every call would meet it: the run stops, no retry
    assert collector.authorizations == []


def test_a_key_goes_where_the_setting_binds_it_and_no_key_sends_none(
    client_as, researcher, collector, settings, monkeypatch
):
    monkeypatch.setenv("LAB_API_KEY", "lab-key-0123456789")
    settings.LLM_KEY_HOSTS = {**settings.LLM_KEY_HOSTS, "LAB_API_KEY": [f"127.0.0.1:{collector.port}"]}
    client = client_as(researcher)
    assert client.post(reverse("llm:endpoint-new"), form(base_url=collector.url(), api_key_env="LAB_API_KEY"))[
        "Location"
    ]
    assert connection_test_message(client, "mine").startswith("Connection to mine works")
    client.post(reverse("llm:endpoint-new"), form(name="keyless", base_url=collector.url()))
    assert connection_test_message(client, "keyless").startswith("Connection to keyless works")
    assert collector.authorizations == ["Bearer lab-key-0123456789", "Bearer no-key-set"]


def test_the_default_endpoint_sends_its_key_to_its_own_host_only(client_as, researcher, collector, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", collector.url())
    monkeypatch.setenv("OPENAI_MODEL", "m")
    client = client_as(researcher)
    assert connection_test_message(client, "default").startswith("Connection to default works")
    assert collector.authorizations == [f"Bearer {ORG_KEY}"]
    # A variable the setting does not list may go to the default endpoint's host and port too...
    Endpoint.objects.create(name="same", base_url=collector.url(), api_key_env="OTHER_API_KEY", default_model="m")
    assert connection_test_message(client, "same").startswith("Connection to same works")
    # ...but not to another port of it.
    other = Collector()
    try:
        response = client.post(
            reverse("llm:endpoint-new"), form(name="other", base_url=other.url(), api_key_env="OPENAI_API_KEY")
        )
        assert response.status_code == 400 and "LLM_KEY_HOSTS" in response.text
    finally:
        other.stop()


def test_moving_someone_elses_endpoint_is_refused_and_changes_are_audited(client_as, researcher, collector):
    """A second researcher points the first one's endpoint at their own server: the key would go
    with the prompts, so it is refused; what can change is recorded with who, before and after."""
    first = client_as(researcher)
    first.post(reverse("llm:endpoint-new"), form(name="team", api_key_env="OPENAI_API_KEY"))
    endpoint = Endpoint.objects.get(name="team")
    # An admin of the workspace, who may move an endpoint: the key still may not go with it.
    second_researcher = UserFactory(username="res2", roles=["researcher"])
    membership_set(user=second_researcher, roles=["researcher"], admin=True)
    second = client_as(second_researcher)
    edit = reverse("llm:endpoint-edit", args=[endpoint.pk])
    response = second.post(edit, form(name="team", base_url=collector.url(), api_key_env="OPENAI_API_KEY"))
    assert response.status_code == 400 and "LLM_KEY_HOSTS" in response.text
    endpoint.refresh_from_db()
    assert endpoint.base_url == "https://api.openai.com/v1"

    second.post(edit, form(name="team", base_url=collector.url(), api_key_env="", timeout_seconds="9"))
    created, moved = AuditEvent.objects.filter(action="endpoint_changed").order_by("id")
    assert (created.actor_name, created.target, created.details["created"]) == ("res", "endpoint:team", True)
    assert created.details["changes"]["base_url"] == [None, "https://api.openai.com/v1"]
    assert created.details["changes"]["api_key_env"] == [None, "OPENAI_API_KEY"]
    assert (moved.actor_name, moved.target, moved.details["created"]) == ("res2", "endpoint:team", False)
    assert moved.details["changes"]["base_url"] == ["https://api.openai.com/v1", collector.url()]
    assert moved.details["changes"]["api_key_env"] == ["OPENAI_API_KEY", ""]
    assert sorted(moved.details["changes"]) == ["api_key_env", "base_url", "timeout_seconds"]


# --- No requests to internal addresses ------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "169.254.169.254",
        "10.0.0.8",
        "172.16.3.4",
        "192.168.1.1",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.251",
        "240.0.0.1",
        "[fd00::1]",
        "[fe80::1]",
        "[ff02::1]",
        "[::]",
    ],
)
def test_internal_addresses_are_refused_when_saved(client_as, researcher, no_internal, host):
    response = client_as(researcher).post(reverse("llm:endpoint-new"), form(base_url=f"http://{host}:8080/v1"))
    assert response.status_code == 400
    assert "an internal address" in response.text and "LLM_ALLOWED_INTERNAL_HOSTS" in response.text
    assert not Endpoint.objects.exists()


def test_a_name_resolving_to_an_internal_address_is_refused_when_saved(client_as, researcher, no_internal, test_dns):
    test_dns["metadata.lab.test"] = ["169.254.169.254"]
    test_dns["mixed.lab.test"] = [PUBLIC, "10.1.2.3"]
    client = client_as(researcher)
    for host in ("metadata.lab.test", "mixed.lab.test"):
        response = client.post(reverse("llm:endpoint-new"), form(base_url=f"http://{host}/v1"))
        assert response.status_code == 400 and "LLM_ALLOWED_INTERNAL_HOSTS" in response.text
    test_dns["llm.lab.test"] = [PUBLIC]
    assert client.post(reverse("llm:endpoint-new"), form(base_url="http://llm.lab.test/v1")).status_code == 302


def test_ipv4_mapped_loopback_is_refused_when_calling(client_as, researcher, collector, no_internal):
    """[::ffff:127.0.0.1] reaches the loopback server (the control below); refused, it reaches nothing."""
    Endpoint.objects.create(
        name="mapped", base_url=collector.url("[::ffff:127.0.0.1]"), api_key_env="", default_model="m"
    )
    message = connection_test_message(client_as(researcher), "mapped")
    assert "::ffff:127.0.0.1" in message and "IPv4-mapped IPv6" in message and "LLM_ALLOWED_INTERNAL_HOSTS" in message
    assert collector.count == 0


def test_ipv4_mapped_loopback_reaches_the_server_where_loopback_is_allowed(client_as, researcher, collector):
    Endpoint.objects.create(
        name="mapped", base_url=collector.url("[::ffff:127.0.0.1]"), api_key_env="", default_model="m"
    )
    assert connection_test_message(client_as(researcher), "mapped").startswith("Connection to mapped works")
    assert collector.count == 1


def test_the_metadata_address_is_refused_when_calling(client_as, researcher, no_internal, test_dns):
    test_dns["metadata.lab.test"] = ["169.254.169.254"]
    client = client_as(researcher)
    for name, url in (("literal", "http://169.254.169.254/latest"), ("named", "http://metadata.lab.test/latest")):
        Endpoint.objects.create(name=name, base_url=url, api_key_env="", default_model="m", timeout_seconds=2)
        message = connection_test_message(client, name)
        assert "169.254.169.254, an internal address (link-local)" in message, message


def test_a_name_that_rebinds_to_loopback_after_saving_connects_nowhere(
    client_as, researcher, collector, test_dns, settings
):
    """DNS rebinding: the name is public when the endpoint is saved and 127.0.0.1 when it calls."""
    client = client_as(researcher)
    test_dns["rebind.lab.test"] = [PUBLIC]
    settings.LLM_ALLOWED_INTERNAL_HOSTS = []
    response = client.post(reverse("llm:endpoint-new"), form(name="rebind", base_url=collector.url("rebind.lab.test")))
    assert response.status_code == 302  # public when saved
    test_dns["rebind.lab.test"] = ["127.0.0.1"]
    message = connection_test_message(client, "rebind")
    assert "rebind.lab.test is 127.0.0.1, an internal address (loopback)" in message
    assert "LLM_ALLOWED_INTERNAL_HOSTS" in message and collector.count == 0
    # The control: where loopback is allowed, the same name reaches the same server.
    settings.LLM_ALLOWED_INTERNAL_HOSTS = ["127.0.0.0/8"]
    assert connection_test_message(client, "rebind").startswith("Connection to rebind works")
    assert collector.count == 1


def test_the_default_endpoint_is_allowed_as_the_operator_named_it(
    client_as, researcher, collector, no_internal, monkeypatch
):
    monkeypatch.setenv("OPENAI_BASE_URL", collector.url())
    monkeypatch.setenv("OPENAI_MODEL", "m")
    client = client_as(researcher)
    assert connection_test_message(client, "default").startswith("Connection to default works")
    # The same server under its own endpoint is the default's origin too; another port is not.
    assert client.post(reverse("llm:endpoint-new"), form(base_url=collector.url())).status_code == 302
    response = client.post(reverse("llm:endpoint-new"), form(name="x", base_url="http://127.0.0.1:6379/v1"))
    assert response.status_code == 400 and "LLM_ALLOWED_INTERNAL_HOSTS" in response.text


# --- What "Test connection" tells -----------------------------------------------------------

INTERNAL_PAGE = "<html><body><h1>Jenkins</h1>admin token: internal-7f3e91 build 4121 on ci.lab</body></html>"


@pytest.mark.parametrize(
    "status,content_type,body,shown",
    [
        (500, "text/html", INTERNAL_PAGE, "HTTP 500: the server failed."),
        (404, "text/html", INTERNAL_PAGE, "HTTP 404: nothing there"),
        (403, "text/plain", INTERNAL_PAGE, "HTTP 403: the server refused access."),
        (200, "text/html", INTERNAL_PAGE, "HTTP 200, but the reply is not an OpenAI-compatible chat completion."),
    ],
)
def test_an_internal_error_page_is_never_read_out(client_as, researcher, status, content_type, body, shown):
    server = Collector(status=status, body=body, content_type=content_type)
    try:
        Endpoint.objects.create(name="ci", base_url=server.url(), api_key_env="", default_model="m")
        message = connection_test_message(client_as(researcher), "ci")
    finally:
        server.stop()
    assert shown in message
    assert "internal-7f3e91" not in message and "Jenkins" not in message and "<html" not in message


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RawListener:
    """A TCP port that is not an HTTP server: it says `banner` (or nothing) and holds the line."""

    def __init__(self, banner: bytes = b""):
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.banner = banner
        self.connections: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                connection, _address = self.socket.accept()
            except OSError:
                return
            self.connections.append(connection)
            if self.banner:
                connection.sendall(self.banner)

    def stop(self):
        self.socket.close()
        for connection in self.connections:
            connection.close()


class FilteredPort:
    """A port whose connections are never completed, as behind a firewall that drops them: a
    listener with a queue of one that never accepts, its queue taken, so that the kernel drops
    every further SYN."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(0)
        self.port = self.socket.getsockname()[1]
        self.filler = socket.create_connection(("127.0.0.1", self.port))

    def stop(self):
        self.filler.close()
        self.socket.close()


def test_closed_open_and_silent_ports_get_the_same_message(client_as, researcher):
    """A scan through "Test connection" learns nothing: a closed port, a port with another
    service (ssh, redis), one that takes the connection and never answers and a filtered one are
    worded alike."""
    client = client_as(researcher)
    ssh = RawListener(b"SSH-2.0-OpenSSH_9.6\r\n")
    redis = RawListener(b"-ERR unknown command 'POST'\r\n")
    silent = RawListener()
    filtered = FilteredPort()
    messages = []
    try:
        for name, port in (
            ("closed", _closed_port()),
            ("ssh", ssh.port),
            ("redis", redis.port),
            ("silent", silent.port),
            ("filtered", filtered.port),
        ):
            url = f"http://127.0.0.1:{port}/v1"
            Endpoint.objects.create(name=name, base_url=url, api_key_env="", default_model="m", timeout_seconds=1)
            message = connection_test_message(client, name)
            messages.append(message.replace(url, "URL").replace(name, "NAME"))
    finally:
        for listener in (ssh, redis, silent, filtered):
            listener.stop()
    assert len(set(messages)) == 1, messages
    assert (
        messages[0]
        == "Connection to NAME failed: No HTTP answer from URL: nothing answered there in time, or not in HTTP. "
        "A local server busy with a run's calls looks the same: test it again when no run is going."
    )


# --- Settings -------------------------------------------------------------------------------


def test_key_hosts_come_from_the_environment_over_the_defaults(monkeypatch):
    monkeypatch.setenv("LLM_KEY_HOSTS", '{"VLLM_API_KEY": ["vllm.lab:8000"], "OPENAI_API_KEY": []}')
    hosts = env_key_hosts("LLM_KEY_HOSTS")
    assert hosts["VLLM_API_KEY"] == ["vllm.lab:8000"] and hosts["OPENAI_API_KEY"] == []
    assert hosts["DEEPSEEK_API_KEY"] == ["api.deepseek.com"]
    for bad in ("{not json", '["a"]', '{"X_API_KEY": "x.example"}'):
        monkeypatch.setenv("LLM_KEY_HOSTS", bad)
        with pytest.raises(ImproperlyConfigured, match="LLM_KEY_HOSTS"):
            env_key_hosts("LLM_KEY_HOSTS")


def test_the_development_env_file_allows_loopback(tmp_path):
    lines = write_env(tmp_path).read_text().splitlines()
    [allowed] = [line for line in lines if line.startswith("LLM_ALLOWED_INTERNAL_HOSTS=")]
    assert re.fullmatch(r"LLM_ALLOWED_INTERNAL_HOSTS=127\.0\.0\.0/8,::1,localhost", allowed)
