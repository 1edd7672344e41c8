"""The errors annotation raises for a person to act on."""

from core.errors import UserbenchError


class AnnotationError(UserbenchError):
    """A request the annotator or researcher can correct; the message says how."""


class CampaignSlugTaken(AnnotationError):
    """The slug asked for is some campaign's (in this workspace or another: the words are the
    same, core/slugs.py); `proposal` is free. The API answers it as `proposed_slug`."""

    def __init__(self, message: str, *, proposal: str):
        super().__init__(message)
        self.proposal = proposal
        self.api_fields = {"proposed_slug": proposal}


class CampaignTitleTaken(AnnotationError):
    """Another campaign of the same workspace has the title (titles are unique there only)."""


class CampaignNotFound(AnnotationError):
    """No campaign has the slug asked for."""
