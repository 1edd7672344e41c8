"""A reply's body read with a cap: an upstream cannot fill a worker's memory or the database.

The body is read as it arrives and decompressed in bounded pieces (a gzip bomb inflates no
further than the cap), and the reading stops past LLM_MAX_REPLY_BYTES. A reply's text is kept
up to LLM_REPLY_CHARS_PER_TOKEN characters per token asked (more than any tokenizer makes of
a token): past that, it is an error that says its size, and nothing of it is stored.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from django.conf import settings
from django.utils.translation import gettext as _


class ReplyTooLarge(ValueError):
    """A reply past a cap: never stored, never sent again (the same server would send it again)."""

    def __init__(self, message: str, size: int):
        super().__init__(message)
        self.size = size


def reply_text_cap(max_tokens: int | None) -> int:
    """The longest reply text kept for a call asking for `max_tokens`."""
    if not max_tokens:
        return int(settings.LLM_MAX_REPLY_CHARS)
    return min(int(settings.LLM_MAX_REPLY_CHARS), max_tokens * int(settings.LLM_REPLY_CHARS_PER_TOKEN) + 1024)


async def read_capped(chunks: AsyncIterator[bytes]) -> bytes:
    """A body read from its decompressed chunks, up to LLM_MAX_REPLY_BYTES: past it, ReplyTooLarge
    and nothing more is read."""
    cap = int(settings.LLM_MAX_REPLY_BYTES)
    pieces: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > cap:
            raise ReplyTooLarge(
                _("the reply is larger than %(cap)d bytes (stopped reading at %(size)d); nothing of it is kept")
                % {"cap": cap, "size": size},
                size,
            )
        pieces.append(chunk)
    return b"".join(pieces)


def text_too_large(length: int, cap: int) -> ReplyTooLarge:
    return ReplyTooLarge(
        _("the reply is %(size)d characters long, more than the %(cap)d kept for the max_tokens asked; not stored")
        % {"size": length, "cap": cap},
        length,
    )
