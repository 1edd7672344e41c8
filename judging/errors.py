"""The error judging raises for a run, a template or a model that cannot be made as asked.

Its message is shown on bilingual pages, so it is translated and names no command-line
option; a command that wants to point at its own option reads `parameter` (the RunSpec field
that is wrong) and adds the hint itself.
"""

from __future__ import annotations

from core.errors import UserbenchError


class RunError(UserbenchError):
    """A judge run or template that cannot be made as asked; nothing was written."""

    def __init__(self, message="", *args, parameter: str = ""):
        super().__init__(message, *args)
        self.parameter = parameter


class RunNotFound(RunError):
    """No judge run has the id asked for."""


class RunStartConflict(RunError):
    """A start key (the API's Idempotency-Key) already started a run with other values: `run`
    is that run, `fields` the parameters that differ."""

    def __init__(self, message="", *args, run=None, fields: list[str] | None = None):
        super().__init__(message, *args, parameter=(fields or [""])[0])
        self.run = run
        self.fields = fields or []
