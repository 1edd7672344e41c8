"""Where an endpoint's requests, and its key, may go.

Two rules hold for every endpoint, when it is saved (`endpoint_egress_problems`, from the
model's `clean`) and again when a call is made (`llm.egress_transport`, before any request
leaves), so a row written past the form, or a host name that answers differently later (DNS
rebinding), is refused too:

* **Keys stay home.** A key variable is sent only to the hosts the LLM_KEY_HOSTS setting binds
  it to ({"OPENAI_API_KEY": ["api.openai.com"], ...}); an entry is a host name, or host:port.
  The default endpoint's key (OPENAI_API_KEY) is also bound to the host and port of
  OPENAI_BASE_URL, and a variable the setting does not list may be sent there and nowhere else.
  An endpoint with no key variable sends no key.
* **No requests to internal addresses.** After its name is resolved, a host whose addresses are
  loopback, private, link-local (169.254.169.254 among them), multicast, reserved, unspecified,
  unique-local (fc00::/7) or IPv4-mapped IPv6 (::ffff:127.0.0.1) is refused, unless the
  LLM_ALLOWED_INTERNAL_HOSTS setting lists the host name or a network holding the address. The
  default endpoint (the host and port of OPENAI_BASE_URL) is allowed as the operator named it.

Names are resolved with the function LLM_RESOLVER names (socket.getaddrinfo; tests name a
resolver of their own to play a rebinding DNS server).
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.module_loading import import_string
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from llm.errors import EndpointError

DEFAULT_PORTS = {"http": 80, "https": 443}
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class EgressRefused(EndpointError):
    """A request refused before it left: its key is not bound to the host, or the host is internal."""


@dataclass(frozen=True)
class Target:
    """Where a URL points: its scheme, its host (lower case, no brackets) and its port."""

    scheme: str
    host: str
    port: int | None

    @classmethod
    def of(cls, url: str) -> Target:
        parts = urlsplit((url or "").strip())
        try:
            port = parts.port
        except ValueError:
            port = None
        scheme = parts.scheme.lower()
        return cls(scheme, (parts.hostname or "").rstrip(".").lower(), port or DEFAULT_PORTS.get(scheme))

    def matches(self, entry: str) -> bool:
        """Whether a host entry ("api.openai.com", "10.0.0.5:8000", "[::1]:8080") names this target."""
        parts = urlsplit("//" + entry.strip())
        try:
            port = parts.port
        except ValueError:
            return False
        host = (parts.hostname or "").rstrip(".").lower()
        return bool(host) and host == self.host and (port is None or port == self.port)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}" if self.port else host


def default_target() -> Target | None:
    """Where the default endpoint (OPENAI_BASE_URL) points, or None when it is not set."""
    base_url = os.environ.get("OPENAI_BASE_URL", "").strip()
    return Target.of(base_url) if base_url else None


# --- Keys stay home -------------------------------------------------------------------------


def key_hosts(variable: str) -> list[str]:
    """The host entries `variable`'s key may be sent to."""
    listed = dict(getattr(settings, "LLM_KEY_HOSTS", {}) or {})
    hosts = [str(host) for host in listed.get(variable, ())]
    default = default_target()
    if default is not None and default.host and (variable == "OPENAI_API_KEY" or variable not in listed):
        hosts.append(str(default))
    return hosts


def key_host_problem(*, variable: str, base_url: str) -> str:
    """Why the key in `variable` may not be sent to `base_url`, or "" when it may (or there is no key)."""
    if not variable:
        return ""
    target = Target.of(base_url)
    hosts = key_hosts(variable)
    if any(target.matches(entry) for entry in hosts):
        return ""
    return _(
        "The key in %(variable)s may only be sent to %(hosts)s, not to %(host)s. Leave the key variable empty "
        "for a server that needs no key, or bind %(variable)s to %(host)s in the LLM_KEY_HOSTS setting."
    ) % {"variable": variable, "hosts": ", ".join(hosts) or _("no host"), "host": target.host or "?"}


def endpoint_key(*, variable: str, base_url: str) -> str:
    """The key to send to `base_url`: the value of `variable`, or "" when there is none.
    EgressRefused when there is a key and it is not bound to that host."""
    key = os.environ.get(variable, "") if variable else ""
    if key:
        problem = key_host_problem(variable=variable, base_url=base_url)
        if problem:
            raise EgressRefused(problem)
    return key


# --- No requests to internal addresses ------------------------------------------------------


def internal_kind(address: IPAddress) -> str:
    """What kind of internal address `address` is, or "" for a public one."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return pgettext("internal address", "IPv4-mapped IPv6")
        embedded = address.sixtofour or (address.teredo[1] if address.teredo else None)
        if embedded is not None and internal_kind(embedded):
            return pgettext("internal address", "IPv6 holding an internal IPv4 address")
        if address in ipaddress.IPv6Network("fc00::/7"):
            return pgettext("internal address", "unique-local")
    checks = (
        (address.is_unspecified, pgettext("internal address", "unspecified")),
        (address.is_loopback, pgettext("internal address", "loopback")),
        (address.is_link_local, pgettext("internal address", "link-local")),
        (address.is_multicast, pgettext("internal address", "multicast")),
        (address.is_private, pgettext("internal address", "private")),
        (address.is_reserved, pgettext("internal address", "reserved")),
        (not address.is_global, pgettext("internal address", "not publicly routable")),
    )
    return next((kind for internal, kind in checks if internal), "")


@dataclass(frozen=True)
class InternalAllowance:
    """What LLM_ALLOWED_INTERNAL_HOSTS lets endpoints reach: host names, and networks (an address
    is a network of one)."""

    names: frozenset[str]
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]

    @classmethod
    def from_settings(cls) -> InternalAllowance:
        names, networks = set(), []
        for entry in getattr(settings, "LLM_ALLOWED_INTERNAL_HOSTS", ()) or ():
            entry = str(entry).strip().strip("[]").lower()
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                names.add(entry.rstrip("."))
        return cls(frozenset(names), tuple(networks))

    def allows(self, address: IPAddress) -> bool:
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped  # [::ffff:127.0.0.1] is 127.0.0.1 where loopback is allowed
        return any(address.version == network.version and address in network for network in self.networks)


def _address(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


def addresses_problem(target: Target, addresses: Iterable[str]) -> str:
    """Why `target`, resolved to `addresses`, may not be reached, or "" when it may."""
    if target.host and (target == default_target()):
        return ""  # the default endpoint, as the operator named it
    allowance = InternalAllowance.from_settings()
    if target.host in allowance.names:
        return ""
    for text in addresses:
        address = _address(text)
        if address is None:
            continue
        kind = internal_kind(address)
        if kind and not allowance.allows(address):
            return _(
                "%(host)s is %(address)s, an internal address (%(kind)s): endpoints may not reach internal "
                "addresses unless the LLM_ALLOWED_INTERNAL_HOSTS setting lists the host or its network."
            ) % {"host": target.host, "address": address, "kind": kind}
    return ""


def resolve(host: str, port: int | None, family: int = 0) -> list[tuple[int, int, str]]:
    """The addresses `host` resolves to, as (family, proto, address), with LLM_RESOLVER.
    OSError (socket.gaierror) when it does not resolve."""
    resolver = getattr(settings, "LLM_RESOLVER", "socket.getaddrinfo")
    getaddrinfo = import_string(resolver) if isinstance(resolver, str) else resolver
    infos = getaddrinfo(host, port, family, socket.SOCK_STREAM)
    return [(info[0], info[2], str(info[4][0])) for info in infos]


def address_problem(base_url: str) -> str:
    """Why `base_url` may not be reached, after resolving its host, or "" when it may. A name that
    does not resolve now is not refused here: it is resolved, and checked, again when a call connects."""
    target = Target.of(base_url)
    if target.scheme not in DEFAULT_PORTS or not target.host:
        return _("A base URL starts with http:// or https:// and names a host.")
    if _address(target.host) is not None:
        return addresses_problem(target, [target.host])
    try:
        addresses = [address for _family, _proto, address in resolve(target.host, target.port)]
    except (OSError, UnicodeError):
        return ""
    return addresses_problem(target, addresses)


def endpoint_egress_problems(*, base_url: str, api_key_env: str) -> dict[str, str]:
    """Why an endpoint may not be saved as given, by field ({} when it may)."""
    problems = {}
    if base_url:
        problem = address_problem(base_url)
        if problem:
            problems["base_url"] = problem
        problem = key_host_problem(variable=api_key_env, base_url=base_url)
        if problem:
            problems["api_key_env"] = problem
    return problems


def egress_refusal(error: BaseException | None) -> EgressRefused | None:
    """The refusal behind a failed call (the SDK may wrap it), or None."""
    seen = 0
    while error is not None and seen < 20:
        if isinstance(error, EgressRefused):
            return error
        error = error.__cause__ or error.__context__
        seen += 1
    return None
