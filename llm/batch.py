"""The provider's Batch API, as OpenAI defines it (and vLLM, Together, DeepSeek and gateways
serve it): a JSONL file of chat requests is uploaded (`POST /v1/files`, purpose `batch`), a
batch made of it (`POST /v1/batches`), its state polled (`GET /v1/batches/{id}`), and its
replies and errors read from its output and error files (`GET /v1/files/{id}/content`).

Every request goes through the same clients as a live call (llm.pool): the key only to the
hosts it is bound to and no internal address (llm.egress), redirects never followed. A file is
read as it arrives into a temporary file with a cap, and each result line up to its own cap;
a line becomes an outcome as a live reply does (`llm.calls.reply_from_data`), so a batch reply
is parsed, cut off, cached and redacted exactly as a live one. What a provider sends back is
untrusted: a line that is not JSON, names no custom id or has no usable body is an error for
that line alone, never for the batch.

Which units go in which batch, and the bookkeeping that makes a crash cost nothing twice, are
the callers' (judging/batching.py).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, replace
from typing import IO, TYPE_CHECKING, Any, Final

from asgiref.sync import async_to_sync
from django.conf import settings
from django.utils.translation import gettext as _

from llm.calls import ChatRequest, Outcome, chat_body, reply_from_data
from llm.config import EndpointConfig
from llm.errors import EndpointError, LLMCallError
from llm.pool import make_client
from llm.reading import ReplyTooLarge, reply_text_cap
from llm.retry import CONTEXT_LENGTH, classify
from llm.sdk import sdk_modules
from llm.secrets import redact_secrets

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types import Batch

CHAT_PATH: Final = "/v1/chat/completions"
COMPLETION_WINDOW: Final = "24h"
# The batch states after which nothing more happens to it (OpenAI's names).
FINISHED = frozenset({"completed", "failed", "expired", "cancelled"})
# The client's header asking for the body unread (as llm.stream reads a reply).
RAW_RESPONSE_HEADER = "X-Stainless-Raw-Response"
# A batch made from a file whose creation was not recorded (a crash in between) is found among
# this many of the provider's latest batches before another is made of the same file.
FIND_LIMIT = 500
# A results file stays in memory up to this size, then goes to disk.
SPOOL_BYTES = 16 * 1024 * 1024


class BatchCallError(EndpointError):
    """A request to the Batch API failed (the upload, the batch, its state or a file): the
    message names the step and the server's answer. `retryable`: worth trying again later (a
    timeout, a 5xx); otherwise the same request would fail the same way (a refused key).
    `status`: the HTTP status the server answered, if it answered (404: it knows no such thing)."""

    def __init__(self, message: str, *, retryable: bool = True, status: int | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status


class BatchFileUnusable(BatchCallError):
    """A results or error file that can never be used as it is: larger than the cap once
    inflated, longer to read than LLM_BATCH_READ_SECONDS, or cut short. Reading it again would
    cost the same for nothing: the requests it should have answered fail, once, and a resume
    sends them again."""

    def __init__(self, message: str):
        super().__init__(message, retryable=False)


@dataclass
class LineCounts:
    """What a results file held besides usable lines: lines that are not a JSON object."""

    not_json: int = 0
    first_not_json: int = 0  # its line number (1-based), 0: none


@dataclass(frozen=True)
class BatchState:
    """A batch as the provider describes it now."""

    status: str
    total: int
    completed: int
    failed: int
    output_file_id: str
    error_file_id: str
    # Why the whole batch failed (a file the provider refused), in its own words.
    errors: str = ""

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


def batch_line(custom_id: str, request: ChatRequest) -> bytes:
    """One line of a batch file: the same body a live call sends, under its custom id."""
    record = {"custom_id": custom_id, "method": "POST", "url": CHAT_PATH, "body": chat_body(request)}
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _transfer_seconds(endpoint: EndpointConfig) -> float:
    # Files are larger and slower than one reply: the transfer timeout, if longer, applies.
    return max(endpoint.timeout_seconds or 0.0, float(settings.LLM_BATCH_TRANSFER_SECONDS))


def _client(endpoint: EndpointConfig) -> AsyncOpenAI:
    return make_client(replace(endpoint, timeout_seconds=_transfer_seconds(endpoint)), 2)


def _run(endpoint: EndpointConfig, step: str, work: Callable[[AsyncOpenAI], Awaitable[Any]]) -> Any:
    """`work(client)` on the event loop; a failure becomes BatchCallError naming the step."""

    async def call() -> Any:
        client = _client(endpoint)
        try:
            return await work(client)
        finally:
            await client.close()

    try:
        return async_to_sync(call)()
    except EndpointError:
        raise  # already in words (BatchCallError among them)
    except Exception as error:  # noqa: BLE001 - classified into words a researcher can act on
        failure = classify(error, endpoint, deadline=_transfer_seconds(endpoint))
        raise BatchCallError(
            redact_secrets(_("%(step)s failed: %(reason)s") % {"step": step, "reason": failure.reason}),
            retryable=failure.retryable,
            status=getattr(error, "status_code", None),
        ) from error


def batch_api_check(endpoint: EndpointConfig) -> None:
    """Refuse, before anything is written, an endpoint that does not serve the Batch API: one
    cheap `GET /v1/batches?limit=1`. EndpointError naming the endpoint and what it answered."""
    openai, _httpx2 = sdk_modules()

    async def probe(client: AsyncOpenAI) -> None:
        try:
            await client.batches.list(limit=1)
        except openai.APIStatusError as error:
            if error.status_code in (404, 405, 501):
                raise EndpointError(
                    _(
                        "The endpoint %(name)s (%(url)s) does not offer the Batch API: GET /v1/batches answered "
                        "HTTP %(status)s. Run it live instead (without batch)."
                    )
                    % {"name": endpoint.name, "url": endpoint.base_url, "status": error.status_code}
                ) from None
            raise

    _run(endpoint, _("Checking the Batch API of %(name)s") % {"name": endpoint.name}, probe)


def batch_upload(endpoint: EndpointConfig, content: bytes, *, name: str) -> str:
    """Upload a batch file (purpose `batch`); returns the provider's file id."""

    async def upload(client: AsyncOpenAI) -> str:
        made = await client.files.create(file=(name, content, "application/jsonl"), purpose="batch")
        return _identifier(made.id, "file")

    return _run(endpoint, _("Uploading the batch file"), upload)


def batch_create(endpoint: EndpointConfig, *, input_file_id: str, metadata: dict[str, str]) -> str:
    """Make a batch of an uploaded file; returns the batch id."""

    async def create(client: AsyncOpenAI) -> str:
        made = await client.batches.create(
            input_file_id=input_file_id, endpoint=CHAT_PATH, completion_window=COMPLETION_WINDOW, metadata=metadata
        )
        return _identifier(made.id, "batch")

    return _run(endpoint, _("Creating the batch"), create)


def batch_find(endpoint: EndpointConfig, *, input_file_id: str) -> str | None:
    """The id of a batch already made of this file, among the provider's latest FIND_LIMIT, or
    None: a batch created just before a crash is found here rather than made (and paid) twice."""

    async def find(client: AsyncOpenAI) -> str | None:
        seen = 0
        async for batch in client.batches.list(limit=100):
            if getattr(batch, "input_file_id", None) == input_file_id:
                return _identifier(batch.id, "batch")
            seen += 1
            if seen >= FIND_LIMIT:
                break
        return None

    return _run(endpoint, _("Looking for the batch of file %(id)s") % {"id": input_file_id}, find)


def batch_state(endpoint: EndpointConfig, batch_id: str) -> BatchState:
    """The batch's status, counts and result files now."""

    async def retrieve(client: AsyncOpenAI) -> Batch:
        return await client.batches.retrieve(batch_id)

    batch = _run(endpoint, _("Reading batch %(id)s") % {"id": batch_id}, retrieve)
    counts = getattr(batch, "request_counts", None)
    errors = getattr(getattr(batch, "errors", None), "data", None) or []
    said = "; ".join(
        str(getattr(error, "message", "") or getattr(error, "code", "")) for error in errors[:5] if error is not None
    )
    return BatchState(
        status=str(getattr(batch, "status", "") or "")[:32],
        total=_count(getattr(counts, "total", 0)),
        completed=_count(getattr(counts, "completed", 0)),
        failed=_count(getattr(counts, "failed", 0)),
        output_file_id=_identifier(getattr(batch, "output_file_id", None) or "", "file", empty=True),
        error_file_id=_identifier(getattr(batch, "error_file_id", None) or "", "file", empty=True),
        errors=redact_secrets(said)[:300],
    )


def batch_cancel(endpoint: EndpointConfig, batch_id: str) -> None:
    """Ask the provider to stop a batch: what it finished is still delivered, and paid."""

    async def cancel(client: AsyncOpenAI) -> None:
        await client.batches.cancel(batch_id)

    _run(endpoint, _("Cancelling batch %(id)s") % {"id": batch_id}, cancel)


def batch_file_download(endpoint: EndpointConfig, file_id: str) -> IO[bytes]:
    """A results file, read as it arrives into a temporary file (memory up to SPOOL_BYTES), no
    further than LLM_BATCH_MAX_RESULT_BYTES once inflated (a file sent compressed counts what it
    inflates to) and for no longer than LLM_BATCH_READ_SECONDS in all; the caller closes it.
    BatchFileUnusable when the file is over either cap or cut short: nothing of it is kept."""
    _openai, httpx2 = sdk_modules()
    cap = int(settings.LLM_BATCH_MAX_RESULT_BYTES)
    seconds = float(settings.LLM_BATCH_READ_SECONDS)
    target = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    too_large = _("The results file %(id)s is larger than %(cap)d bytes; nothing of it is kept.")

    async def download(client: AsyncOpenAI) -> None:
        started = time.monotonic()
        try:
            async with asyncio.timeout(seconds):
                response = await client.get(
                    f"/files/{file_id}/content",
                    cast_to=httpx2.Response,
                    options={"headers": {RAW_RESPONSE_HEADER: "stream"}},
                )
                try:
                    declared = response.headers.get("content-length", "")
                    if declared.isdigit() and int(declared) > cap:
                        raise BatchFileUnusable(too_large % {"id": file_id, "cap": cap})
                    size = 0
                    async for chunk in response.aiter_bytes():  # inflated, as it arrives
                        size += len(chunk)
                        if size > cap:
                            raise BatchFileUnusable(too_large % {"id": file_id, "cap": cap})
                        target.write(chunk)
                        if time.monotonic() - started > seconds:
                            raise TimeoutError
                finally:
                    await response.aclose()
        except TimeoutError:
            raise BatchFileUnusable(
                _("Reading the results file %(id)s took longer than %(seconds)g s; nothing of it is kept.")
                % {"id": file_id, "seconds": seconds}
            ) from None
        except (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.DecodingError) as error:
            raise BatchFileUnusable(
                _("The results file %(id)s came cut short or garbled (%(reason)s); nothing of it is kept.")
                % {"id": file_id, "reason": redact_secrets(str(error))[:120]}
            ) from None

    try:
        _run(endpoint, _("Reading file %(id)s") % {"id": file_id}, download)
    except BaseException:
        target.close()
        raise
    target.seek(0)
    return target


def result_lines(stream: IO[bytes], counts: LineCounts | None = None) -> Iterator[dict]:
    """The JSON objects of a results file, one per line; a line past LLM_MAX_REPLY_BYTES, or not
    a JSON object, is skipped (its unit finds no result and fails alone) and counted in `counts`."""
    cap = int(settings.LLM_MAX_REPLY_BYTES)
    counts = counts if counts is not None else LineCounts()
    number = 0
    while True:
        line = stream.readline(cap + 1)
        if not line:
            return
        number += 1
        if len(line) > cap and not line.endswith(b"\n"):
            while (rest := stream.readline(cap + 1)) and not rest.endswith(b"\n"):
                pass  # the rest of a line too long to keep
            _not_json(counts, number)
            continue
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            _not_json(counts, number)
            continue
        if isinstance(record, dict):
            yield record
        else:
            _not_json(counts, number)


def _not_json(counts: LineCounts, number: int) -> None:
    counts.not_json += 1
    counts.first_not_json = counts.first_not_json or number


def result_outcome(record: dict, *, max_tokens: int | None, key: str = "") -> Outcome:
    """A result line as a live call's outcome: the reply (parsed as llm.calls reads one, its text
    capped as a live reply's), or the error the provider gave for the line."""
    error = record.get("error")
    response = record.get("response")
    if isinstance(error, dict) or (error and not isinstance(response, dict)):
        code = str(error.get("code") or "") if isinstance(error, dict) else ""
        message = str(error.get("message") or error) if isinstance(error, dict) else str(error)
        what = _("the batch expired before this request ran") if code == "batch_expired" else message
        return LLMCallError(_("batch line failed: %(what)s") % {"what": " ".join(what.split())[:250]})
    if not isinstance(response, dict):
        return LLMCallError(_("batch line failed: no response in the result line"))
    status = response.get("status_code")
    body = response.get("body")
    if status == 200:
        try:
            return reply_from_data(body, 0, text_cap=reply_text_cap(max_tokens), key=key)
        except (ReplyTooLarge, ValueError) as problem:
            return LLMCallError(str(problem))
    message = _body_message(body)
    kind = "context_length" if status in (400, 413) and CONTEXT_LENGTH.search(message) else "failed"
    return LLMCallError(f"HTTP {status if isinstance(status, int) else '?'}: {message}", kind=kind)


def _body_message(body: object) -> str:
    if isinstance(body, dict):
        inner = body.get("error")
        detail = body.get("message") or (inner.get("message") if isinstance(inner, dict) else inner)
        if detail:
            return " ".join(str(detail).split())[:200]
    return " ".join(str(body).split())[:200]


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _identifier(value: object, what: str, *, empty: bool = False) -> str:
    """An id the provider gave, checked before it is stored and put in a URL path."""
    text = value if isinstance(value, str) else ""
    if (not text and empty) or (0 < len(text) <= 200 and text.replace("-", "").replace("_", "").isalnum()):
        return text
    raise BatchCallError(_("The provider gave an unusable %(what)s id: %(id)r") % {"what": what, "id": text[:60]})
