"""The openai SDK (and httpx2, whose types it reports errors with), imported on first use.

The client pool builds its clients with it and the retry policy reads its error types."""

from __future__ import annotations

from types import ModuleType


def sdk_modules() -> tuple[ModuleType, ModuleType]:
    """The openai package, imported on first use: it takes about a second to import, and most
    processes that load this module (the web app, `judge` following its workers) never call.
    A worker loads it as it starts (`load_sdk`)."""
    # Imported here, not at the top: about a second of import that the web app never needs.
    import httpx2
    import openai

    return openai, httpx2


def load_sdk() -> None:
    """Import the SDK (with its aiohttp transport) now, not with the first call."""
    sdk_modules()
