"""The errors annotation raises for a person to act on."""

from core.errors import UserbenchError


class AnnotationError(UserbenchError):
    """A request the annotator or researcher can correct; the message says how."""


class CampaignNotFound(AnnotationError):
    """No campaign has the slug asked for."""
