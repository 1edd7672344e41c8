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
from rest_framework.authentication import BaseAuthentication, TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed, Throttled
from rest_framework.throttling import SimpleRateThrottle

from core.rate_counters import counter_hit, counter_peek


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
    """A DRF throttle whose rate comes from settings.THROTTLE_RATES[scope] at each request,
    counted in the shared cache in one atomic step (core/rate_counters.py), so a limit holds
    across every worker process."""

    scope = ""
    _wait = 0.0
    # Set by SimpleRateThrottle.__init__ from the rate (the stubs leave them out); read only
    # when a rate is set.
    num_requests: int
    duration: int

    def get_rate(self):
        return settings.THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view):
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        count, self._wait = counter_hit(key, self.duration)
        return count <= self.num_requests

    def wait(self):
        return self._wait


class UserApiThrottle(ScopedRateThrottle):
    """Requests of a signed-in person or token, per account, wherever they come from."""

    scope = "api_user"

    def get_cache_key(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class AnonymousApiAuthentication(BaseAuthentication):
    """Last of the API's authentication classes: it runs only for a request that no other class
    signed in, and throttles it per client (THROTTLE_RATES["api_anon"]). DRF checks permissions
    before throttles, so a throttle class never saw anonymous requests (every route needs a
    log-in and refused them first): the anonymous limit never fired."""

    def authenticate(self, request):
        throttle = ClientRateThrottle("api_anon")
        if not throttle.allow_request(request, None):
            raise Throttled(throttle.wait())
        return None


class ThrottledTokenAuthentication(TokenAuthentication):
    """DRF's token authentication, with failed attempts limited per client
    (THROTTLE_RATES["api_token_failure"]): past the limit, a client gets 429 for every token,
    right or wrong, until its window ends, so tokens cannot be guessed at speed."""

    def authenticate(self, request):
        if not self._carries_token(request):
            return None
        failures = ClientRateThrottle("api_token_failure")
        if failures.rate is None:
            return super().authenticate(request)
        key = failures.get_cache_key(request, None)
        if counter_peek(key) >= failures.num_requests:
            raise Throttled(failures.duration)
        try:
            return super().authenticate(request)
        except AuthenticationFailed as refused:
            # A token that was real once (revoked, expired) is a forgotten script, not a guess.
            if not getattr(refused, "known_token", False):
                counter_hit(key, failures.duration)
            raise

    def _carries_token(self, request) -> bool:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        return header.split(" ", 1)[0].lower() == self.keyword.lower()


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
