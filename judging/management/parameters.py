"""Command-line options for the parameters every call carries (temperature and system prompt), and
the option a command names beside a run error."""

from __future__ import annotations

import argparse
from pathlib import Path

from django.core.management.base import CommandError

from judging.errors import RunError

NO_TEMPERATURE = ("none", "default")


def temperature_argument(value: str) -> float | None:
    """A temperature as typed: a number, or `none` to send none (the server's default)."""
    if value.strip().lower() in NO_TEMPERATURE:
        return None
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a number; give one (e.g. 0 or 0.7) or 'none' to send no temperature"
        ) from None


def add_system_prompt_arguments(parser, *, what: str) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--system-prompt", default="", help=f"sent as a system message before {what}")
    group.add_argument(
        "--system-prompt-file", type=Path, help="the system prompt from a UTF-8 file, exactly as written"
    )


def system_prompt_from(options: dict) -> str:
    """The system prompt given inline or read byte for byte from its file ("" when none)."""
    path = options.get("system_prompt_file")
    if path is None:
        return options.get("system_prompt") or ""
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as error:
        raise CommandError(f"Cannot read {path}: {error.strerror}.") from None
    except UnicodeDecodeError as error:
        raise CommandError(f"{path} is not UTF-8 text ({error.reason} at byte {error.start}).") from None


def run_error_for_command(error: RunError, options: dict[str, str]) -> CommandError:
    """A RunError as a command's error: the message pages show too, plus the command's own
    option for the parameter it names (`options` maps a RunSpec field to that option)."""
    message, option = str(error), options.get(error.parameter)
    if not option:
        return CommandError(message)
    # "A pairwise run needs a reference model (--reference-model)."
    return CommandError(f"{message[:-1]} ({option})." if message.endswith(".") else f"{message} ({option})")
