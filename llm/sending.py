"""A chat completion's POST on the client's own transport, without the SDK's request and response models.

At 64 calls in flight a worker is CPU-bound, and the SDK spent most of a call's CPU building
objects around a few kilobytes of JSON: its request options (a pydantic model copied for every
call), httpx2's URL, headers and request, the transport turning those into aiohttp's, and
httpx2's response back (`bench/bench_cpu_per_call.py`: about 1 ms of a call's 1.8). A
`ChatSender` sends the same bytes on the same connections with a quarter of that:

- the request is the SDK's own: its URL, headers and authentication come from the client's
  `_build_request` once per client (the key is the one `llm.pool` gave the client), and the
  body is serialised as the SDK serialises it (compact UTF-8 JSON);
- it leaves through the client's own transport (`llm.egress_transport.GuardedTransport`): the
  same aiohttp session and connections, the same resolver that refuses internal addresses, the
  same refusal of a key bound to another host;
- what goes wrong is the SDK's error: a status that is not 2xx becomes the SDK's APIStatusError
  subclass (made by the client from the response, as the SDK makes it), a time that ran out
  its APITimeoutError, a connection lost or refused its APIConnectionError, each raised from
  the aiohttp error behind it, so `llm.retry` classifies them as before;
- the body is read up to its cap (`llm.reading`), and a compressed one is decoded by httpx2's
  own decoders in bounded pieces.

The SDK itself stays where it serves: the client made by `llm.pool` carries the key and the
transport, its error types are what every failure is reported as, and anything else asked of
an endpoint (the Batch API, say) goes through it as it is. Three of its private names are used
(`_build_request`, `_make_status_error_from_response`, `FinalRequestOptions`):
tests/llm/test_sending.py compares the request on the wire with the SDK's own and checks the
errors, so an upgrade that moves them fails there. The SDK and aiohttp load on first use (llm.sdk): this
module is imported by the client factory, not at start-up.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
import httpx2
import openai
from django.utils.translation import gettext as _
from multidict import CIMultiDict
from openai._models import FinalRequestOptions
from yarl import URL

from llm.egress import EgressRefused, Target
from llm.egress_transport import GuardedTransport
from llm.reading import read_capped

CHAT_PATH = "/chat/completions"
# The server's words in an error are cut to a couple of hundred characters (llm.retry): an error
# body is read this far and no further, however large the server made it.
ERROR_BODY_BYTES = 64 * 1024
# Headers aiohttp writes itself for every request.
_OWN_HEADERS = frozenset({"host", "content-length", "transfer-encoding"})


@dataclass(frozen=True)
class _Template:
    request: httpx2.Request
    url: URL
    headers: CIMultiDict[str]


class ChatSender:
    """POSTs chat completions for one SDK client, through its transport. `post(payload)` returns
    the reply's body (read up to its cap) and headers, or raises the SDK's error."""

    def __init__(self, client: openai.AsyncOpenAI, transport: GuardedTransport, *, timeout_seconds: float | None):
        self.client = client
        self.transport = transport
        # None: no socket timeout of aiohttp's own (its default would end every call at 300 s);
        # the caller's deadline bounds the call (llm.stream).
        self.timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout_seconds, sock_read=timeout_seconds)
        self._template: _Template | None = None

    def template(self) -> _Template:
        """The SDK's request for this call, body apart: built once, its URL and headers reused."""
        if self._template is None:
            request = self.client._build_request(FinalRequestOptions.construct(method="post", url=CHAT_PATH))
            if Target.of(str(request.url)).host != self.transport.target.host:
                raise EgressRefused(
                    _("%(host)s is not this endpoint's host (%(own)s).")
                    % {"host": request.url.host, "own": self.transport.target.host}
                )
            headers = CIMultiDict(
                (name, value) for name, value in request.headers.multi_items() if name.lower() not in _OWN_HEADERS
            )
            self._template = _Template(request, URL(str(request.url), encoded=True), headers)
        return self._template

    async def post(self, payload: Mapping[str, Any]) -> tuple[bytes, Mapping[str, str]]:
        if self.transport.refusal:
            raise EgressRefused(self.transport.refusal)
        template = self.template()
        request = template.request
        session = self.transport.client
        if not isinstance(session, aiohttp.ClientSession):
            # The transport makes its session on first use; the SDK's own calls then share it.
            session = self.transport.client = self.transport.get_client()
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        try:
            async with session.request(
                "POST",
                template.url,
                data=body,
                headers=template.headers,
                allow_redirects=False,
                auto_decompress=False,
                compress=False,
                timeout=self.timeout,
            ) as response:
                if 200 <= response.status < 300:
                    return await read_capped(_chunks(response, request)), response.headers
                error_body = await _first_bytes(_chunks(response, request), ERROR_BODY_BYTES)
        except (aiohttp.ServerTimeoutError, aiohttp.SocketTimeoutError) as error:
            raise openai.APITimeoutError(request=request) from error
        except aiohttp.ClientError as error:
            raise openai.APIConnectionError(request=request) from error
        # Decoded already: the error's response says so (it would otherwise be decoded twice).
        headers = [(name, value) for name, value in response.raw_headers if name.lower() != b"content-encoding"]
        reply = httpx2.Response(response.status, headers=headers, content=error_body, request=request)
        raise self.client._make_status_error_from_response(reply)

    async def close(self) -> None:
        await self.client.close()  # closes the transport, and with it the session


class _Body(httpx2.AsyncByteStream):
    """aiohttp's body as the stream of an httpx2 response, which decodes it."""

    def __init__(self, response: aiohttp.ClientResponse):
        self.response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.response.content.iter_any():
            yield chunk


def _chunks(response: aiohttp.ClientResponse, request: httpx2.Request) -> AsyncIterator[bytes]:
    """The body's pieces as they arrive, decoded: a plain body as it is, a compressed one through
    httpx2's decoders, which inflate it in bounded pieces (a gzip bomb never inflates whole)."""
    encoding = response.headers.get("Content-Encoding", "").strip().lower()
    if encoding in ("", "identity"):
        return response.content.iter_any()
    decoded = httpx2.Response(response.status, headers=response.raw_headers, stream=_Body(response), request=request)
    return decoded.aiter_bytes()


async def _first_bytes(chunks: AsyncIterator[bytes], limit: int) -> bytes:
    kept: list[bytes] = []
    size = 0
    async for chunk in chunks:
        kept.append(chunk[: limit - size])
        size += len(kept[-1])
        if size >= limit:
            break
    return b"".join(kept)
