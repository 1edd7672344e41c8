"""The options every command that calls an LLM takes: --concurrency, --timeout, --max-tokens."""

from __future__ import annotations

import argparse


def concurrency_option(value: str) -> str | int:
    """argparse type for --concurrency: a whole number of calls in flight, or auto."""
    if value == "auto":
        return value
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number or auto, not {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def positive_number(value: str) -> float:
    """argparse type for --timeout: seconds, more than 0."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, not {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return number


def positive_int(value: str) -> int:
    """argparse type for --max-tokens."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def add_call_options(parser: argparse.ArgumentParser, *, what: str = "") -> None:
    """--concurrency, --timeout and --max-tokens, as every LLM command takes them."""
    parser.add_argument(
        "--concurrency",
        type=concurrency_option,
        help=f"calls in flight{what}: a number, or auto (the default when the endpoint states no limit: "
        "the window finds the server's capacity)",
    )
    parser.add_argument(
        "--timeout", type=positive_number, help="seconds from sending a call to its reply (default: the endpoint's)"
    )
    parser.add_argument(
        "--max-tokens",
        type=positive_int,
        help="longest reply, in tokens (default: the endpoint's, else the kind of call's)",
    )
