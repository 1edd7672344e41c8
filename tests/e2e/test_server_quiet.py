"""The wait before each browser test's flush (conftest.py, ServerQuiet): it holds while a
connection to the live server is open or waiting to be accepted, and ends once it is closed."""

import socket
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import ServerQuiet

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_flush_waits_for_an_open_connection_and_no_longer(live_server):
    quiet = live_server.thread.httpd.quiet
    assert isinstance(quiet, ServerQuiet)
    address = urlsplit(live_server.url)
    with socket.create_connection((address.hostname, address.port)) as half_sent:
        # A request whose last line has not arrived: the server is still reading it.
        half_sent.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
        with pytest.raises(AssertionError, match="still had"):
            quiet.wait(timeout=0.5)
    quiet.wait()
    assert quiet.open_connections == 0
