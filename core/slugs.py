"""The links handed to people outside: a study's participant link /study/<slug>/ and a campaign's
annotator link /annotate/<slug>/. They are unique across the server (a link names one thing
whoever follows it), unlike the names a team chooses, which are unique within its workspace.

So that a slug is no name another team can probe, a taken one is answered with a free proposal
(the slug with a short random suffix), in words that are the same whoever holds the slug, in
this workspace or another, and that say nothing else about it. A random suffix is also how a
researcher makes a participant link hard to guess (README, "Links handed out stay unique")."""

from __future__ import annotations

import secrets

from django.db.models import Model
from django.utils.translation import gettext as _

from core.errors import UserbenchError

# Lower-case letters and digits without the look-alikes (l, o, 0, 1): read aloud or retyped safely.
SUFFIX_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
# 32**6: about a billion suffixes per slug; a proposal is checked free before it is offered.
SUFFIX_LENGTH = 6


class SlugTaken(UserbenchError):
    """The slug asked for is used by some object of its kind; `proposal` is a free one."""

    def __init__(self, *, slug: str, proposal: str):
        super().__init__(
            _("The link name %(slug)s is taken. %(proposal)s is free: keep it or choose another.")
            % {"slug": repr(slug), "proposal": proposal}
        )
        self.slug = slug
        self.proposal = proposal
        # What the API adds to its 400 (core/api.py).
        self.api_fields = {"proposed_slug": proposal}


def slug_with_suffix(slug: str, *, max_length: int) -> str:
    """`slug` with a random suffix ("pilot" -> "pilot-k3x9tq"), cut to fit `max_length`."""
    suffix = "-" + "".join(secrets.choice(SUFFIX_ALPHABET) for _ in range(SUFFIX_LENGTH))
    stem = slug.strip("-")[: max_length - len(suffix)].rstrip("-")
    return f"{stem}{suffix}" if stem else suffix[1:]


def slug_asked(model: type[Model], slug: str, *, max_length: int) -> str:
    """The slug a researcher asked for; one ending in a hyphen ("pilot-") asks for a random end,
    and gets a free one ("pilot-k3x9tq"): a link no one finds by trying words."""
    return slug_free(model, slug, max_length=max_length) if slug.endswith("-") else slug


def slug_check_free(model: type[Model], slug: str, *, max_length: int, exclude_pk: int | None = None) -> None:
    """SlugTaken, with a free proposal, when an object of `model` other than `exclude_pk` has
    this slug; the same answer whichever workspace holds it."""
    taken = model._default_manager.filter(slug=slug)
    if exclude_pk is not None:
        taken = taken.exclude(pk=exclude_pk)
    if taken.exists():
        raise SlugTaken(slug=slug, proposal=slug_free(model, slug, max_length=max_length))


def slug_free(model: type[Model], slug: str, *, max_length: int) -> str:
    """A slug no object of `model` has: `slug` with a random suffix (tried again on the rare clash)."""
    while True:
        proposal = slug_with_suffix(slug, max_length=max_length)
        if not model._default_manager.filter(slug=proposal).exists():
            return proposal
