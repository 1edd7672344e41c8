"""Request bodies larger than their route's limit are refused (413) before any of it is read.

The attacks: an anonymous multipart upload to any URL, with no cookie, was parsed and its file
written to disk in full before the 404; the questionnaire's 413 came after its body had been read
(the input checks read the form first). Django's upload handlers are watched by a spy that counts
the bytes of file parts they receive."""

import io

import pytest
from django.test import Client

from curation.models import Submission
from tests.core import upload_spy
from tests.curation.study_helpers import small_study  # noqa: F401

pytestmark = pytest.mark.django_db

MB = 1024 * 1024


@pytest.fixture
def spy(settings):
    settings.FILE_UPLOAD_HANDLERS = [
        "tests.core.upload_spy.SpyUploadHandler",
        "django.core.files.uploadhandler.MemoryFileUploadHandler",
        "django.core.files.uploadhandler.TemporaryFileUploadHandler",
    ]
    upload_spy.RECEIVED.clear()
    yield upload_spy.RECEIVED
    upload_spy.RECEIVED.clear()


def upload(client, path, size):
    return client.post(path, {"file": _File(size), "note": "hello"})


class _File:
    """A file-like upload of `size` bytes for the test client."""

    def __init__(self, size):
        self.name, self.data = "big.bin", b"x" * size

    def read(self, *args):
        data, self.data = self.data, b""
        return data


def test_an_anonymous_upload_to_a_made_up_url_is_refused_unread(spy):
    response = upload(Client(), "/no-such-page/", 3 * MB)
    assert response.status_code == 413
    assert "Too much text at once" in response.text
    assert response["Connection"] == "close"
    assert spy == []


def test_an_upload_within_the_limit_is_parsed_in_memory_never_on_disk(spy, settings):
    response = upload(Client(), "/no-such-page/", MB)
    assert response.status_code == 404
    assert sum(spy) == MB  # read, as a form within its limit is, but ...
    assert settings.FILE_UPLOAD_MAX_MEMORY_SIZE >= settings.REQUEST_MAX_BYTES  # ... kept in memory


def test_the_questionnaire_refuses_from_the_length_before_reading(spy, small_study):
    browser = Client()
    response = browser.post("/study/small/", {"agree": "on", "file": _File(int(1.5 * MB))})
    assert response.status_code == 413 and spy == []
    assert Submission.objects.count() == 0
    # The same body is within the limit of other routes.
    assert upload(Client(), "/accounts/login/", int(1.5 * MB)).status_code != 413


def test_a_declared_length_alone_is_refused(small_study):
    response = Client().generic(
        "POST",
        "/study/small/",
        b"agree=on",
        content_type="application/x-www-form-urlencoded",
        CONTENT_LENGTH=str(300 * MB),
    )
    assert response.status_code == 413
    for bad in ("-1", "many"):
        response = Client().generic(
            "POST", "/accounts/login/", b"x=1", content_type="application/x-www-form-urlencoded", CONTENT_LENGTH=bad
        )
        assert response.status_code == 413


def test_a_chunked_body_is_counted_and_refused_past_the_limit(small_study, settings):
    settings.STUDY_MAX_REQUEST_BYTES = 10_000

    def chunked(body):
        # As a WSGI server hands over a body without a length: a stream read until it ends.
        return {
            "HTTP_TRANSFER_ENCODING": "chunked",
            "CONTENT_LENGTH": "",
            "CONTENT_TYPE": "application/x-www-form-urlencoded",
            "wsgi.input": io.BytesIO(body),
        }

    big = b"agree=on&padding=" + b"z" * 20_000
    response = Client().generic("POST", "/study/small/", **chunked(big))
    assert response.status_code == 413
    assert Submission.objects.count() == 0
    # Within the limit, the body is read and the page works as with a length.
    small = chunked(b"agree=on")
    response = Client().generic("POST", "/study/small/", **small)
    assert response.status_code == 302
    assert Submission.objects.count() == 1


def test_the_refusal_is_in_the_readers_language(small_study):
    response = Client(HTTP_ACCEPT_LANGUAGE="zh-hans").post("/study/small/", {"padding": "z" * (2 * MB)})
    assert response.status_code == 413
    assert '<html lang="zh-hans">' in response.text
