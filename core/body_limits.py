"""Request bodies larger than their route allows are refused before any of them is read.

Anyone may send a body to any address, with no cookie: a multipart upload to a made-up URL was
parsed in full (the input checks read the form; Django writes file parts over 2.5 MB to
temporary files) before the 404, and the questionnaire read 200 MB before its 413. This
middleware comes first, so nothing before it reads the body, and answers 413 from the
Content-Length header alone. A body sent without one (Transfer-Encoding: chunked) is read by
counting, into memory, and refused as soon as it passes the limit; so no body larger than its
route's limit is ever read whole or written anywhere.

Limits: REQUEST_MAX_BYTES for every route, unless the path starts with a prefix of
REQUEST_BODY_LIMITS (the longest prefix wins), whose value names the setting holding its limit.
"""

from __future__ import annotations

import io

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils import translation

# How much of a chunked body is read at a time while it is counted.
CHUNK_BYTES = 64 * 1024
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def body_limit(path: str) -> int:
    """The largest body (bytes) a request to `path` may carry."""
    prefixes = getattr(settings, "REQUEST_BODY_LIMITS", {})
    matching = [prefix for prefix in prefixes if path.startswith(prefix)]
    if matching:
        return int(getattr(settings, prefixes[max(matching, key=len)]))
    return int(settings.REQUEST_MAX_BYTES)


def too_large(request: HttpRequest) -> HttpResponse:
    """413 with a page in the reader's language (from their cookie or browser: the session and
    the person are not loaded yet, and need not be)."""
    if not hasattr(request, "user"):
        request.user = AnonymousUser()
    language = translation.get_language_from_request(request)
    with translation.override(language):
        body = render_to_string("core/too_large.html", {}, request=request)
    response = HttpResponse(body, status=413)
    # The rest of the body is never read: the connection cannot carry another request.
    response["Connection"] = "close"
    return response


class BodyLimitMiddleware:
    """Refuses (413) a request whose body is larger than its route's limit, before reading it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = body_limit(request.path_info)
        declared = request.META.get("CONTENT_LENGTH")
        if declared:
            try:
                length = int(declared)
            except ValueError:
                length = limit + 1
            if length > limit or length < 0:
                return too_large(request)
        elif "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            if request.method not in BODY_METHODS or not self._read_counted(request, limit):
                return too_large(request)
        return self.get_response(request)

    @staticmethod
    def _read_counted(request: HttpRequest, limit: int) -> bool:
        """Read a body that came without a length, at most limit + 1 bytes; keep it for the view
        when it fits. Django would otherwise read nothing of it (it trusts Content-Length)."""
        stream = request.META.get("wsgi.input")
        if stream is None:
            return False
        received = bytearray()
        while len(received) <= limit:
            chunk = stream.read(min(CHUNK_BYTES, limit + 1 - len(received)))
            if not chunk:
                break
            received += chunk
        if len(received) > limit:
            return False
        request.META["CONTENT_LENGTH"] = str(len(received))
        request._stream = io.BytesIO(bytes(received))  # type: ignore[attr-defined]  # Django's own stream of the body
        return True
