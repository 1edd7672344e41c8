"""Rate limits: DRF's own throttles for the API, and the same machinery for anonymous pages.

Clients are told apart by their address, as DRF reads it (REMOTE_ADDR, or the proxy's
X-Forwarded-For entry with NUM_PROXIES), but only a keyed hash of it is ever used as a cache
key: the address itself is never stored, not even in the cache. Rates live in the
THROTTLE_RATES setting, read at each request (so tests and deployments can change them).
"""

import hashlib
import hmac
from functools import wraps

from django.conf import settings
from django.http import HttpResponse
from django.template.loader import render_to_string
from rest_framework.throttling import SimpleRateThrottle


def pseudonymous_address(request) -> str:
    """What django-axes stores as the "address" of a failed log-in: the client's keyed hash
    written as an IPv6 address in the documentation range (2001:db8::/32), so axes can count
    failures per client while no real address is ever stored."""
    digest = client_fingerprint(request)
    return "2001:db8:" + ":".join(digest[index : index + 4] for index in range(0, 24, 4))


def client_fingerprint(request) -> str:
    """A keyed hash of the client's address: stable for rate limits, useless to anyone without
    SECRET_KEY, and never the address itself."""
    address = _IdentOnly().get_ident(request) or ""
    return hmac.new(settings.SECRET_KEY.encode(), address.encode(), hashlib.sha256).hexdigest()[:32]


class _IdentOnly(SimpleRateThrottle):
    """DRF's reading of the client address (X-Forwarded-For with NUM_PROXIES), nothing else."""

    rate = "1/s"

    def get_cache_key(self, request, view):  # pragma: no cover - never throttles
        return None


class ScopedRateThrottle(SimpleRateThrottle):
    """A DRF throttle whose rate comes from settings.THROTTLE_RATES[scope] at each request."""

    scope = ""

    def get_rate(self):
        return settings.THROTTLE_RATES.get(self.scope)


class AnonApiThrottle(ScopedRateThrottle):
    """Requests without credentials, per client (hashed address)."""

    scope = "api_anon"

    def get_cache_key(self, request, view):
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": client_fingerprint(request)}


class UserApiThrottle(ScopedRateThrottle):
    """Requests of a signed-in person or token, per account, wherever they come from."""

    scope = "api_user"

    def get_cache_key(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class ClientRateThrottle(ScopedRateThrottle):
    """Per client (hashed address), for pages anyone may post to (the study questionnaire)."""

    def __init__(self, scope: str):
        self.scope = scope
        super().__init__()

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": client_fingerprint(request)}


def too_many_requests(request, wait: float | None) -> HttpResponse:
    """429 with a page in the reader's language and a Retry-After header."""
    seconds = max(1, int(wait or 60))
    body = render_to_string("core/too_many_requests.html", {"seconds": seconds}, request=request)
    response = HttpResponse(body, status=429)
    response["Retry-After"] = str(seconds)
    return response


def rate_limited(scope: str, methods=("POST",)):
    """View decorator: at most THROTTLE_RATES[scope] requests of these methods per client."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if request.method in methods:
                throttle = ClientRateThrottle(scope)
                if not throttle.allow_request(request, None):
                    return too_many_requests(request, throttle.wait())
            return view(request, *args, **kwargs)

        return wrapped

    return decorator
