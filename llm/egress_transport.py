"""The HTTP transport of every endpoint client: llm.egress's rules, checked as a call connects.

A request leaves only for its endpoint's own host, only when the endpoint's key is bound to that
host, and only to addresses llm.egress allows: the host name is resolved by `GuardedResolver`,
which refuses the whole answer when any address in it is internal, so a name that resolved to a
public address when the endpoint was saved and answers 127.0.0.1 now (DNS rebinding) connects
nowhere. aiohttp never asks the resolver about an address written in the URL, so that one is
checked when the transport is made (it cannot change). The SDK and aiohttp load on first use
(llm.sdk): this module is imported by the client factory, not at start-up.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
from typing import Any

import aiohttp
import httpx2
from aiohttp.abc import AbstractResolver, ResolveResult
from django.utils.translation import gettext as _
from openai._vendor.httpx_aiohttp import AiohttpTransport

from llm.egress import EgressRefused, Target, address_problem, addresses_problem, resolve

_NUMERIC = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV


class GuardedResolver(AbstractResolver):
    """Resolves with llm.egress.resolve, and refuses a host whose addresses are internal."""

    def __init__(self, target: Target):
        self.target = target

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        loop = asyncio.get_running_loop()
        infos = await loop.run_in_executor(None, functools.partial(resolve, host, port, family))
        target = Target(self.target.scheme, host.rstrip(".").lower(), port)
        problem = addresses_problem(target, [address for _family, _proto, address in infos])
        if problem:
            raise EgressRefused(problem)
        results: list[ResolveResult] = []
        for info_family, proto, address in infos:
            results.append(
                {
                    "hostname": host,
                    "host": address,
                    "port": port,
                    "family": info_family,
                    "proto": proto,
                    "flags": _NUMERIC,
                }
            )
        return results

    async def close(self) -> None:
        return None


class GuardedTransport(AiohttpTransport):
    """The SDK's aiohttp transport with llm.egress's rules: `refusal` (a key bound elsewhere, an
    internal address in the URL) refuses every request; others leave only for `target`'s host,
    through a connector that resolves with `GuardedResolver`."""

    def __init__(self, *, target: Target, refusal: str, **options: Any):
        super().__init__(**options)
        self.target = target
        self.refusal = refusal

    def get_client(self) -> aiohttp.ClientSession:
        limit = {"limit": self.limits.max_connections} if self.limits.max_connections is not None else {}
        connector = aiohttp.TCPConnector(
            keepalive_timeout=self.limits.keepalive_expiry,
            ssl=self.ssl_context,
            resolver=GuardedResolver(self.target),
            **limit,  # type: ignore[arg-type]
        )
        return aiohttp.ClientSession(connector=connector)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self.refusal:
            raise EgressRefused(self.refusal)
        if Target.of(str(request.url)).host != self.target.host:
            raise EgressRefused(
                _("%(host)s is not this endpoint's host (%(own)s).")
                % {"host": request.url.host, "own": self.target.host}
            )
        return await super().handle_async_request(request)


def guarded_transport(*, base_url: str, key_refusal: str, verify: bool, limits: httpx2.Limits) -> GuardedTransport:
    """The transport for a client of `base_url`. An address written in the URL is checked now."""
    target = Target.of(base_url)
    refusal = key_refusal
    if not refusal and (target.scheme not in ("http", "https") or _is_address(target.host)):
        refusal = address_problem(base_url)
    return GuardedTransport(target=target, refusal=refusal, verify=verify, limits=limits)


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
